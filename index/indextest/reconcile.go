package indextest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/meta"
)

// ReconcileNoLostUpdate runs two processes' meta layers over one tree and
// one index, as NoLostUpdate does. One reconciles files changed behind
// its back (one's bytes, another's mtime only): while its batch holds the
// rows it read, the other process tags and restricts both files. The
// other's tags and groups must survive the reconcile's write (written
// over, the groups exposed files the other restricted), and the
// reconcile's fields of the bytes must be written. It runs through the
// store's prepared update (index.PreparingStore) and through Update.
func ReconcileNoLostUpdate(t *testing.T, fresh func(t *testing.T) (open func() index.Store)) {
	for _, prepared := range []bool{true, false} {
		t.Run(map[bool]string{true: "prepared", false: "update"}[prepared], func(t *testing.T) {
			open := fresh(t)
			ctx := context.Background()
			dir := t.TempDir()
			g := Gate(open())
			var store index.Store = g
			if !prepared {
				store = struct{ index.UpdatingStore }{g} // no PrepareUpdate
			}
			reconciling, other := Layer(t, dir, store), Layer(t, dir, open())
			app := semfs.WithPrincipal(ctx, semfs.Principal{ID: "app"})
			for p, data := range map[string]string{"/x.md": "first draft\n", "/y.md": "unchanged words\n"} {
				if err := reconciling.WriteFile(app, p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// Behind the layers' backs: new bytes in x, a new mtime on y.
			v2 := []byte("second draft about kittiwakes, longer\n")
			if err := os.WriteFile(filepath.Join(dir, "x.md"), v2, 0o644); err != nil {
				t.Fatal(err)
			}
			later := time.Now().Add(time.Hour).Truncate(time.Second)
			for _, name := range []string{"x.md", "y.md"} {
				if err := os.Chtimes(filepath.Join(dir, name), later, later); err != nil {
					t.Fatal(err)
				}
			}
			restricted := semfs.Tags{Task: "audit", Groups: []string{"finance"}}
			done := make(chan error, 1)
			g.Hook(func() {
				// Where the reconcile's write holds the rows or the
				// store's write lock, the tags wait for it: let them run
				// 300 ms, then go on.
				go func() {
					err := other.SetTags(ctx, "/x.md", restricted)
					if err == nil {
						err = other.SetTags(ctx, "/y.md", restricted)
					}
					done <- err
				}()
				select {
				case err := <-done:
					done <- err
				case <-time.After(300 * time.Millisecond):
				}
			})
			rep, err := reconciling.Reconcile(ctx, meta.ReconcileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Updated != 1 || rep.Touched != 1 {
				t.Fatalf("reconcile: %+v, want x updated and y touched", rep)
			}
			if g.Pending() {
				t.Fatal("the reconcile did not read the rows through the gate")
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			check := open()
			sum := sha256.Sum256(v2)
			x, err := check.File(ctx, "/x.md")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(x.Groups, []string{"finance"}) || x.Task != "audit" || x.CreatedBy != "app" {
				t.Errorf("x after the other's tag: groups=%v task=%q created_by=%q; want [finance], audit, app", x.Groups, x.Task, x.CreatedBy)
			}
			if x.Hash != hex.EncodeToString(sum[:]) || x.Size != int64(len(v2)) || !x.ModTime.Equal(later) || x.State != index.StateIndexed {
				t.Errorf("x after the reconcile: size=%d mtime=%v state=%q hash current=%v; want the new bytes' fields",
					x.Size, x.ModTime, x.State, x.Hash == hex.EncodeToString(sum[:]))
			}
			y, err := check.File(ctx, "/y.md")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(y.Groups, []string{"finance"}) || y.Task != "audit" || !y.ModTime.Equal(later) {
				t.Errorf("y: groups=%v task=%q mtime=%v; want [finance], audit, %v", y.Groups, y.Task, y.ModTime, later)
			}
			hits, err := check.SearchChunks(ctx, index.QueryTokens("kittiwakes"), index.Filter{}, 10)
			if err != nil || len(hits) != 1 || hits[0].Path != "/x.md" {
				t.Errorf("the new bytes' words: %v %v, want /x.md", hits, err)
			}
		})
	}
}
