package meta_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"syscall"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/meta"
)

// TestHostFdWritesIndexed writes a file through the host descriptor of a
// handle opened for writing without O_CREATE or O_TRUNC, as the kernel does
// with FUSE passthrough: the layer sees no Write, yet the file's row gets
// the new bytes' hash at Close, and the change is reported.
func TestHostFdWritesIndexed(t *testing.T) {
	h, err := hostfs.Open(t.TempDir(), hostfs.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var changes []meta.Change
	f, ix := newFSOpts(t, h, func(o *meta.Options) {
		o.Changed = func(ctx context.Context, c meta.Change) { changes = append(changes, c) }
	})
	ctx := as("writer")
	write(t, f, ctx, "/f.txt", "old text")
	w, err := f.OpenFile(as("other"), "/f.txt", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fd, ok := semfs.HostFd(w)
	if !ok {
		t.Fatal("a hostfs file opened through the metadata layer has no host descriptor")
	}
	if _, err := syscall.Pwrite(fd, []byte("new text, longer"), 0); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rec, err := ix.File(context.Background(), "/f.txt")
	sum := sha256.Sum256([]byte("new text, longer"))
	if err != nil || rec.Hash != hex.EncodeToString(sum[:]) || rec.Size != 16 {
		t.Fatalf("row after a write through the descriptor: %+v, %v; want the new bytes' hash", rec, err)
	}
	if rec.CreatedBy != "writer" {
		t.Errorf("created_by = %q; want the first writer", rec.CreatedBy)
	}
	want := []meta.Change{{Op: meta.ChangeReplace, Path: "/f.txt"}, {Op: meta.ChangeWrite, Path: "/f.txt"}}
	if len(changes) != 2 || changes[0] != want[0] || changes[1] != want[1] {
		t.Errorf("changes = %+v; want %+v", changes, want)
	}
	changes = nil
	if err := f.MkdirAll(ctx, "/d/e", 0o755); err != nil {
		t.Fatal(err)
	}
	n, err := f.OpenFile(ctx, "/d/e/new", os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	n.Close()
	want = []meta.Change{{Op: meta.ChangeCreate, Path: "/d/e"}, {Op: meta.ChangeCreate, Path: "/d/e/new"}, {Op: meta.ChangeWrite, Path: "/d/e/new"}}
	if len(changes) != 3 || changes[0] != want[0] || changes[1] != want[1] || changes[2] != want[2] {
		t.Errorf("changes of a mkdir -p and a create = %+v; want %+v", changes, want)
	}
	changes = changes[:2]

	// A read-only open hands out the descriptor too, and is no write.
	r, err := f.OpenFile(ctx, "/f.txt", os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := semfs.HostFd(r); !ok {
		t.Error("read-only open has no host descriptor")
	}
	r.Close()
	if len(changes) != 2 {
		t.Errorf("a read-only open and close reported %+v", changes[2:])
	}
}
