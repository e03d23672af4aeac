package semfstest

import (
	"bytes"
	"fmt"

	"github.com/semfs/semfs"
)

// testSnapshot checks SnapshotFS where the tree has it: a restore brings
// back exactly what the snapshot saw, into the same tree or a new one, and a
// damaged stream is refused with the tree left as it was.
func testSnapshot(e *env) {
	fsys := e.empty()
	s, ok := fsys.(semfs.SnapshotFS)
	if !ok {
		return // nothing to check: the capability is optional
	}
	files := fixture()
	for p, v := range files {
		e.write(fsys, p, v)
	}
	e.mkdirAll(fsys, "/emptydir/inner")
	saved := e.state(fsys)
	var buf bytes.Buffer
	if err := s.Snapshot(e.ctx, &buf); err != nil {
		e.Fatalf("Snapshot: %v", err)
	}
	stream := bytes.Clone(buf.Bytes())

	// Change the tree, then restore.
	e.write(fsys, "/docs/a.md", "changed")
	e.write(fsys, "/added", "added")
	if err := semfs.RemoveAll(e.ctx, fsys, "/bin"); err != nil {
		e.Fatalf("RemoveAll: %v", err)
	}
	if err := s.Restore(e.ctx, bytes.NewReader(stream)); err != nil {
		e.Fatalf("Restore: %v", err)
	}
	e.sameState(fsys, saved, "Restore")
	var want int64
	for _, v := range files {
		want += int64(len(v))
	}
	if n := e.totalSize(fsys); n != want {
		e.Errorf("TotalSize after Restore = %d; want %d", n, want)
	}

	// A new tree restores the same stream.
	other, ok := e.empty().(semfs.SnapshotFS)
	if !ok {
		e.Fatalf("newFS returned trees of different capabilities")
	}
	if err := other.Restore(e.ctx, bytes.NewReader(stream)); err != nil {
		e.Fatalf("Restore into a new tree: %v", err)
	}
	e.sameState(other, saved, "Restore into a new tree")

	// Damaged streams are refused before anything changes.
	e.write(fsys, "/after", "written after the snapshot")
	before := e.state(fsys)
	damaged := map[string][]byte{
		"an empty stream":            nil,
		"garbage":                    []byte("this is not a snapshot of anything"),
		"a stream cut in half":       stream[:len(stream)/2],
		"a stream short by one byte": stream[:len(stream)-1],
	}
	flipped := bytes.Clone(stream)
	flipped[len(flipped)/2] ^= 0x01
	damaged["a stream with one bit flipped"] = flipped
	for what, d := range damaged {
		err := s.Restore(e.ctx, bytes.NewReader(d))
		if err == nil {
			e.Errorf("Restore of %s succeeded", what)
			continue
		}
		e.checkShape(err, fmt.Sprintf("Restore of %s", what))
	}
	e.sameState(fsys, before, "refused restores")
	if n, want := e.totalSize(fsys), sumState(before); n != want {
		e.Errorf("TotalSize after refused restores = %d; want %d", n, want)
	}
}

func sumState(st map[string]entry) int64 {
	var n int64
	for _, v := range st {
		n += int64(len(v.data))
	}
	return n
}
