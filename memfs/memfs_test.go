package memfs_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/semfstest"
)

var ctx = context.Background()

func TestConformance(t *testing.T) {
	semfstest.Run(t, func(t *testing.T) semfs.FS { return memfs.New() })
}

func TestConformanceParallel(t *testing.T) {
	semfstest.Run(t, func(t *testing.T) semfs.FS { return memfs.New() }, semfstest.Parallel(), semfstest.Writers(4))
}

// TestConformanceAfterRestore runs the suite on trees that went through a
// snapshot and a restore.
func TestConformanceAfterRestore(t *testing.T) {
	seed := func(tb semfstest.TB, files map[string][]byte) semfs.FS {
		src := memfs.New()
		for p, data := range files {
			if err := src.WriteFile(ctx, p, data, 0o644); err != nil {
				tb.Fatalf("seed: %v", err)
			}
		}
		var buf bytes.Buffer
		if err := src.Snapshot(ctx, &buf); err != nil {
			tb.Fatalf("Snapshot: %v", err)
		}
		dst := memfs.New()
		if err := dst.Restore(ctx, &buf); err != nil {
			tb.Fatalf("Restore: %v", err)
		}
		return dst
	}
	// Only the cases that read seeded trees: the others do not use Seed.
	semfstest.Run(t, func(t *testing.T) semfs.FS { return memfs.New() }, semfstest.Seed(seed),
		semfstest.Only("ReadSeeded", "ImplicitDirs", "ReadDir", "ReadDirLarge", "OddNames", "OpenDirAndMissing",
			"FileInfo", "Files", "TotalSizeSeeded", "BadPaths", "BadPathsDirect", "IOFS", "CancelledRead"))
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*13 + i>>16)
	}
	return b
}

