package meta_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync/atomic"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/meta"
)

// hookedBase runs a hook once, the first time Reconcile opens path: the
// moment between a file being read and its row being stored. The hook may
// read path itself (it does not run again).
type hookedBase struct {
	*memfs.FS
	path  string
	fired atomic.Bool
	hook  func()
}

func (b *hookedBase) ReadFile(ctx context.Context, name string) ([]byte, error) {
	data, err := b.FS.ReadFile(ctx, name)
	if err == nil && name == b.path && b.hook != nil && b.fired.CompareAndSwap(false, true) {
		b.hook()
	}
	return data, err
}

func (b *hookedBase) Open(ctx context.Context, name string) (fs.File, error) {
	f, err := b.FS.Open(ctx, name)
	if err == nil && name == b.path && b.hook != nil && b.fired.CompareAndSwap(false, true) {
		b.hook()
	}
	return f, err
}

// TestReconcileKeepsLayerChanges: a file removed, or rewritten, through the
// layer while Reconcile had it in hand keeps the layer's outcome — the
// removed file does not come back, the rewritten one keeps its new bytes.
func TestReconcileKeepsLayerChanges(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		known   bool // the layer indexed the file before it changed behind it
		rewrite bool // the hook rewrites through the layer instead of removing
	}{
		{"new file removed", false, false},
		{"changed file removed", true, false},
		{"changed file rewritten", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := &hookedBase{FS: memfs.New(), path: "/x.md"}
			f, ix := newFS(t, base)
			if c.known {
				write(t, f, as("app"), "/x.md", "first words\n")
			}
			// Changed behind the layer: Reconcile must pick it up...
			if err := base.FS.WriteFile(ctx, "/x.md", []byte("changed behind the layer\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// ...while the layer changes it again once Reconcile has read it.
			base.hook = func() {
				var err error
				if c.rewrite {
					err = f.WriteFile(as("app"), "/x.md", []byte("rewritten through the layer\n"), 0o644)
				} else {
					err = f.Remove(ctx, "/x.md")
				}
				if err != nil {
					t.Error(err)
				}
			}
			if _, err := f.Reconcile(ctx, meta.ReconcileOptions{}); err != nil {
				t.Fatal(err)
			}
			rec, err := ix.File(ctx, "/x.md")
			if !c.rewrite {
				if !errors.Is(err, semfs.ErrNotExist) {
					t.Fatalf("removed file has a row again: %+v, %v", rec, err)
				}
				return
			}
			data, _ := semfs.ReadFile(ctx, base.FS, "/x.md")
			if err != nil || rec.Size != int64(len(data)) || string(data) != "rewritten through the layer\n" {
				t.Fatalf("row %+v (%v) for bytes %q", rec, err, data)
			}
		})
	}
}

// closeWriteFrom is closeWrite for a goroutine other than the test's: it
// reports a failure with t.Error.
func closeWriteFrom(t *testing.T, f *meta.FS, ctx context.Context, p, data string) {
	w, err := f.OpenFile(ctx, p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err == nil {
		_, err = w.Write([]byte(data))
		err = errors.Join(err, w.Close())
	}
	if err != nil {
		t.Error(err)
	}
}

// A deferred close that read the file before Reconcile did, and is
// committed after Reconcile stored the file's row, must not put its older
// bytes back; the close's writer still names the file (created_by).
func TestReconcileBeforeOlderDeferredClose(t *testing.T) {
	base := &hookFS{FS: memfs.New()}
	f, ix := newFSOpts(t, base, deferred(longDelay))
	bg := context.Background()
	closeWrite(t, f, as("a"), "/r/x.txt", "closed bytes\n")
	var fired atomic.Bool
	fn := func(name string) {
		// The committer has read the closed bytes (prepareSave closes its
		// handle) and not committed them: the file changes behind the
		// layer and Reconcile stores the new bytes first.
		if name != "/r/x.txt" || !fired.CompareAndSwap(false, true) {
			return
		}
		if err := base.FS.WriteFile(bg, "/r/x.txt", []byte("changed behind the layer\n"), 0o644); err != nil {
			t.Error(err)
		}
		if _, err := f.Reconcile(bg, meta.ReconcileOptions{}); err != nil {
			t.Error(err)
		}
	}
	base.hook.Store(&fn)
	if err := f.Flush(bg); err != nil {
		t.Fatal(err)
	}
	if !fired.Load() {
		t.Fatal("the committer never read /r/x.txt")
	}
	data, _ := base.FS.ReadFile(bg, "/r/x.txt")
	r, err := ix.File(bg, "/r/x.txt")
	if err != nil || r.Hash != hashHex(string(data)) || r.Size != int64(len(data)) {
		t.Fatalf("file holds %q; row %+v (%v) holds the closed bytes: %v", data, r, err, r.Hash == hashHex("closed bytes\n"))
	}
	if r.CreatedBy != "a" {
		t.Fatalf("created_by %q, want the closing writer a", r.CreatedBy)
	}
}

// A deferred close that read the file after Reconcile did, and was
// committed before Reconcile stored its batch, keeps its bytes in the row,
// even when they are the bytes the row held when Reconcile walked it.
func TestReconcileAfterNewerDeferredClose(t *testing.T) {
	base := &hookedBase{FS: memfs.New(), path: "/r/x.txt"}
	f, ix := newFSOpts(t, base, deferred(longDelay))
	bg := context.Background()
	write(t, f, as("a"), "/r/x.txt", "first bytes\n")
	if err := base.FS.WriteFile(bg, "/r/x.txt", []byte("changed behind the layer\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base.hook = func() {
		// Reconcile has read the changed bytes: the layer writes the
		// first bytes again and stores the close at once.
		closeWriteFrom(t, f, as("a"), "/r/x.txt", "first bytes\n")
		if err := f.Flush(bg); err != nil {
			t.Error(err)
		}
	}
	if _, err := f.Reconcile(bg, meta.ReconcileOptions{}); err != nil {
		t.Fatal(err)
	}
	if !base.fired.Load() {
		t.Fatal("Reconcile never read /r/x.txt")
	}
	data, _ := base.FS.ReadFile(bg, "/r/x.txt")
	r, err := ix.File(bg, "/r/x.txt")
	if err != nil || string(data) != "first bytes\n" || r.Hash != hashHex(string(data)) || r.Size != int64(len(data)) {
		t.Fatalf("file holds %q; row %+v (%v)", data, r, err)
	}
}
