package meta_test

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/meta"
)

// hookedBase runs a hook once, the first time Reconcile opens path: the
// moment between a file being read and its row being stored.
type hookedBase struct {
	*memfs.FS
	path string
	once sync.Once
	hook func()
}

func (b *hookedBase) ReadFile(ctx context.Context, name string) ([]byte, error) {
	data, err := b.FS.ReadFile(ctx, name)
	if err == nil && name == b.path && b.hook != nil {
		b.once.Do(b.hook)
	}
	return data, err
}

func (b *hookedBase) Open(ctx context.Context, name string) (fs.File, error) {
	f, err := b.FS.Open(ctx, name)
	if err == nil && name == b.path && b.hook != nil {
		b.once.Do(b.hook)
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