// state is every path of a tree with its contents ("/" suffix for dirs).
func state(t *testing.T, fsys semfs.FS) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := semfs.WalkDir(ctx, fsys, "/", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[p+"/"] = d.Type().String()
			return nil
		}
		data, err := semfs.ReadFile(ctx, fsys, p)
		out[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSnapshotRoundTrip(t *testing.T) {
	src := memfs.FromMap(map[string]string{
		"/a/b/c.txt":  "c",
		"/empty":      "",
		"/big.bin":    string(pattern(3*memfs.ChunkSize + 5)),
		"/ünï/码":      "\x00\xff",
		"/a.txt":      "a",
		"/deep/x/y/z": "z",
	})
	semfs.MkdirAll(ctx, src, "/emptydir/inner", 0o700)
	// A sparse file: a hole, then bytes.
	f, err := src.OpenFile(ctx, "/sparse", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("end"), 5*memfs.ChunkSize)
	f.Close()

	var buf bytes.Buffer
	if err := src.Snapshot(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	dst := memfs.FromMap(map[string]string{"/old": "replaced by the restore"})
	if err := dst.Restore(ctx, bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	want, got := state(t, src), state(t, dst)
	if !maps.Equal(want, got) {
		t.Fatalf("restored tree differs:\nwant keys %q\ngot keys  %q", slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got)))
	}
	ws, _ := src.TotalSize(ctx)
	gs, _ := dst.TotalSize(ctx)
	if ws != gs || gs != int64(1+0+3*memfs.ChunkSize+5+2+1+1+5*memfs.ChunkSize+3) {
		t.Errorf("TotalSize after restore = %d; source %d", gs, ws)
	}
	for _, p := range []string{"/a/b/c.txt", "/emptydir/inner", "/sparse"} {
		a, _ := src.Stat(ctx, p)
		b, _ := dst.Stat(ctx, p)
		if a.Mode() != b.Mode() || !a.ModTime().Equal(b.ModTime()) {
			t.Errorf("%s: mode/mtime %v %v restored as %v %v", p, a.Mode(), a.ModTime(), b.Mode(), b.ModTime())
		}
	}
	// A second snapshot of the restored tree is byte-identical.
	var again bytes.Buffer
	if err := dst.Snapshot(ctx, &again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Errorf("snapshot of the restored tree differs from the original snapshot (%d vs %d bytes)", again.Len(), buf.Len())
	}
}

func TestRestoreValidatesBeforeReplacing(t *testing.T) {
	src := memfs.FromMap(map[string]string{"/a/b": "bb", "/c": "ccc"})
	var buf bytes.Buffer
	if err := src.Snapshot(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	corruptions := map[string][]byte{
		"empty":          nil,
		"bad magic":      append([]byte("SEMFSMEM"), good[8:]...),
		"truncated":      good[:len(good)-1],
		"no checksum":    good[:len(good)-32],
		"trailing bytes": append(slices.Clone(good), 0),
		"future version": append(append([]byte("semfsmem"), 2), good[9:]...),
	}
	for i := 8; i < len(good); i++ {
		b := slices.Clone(good)
		b[i] ^= 0x40
		corruptions[fmt.Sprintf("bit flip at %d", i)] = b
	}
	// A stream with a valid checksum but a bad path must be refused too.
	corruptions["bad path"] = resum(t, bytes.Replace(good[:len(good)-32], []byte("/a/b"), []byte("/a/."), 1))
	corruptions["child before parent"] = resum(t, bytes.Replace(good[:len(good)-32], []byte("/a/b"), []byte("/x/b"), 1))

	dst := memfs.FromMap(map[string]string{"/keep": "me"})
	before := state(t, dst)
	for name, stream := range corruptions {
		err := dst.Restore(ctx, bytes.NewReader(stream))
		var pe *fs.PathError
		if !errors.As(err, &pe) || !errors.Is(err, semfs.ErrInvalid) || !errors.Is(err, memfs.ErrCorrupt) {
			t.Errorf("%s: Restore = %v; want a *fs.PathError wrapping ErrInvalid and ErrCorrupt", name, err)
		}
	}
	if after := state(t, dst); !maps.Equal(before, after) {
		t.Fatalf("a failed restore changed the tree: %v", after)
	}
	if n, _ := dst.TotalSize(ctx); n != 2 {
		t.Errorf("TotalSize after failed restores = %d; want 2", n)
	}
}

// resum recomputes the checksum of a snapshot body.
func resum(t *testing.T, body []byte) []byte {
	t.Helper()
	sum := sha256.Sum256(body)
	return append(slices.Clone(body), sum[:]...)
}

// TestOpenReaderIsStable: a file opened with Open reads the bytes it had
// when opened, whatever is written afterwards (copy on write).
func TestOpenReaderIsStable(t *testing.T) {
	m := memfs.New()
	orig := pattern(3 * memfs.ChunkSize)
	m.WriteFile(ctx, "/f", orig, 0o644)
	r, err := m.Open(ctx, "/f")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := m.OpenFile(ctx, "/f", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteAt([]byte("XXXX"), memfs.ChunkSize+10)
	w.Truncate(100)
	w.Close()
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, orig) {
		t.Fatalf("reader opened before the writes read %d bytes (equal %v), %v", len(got), bytes.Equal(got, orig), err)
	}
	now, _ := m.ReadFile(ctx, "/f")
	if len(now) != 100 || !bytes.Equal(now, orig[:100]) {
		t.Fatalf("file after writes = %d bytes", len(now))
	}
}

// slowWriter changes the tree while a snapshot is being written.
type slowWriter struct {
	bytes.Buffer
	once func()
}

func (w *slowWriter) Write(p []byte) (int, error) {
	if w.once != nil {
		w.once()
		w.once = nil
	}
	return w.Buffer.Write(p)
}

// TestSnapshotIsPointInTime: writes made while a snapshot streams out do not
// reach it.
func TestSnapshotIsPointInTime(t *testing.T) {
	m := memfs.New()
	// Larger than the snapshot's write buffer, so the first Write reaches
	// w while the end of /f is still to be written out.
	const at = 9*memfs.ChunkSize + 5
	orig := pattern(10*memfs.ChunkSize + 7)
	m.WriteFile(ctx, "/f", orig, 0o644)
	m.WriteFile(ctx, "/g", []byte("g"), 0o644)
	sw := &slowWriter{once: func() {
		f, _ := m.OpenFile(ctx, "/f", os.O_RDWR, 0)
		f.WriteAt([]byte("CHANGED"), at)
		f.Close()
		m.Remove(ctx, "/g")
		m.WriteFile(ctx, "/h", []byte("new"), 0o644)
	}}
	if err := m.Snapshot(ctx, sw); err != nil {
		t.Fatal(err)
	}
	r := memfs.New()
	if err := r.Restore(ctx, &sw.Buffer); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.ReadFile(ctx, "/f"); !bytes.Equal(got, orig) {
		t.Errorf("snapshot caught a write made after it started")
	}
	if files, _ := semfs.FileList(ctx, r, "/"); !slices.Equal(files, []string{"/f", "/g"}) {
		t.Errorf("snapshot files = %q; want [/f /g]", files)
	}
	if got, _ := m.ReadFile(ctx, "/f"); !bytes.Equal(got[at:at+7], []byte("CHANGED")) {
		t.Errorf("the live tree lost the write made during the snapshot")
	}
}

// TestWriteAtTouchesOneChunk: a small write into a large file copies at
// most one chunk, even when the file is shared with an open reader.
func TestWriteAtTouchesOneChunk(t *testing.T) {
	m := memfs.New()
	m.WriteFile(ctx, "/big", pattern(64*memfs.ChunkSize), 0o644) // 4 MiB
	r, _ := m.Open(ctx, "/big")                                  // shares every chunk
	defer r.Close()
	w, err := m.OpenFile(ctx, "/big", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	allocated := func(fn func()) uint64 {
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		fn()
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	n := allocated(func() { w.WriteAt([]byte("x"), 32*memfs.ChunkSize+100) })
	if n > 2*memfs.ChunkSize {
		t.Errorf("a 1-byte WriteAt into a shared 4 MiB file allocated %d bytes; want at most one chunk", n)
	}
	n = allocated(func() { w.WriteAt([]byte("y"), 32*memfs.ChunkSize+101) })
	if n > 1024 {
		t.Errorf("a second 1-byte WriteAt into the now private chunk allocated %d bytes", n)
	}
	got := make([]byte, 2)
	w.ReadAt(got, 32*memfs.ChunkSize+100)
	if string(got) != "xy" {
		t.Errorf("read back %q", got)
	}
}

// TestRenameKeepsOpenHandles: a handle keeps working on a file renamed or
// removed under it; writes to a removed file do not count in TotalSize.
func TestRenameKeepsOpenHandles(t *testing.T) {
	m := memfs.New()
	m.WriteFile(ctx, "/a", []byte("12345"), 0o644)
	h, err := m.OpenFile(ctx, "/a", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := m.Rename(ctx, "/a", "/b"); err != nil {
		t.Fatal(err)
	}
	h.WriteAt([]byte("XY"), 5)
	if got, _ := m.ReadFile(ctx, "/b"); string(got) != "12345XY" {
		t.Errorf("write through a handle of a renamed file: /b = %q", got)
	}
	if n, _ := m.TotalSize(ctx); n != 7 {
		t.Errorf("TotalSize = %d; want 7", n)
	}
	m.Remove(ctx, "/b")
	h.Write([]byte("more bytes"))
	if n, _ := m.TotalSize(ctx); n != 0 {
		t.Errorf("TotalSize after writing to a removed file = %d; want 0", n)
	}
}

func TestFromMapPanicsOnConflict(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("FromMap with a file below a file did not panic")
		}
	}()
	memfs.FromMap(map[string]string{"/a": "file", "/a/b": "below a file"})
}

// TestMemoryPerFile checks the memory goal on 100k empty files: a tree of
// one million must stay under 200 MB, so each file may cost 200 bytes.
func TestMemoryPerFile(t *testing.T) {
	const n = 50_000
	perFile := heapPerFile(n)
	t.Logf("%d empty files: %.0f bytes of heap per file", n, perFile)
	if perFile > 200 {
		t.Errorf("an empty file costs %.0f bytes of heap; the budget is 200", perFile)
	}
}

// heapPerFile builds a tree of n empty files in directories of 1000 and
// returns the heap it holds per file.
func heapPerFile(n int) float64 {
	before := heapInuse()
	m := memfs.New()
	data := []byte{}
	for i := range n {
		if err := m.WriteFile(ctx, fmt.Sprintf("/d%04d/file-%07d.txt", i/1000, i), data, 0o644); err != nil {
			panic(err)
		}
	}
	after := heapInuse()
	runtime.KeepAlive(m)
	return float64(after-before) / float64(n)
}

func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestLargeDirectory exercises the block structure of big directories:
// random inserts, removes and renames, checked against a model.
func TestLargeDirectory(t *testing.T) {
	m := memfs.New()
	rng := rand.New(rand.NewPCG(1, 2))
	model := map[string]bool{}
	name := func() string { return fmt.Sprintf("n%06d", rng.IntN(1_000_000)) }
	check := func(step string) {
		t.Helper()
		want := slices.Sorted(maps.Keys(model))
		entries, err := m.ReadDir(ctx, "/big")
		if err != nil {
			t.Fatal(err)
		}
		got := make([]string, len(entries))
		for i, e := range entries {
			got[i] = e.Name()
		}
		if !slices.Equal(got, want) {
			t.Fatalf("after %s: ReadDir has %d names, model %d; equal %v", step, len(got), len(want), slices.Equal(got, want))
		}
		for _, n := range want[:min(len(want), 50)] {
			if _, err := m.Stat(ctx, "/big/"+n); err != nil {
				t.Fatalf("after %s: Stat(%s): %v", step, n, err)
			}
		}
	}
	for range 5000 {
		n := name()
		m.WriteFile(ctx, "/big/"+n, nil, 0o644)
		model[n] = true
	}
	check("random inserts")
	for range 2000 {
		n := name()
		err := m.Remove(ctx, "/big/"+n)
		if model[n] != (err == nil) {
			t.Fatalf("Remove(%s) = %v; model says present=%v", n, err, model[n])
		}
		delete(model, n)
	}
	check("random removes")
	for range 1000 {
		from, to := name(), name()
		err := m.Rename(ctx, "/big/"+from, "/big/"+to)
		if model[from] != (err == nil) {
			t.Fatalf("Rename(%s, %s) = %v; model says present=%v", from, to, err, model[from])
		}
		if err == nil && from != to {
			delete(model, from)
			model[to] = true
		}
	}
	check("random renames")
	keys := slices.Sorted(maps.Keys(model))
	for _, n := range keys {
		if err := m.Remove(ctx, "/big/"+n); err != nil {
			t.Fatal(err)
		}
		delete(model, n)
	}
	check("removing everything in order")
	if err := m.Remove(ctx, "/big"); err != nil {
		t.Fatalf("Remove of the emptied directory: %v", err)
	}
}

func TestClone(t *testing.T) {
	m := memfs.FromMap(map[string]string{"/a/b": "bb", "/c": string(pattern(3 * memfs.ChunkSize))})
	semfs.MkdirAll(ctx, m, "/empty", 0o755)
	before := state(t, m)
	c := m.Clone()
	if got := state(t, c); !maps.Equal(got, before) {
		t.Fatalf("clone differs from the original")
	}
	// Change both; each sees only its own changes.
	f, _ := c.OpenFile(ctx, "/c", os.O_RDWR, 0)
	f.WriteAt([]byte("CLONE"), memfs.ChunkSize+1)
	f.Close()
	c.WriteFile(ctx, "/only-in-clone", []byte("x"), 0o644)
	m.RemoveAll(ctx, "/a")
	if got, _ := m.ReadFile(ctx, "/c"); !bytes.Equal(got, pattern(3*memfs.ChunkSize)) {
		t.Error("a write to the clone reached the original")
	}
	if got, _ := c.ReadFile(ctx, "/a/b"); string(got) != "bb" {
		t.Error("a remove in the original reached the clone")
	}
	if ok, _ := semfs.Exists(ctx, m, "/only-in-clone"); ok {
		t.Error("a file created in the clone appears in the original")
	}
	mt, _ := m.TotalSize(ctx)
	ct, _ := c.TotalSize(ctx)
	if mt != int64(3*memfs.ChunkSize) || ct != int64(2+3*memfs.ChunkSize+1) {
		t.Errorf("TotalSize original %d, clone %d", mt, ct)
	}
	semfstest.Consistent(t, ctx, m)
	semfstest.Consistent(t, ctx, c)
}

func TestCloneConforms(t *testing.T) {
	semfstest.Run(t, func(t *testing.T) semfs.FS {
		m := memfs.FromMap(map[string]string{"/scratch": "x"})
		c := m.Clone()
		m.RemoveAll(ctx, "/") // the clone must not care
		c.Remove(ctx, "/scratch")
		return c
	}, semfstest.Writers(4))
}

// TestReadFileLargeIsAtomic: ReadFile of a large file (copied after the
// lock is released) sees one version of the file, never a mix, while
// another goroutine rewrites it in place.
func TestReadFileLargeIsAtomic(t *testing.T) {
	m := memfs.New()
	const size = 5 * memfs.ChunkSize // above the size ReadFile copies under the lock
	a, b := bytes.Repeat([]byte{'a'}, size), bytes.Repeat([]byte{'b'}, size)
	m.WriteFile(ctx, "/big", a, 0o644)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f, err := m.OpenFile(ctx, "/big", os.O_RDWR, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		for i := range 100 {
			data := a
			if i%2 == 0 {
				data = b
			}
			f.WriteAt(data, 0) // in place, one chunk at a time under one lock
		}
	}()
	for range 100 {
		got, err := m.ReadFile(ctx, "/big")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
			t.Fatalf("ReadFile returned a mix of two versions")
		}
	}
	<-done
}
