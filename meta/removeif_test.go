package meta_test

// Removals decided on rows read earlier (Reconcile's of the files its
// walk did not find, a retried removal's clear of the rows a failed one
// left) keep a row another process wrote at that path in between, with
// its groups (review 1, section 2).

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/indextest"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/meta"
)

// gapStore is the SQLite index (every method) that runs a hook once
// just before a removal reaches the store (Remove or RemoveIf), or once
// after a WalkFiles: another process acting between a decision taken on
// rows read and the removal. While fail is set Remove fails, and while
// blind is set WalkFiles fails too (a busy database).
type gapStore struct {
	*sqlite.Index
	beforeRemove, afterWalk atomic.Pointer[func()]
	fail, blind             atomic.Bool
}

func (s *gapStore) run(h *atomic.Pointer[func()]) {
	if f := h.Swap(nil); f != nil {
		(*f)()
	}
}

func (s *gapStore) Remove(ctx context.Context, p string, subtree bool) error {
	if s.fail.Load() {
		return errors.New("database is locked (test)")
	}
	s.run(&s.beforeRemove)
	return s.Index.Remove(ctx, p, subtree)
}

func (s *gapStore) RemoveIf(ctx context.Context, paths []string, gone func(map[string]index.File) ([]string, error)) error {
	s.run(&s.beforeRemove)
	return s.Index.RemoveIf(ctx, paths, gone)
}

func (s *gapStore) WalkFiles(ctx context.Context, root string, fn func(index.File) error) error {
	if s.fail.Load() && s.blind.Load() {
		return errors.New("database is locked (test)")
	}
	err := s.Index.WalkFiles(ctx, root, fn)
	s.run(&s.afterWalk)
	return err
}

// openIndex returns what opens a handle of its own on the SQLite index
// db (another process's), closed when the test ends.
func openIndex(t *testing.T, db string) func() *sqlite.Index {
	return func() *sqlite.Index {
		ix, err := sqlite.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
}

// TestReconcileKeepsRowWrittenAfterWalk: a row without a file (removed
// behind the layers' backs, or a crash between the bytes and the row) is
// left to the reconcile to drop. Another process writes the file again
// and restricts it to finance after the walk passed its path, before the
// removal: its row, groups included, must stay (dropped, the next
// reconcile added the file back as a new, public row).
func TestReconcileKeepsRowWrittenAfterWalk(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := openIndex(t, filepath.Join(t.TempDir(), "index.db"))
	gap := &gapStore{Index: open()}
	reconciling, other := indextest.Layer(t, dir, gap), indextest.Layer(t, dir, open())
	app := semfs.WithPrincipal(ctx, semfs.Principal{ID: "app"})
	for _, p := range []string{"/x.md", "/stale.md"} {
		if err := other.WriteFile(app, p, []byte("old notes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	restricted := semfs.Tags{Task: "payroll", Groups: []string{"finance"}}
	var hookErr error
	ran := false
	h := func() {
		ran = true
		if hookErr = other.WriteFile(app, "/x.md", []byte("salaries\n"), 0o644); hookErr == nil {
			hookErr = other.SetTags(ctx, "/x.md", restricted)
		}
	}
	gap.beforeRemove.Store(&h)
	rep, err := reconciling.Reconcile(ctx, meta.ReconcileOptions{})
	if err != nil || hookErr != nil || !ran {
		t.Fatalf("reconcile: %v; other process: %v (ran %v)", err, hookErr, ran)
	}
	if rep.Removed != 1 {
		t.Errorf("reconcile removed %d rows, want 1 (/stale.md's)", rep.Removed)
	}
	check := func(when string) {
		t.Helper()
		row, err := open().File(ctx, "/x.md")
		if err != nil {
			t.Fatalf("%s: the file the other process wrote and restricted has no row: %v", when, err)
		}
		if !slices.Equal(row.Groups, []string{"finance"}) || row.Task != "payroll" {
			t.Errorf("%s: /x.md groups %v task %q, want [finance] payroll", when, row.Groups, row.Task)
		}
		if _, err := open().File(ctx, "/stale.md"); !errors.Is(err, semfs.ErrNotExist) {
			t.Errorf("%s: the row of /stale.md, whose file is gone: %v, want none", when, err)
		}
	}
	check("after the reconcile")
	if _, err := reconciling.Reconcile(ctx, meta.ReconcileOptions{}); err != nil {
		t.Fatal(err)
	}
	check("after the next reconcile")
	// A daemon started now (the restrictions read from the store).
	restarted := indextest.Layer(t, dir, open())
	if got, err := access.New(restarted, access.Policy{}).ReadFile(bob, "/x.md"); err == nil {
		t.Errorf("bob (not in finance) reads /x.md through a layer opened after the reconciles: %q", got)
	}
}

// TestClearRemovalKeepsRowRewrittenAtItsPath: this process removes /proj
// and the store fails to remove its rows (kept to clear before the next
// write there). Its next write below /proj clears them: between the
// clear's read of the rows and their removal, another process writes a
// file at the removed file's very path and restricts it. Its row must
// stay, groups included, and this process must keep it hidden. This
// holds whether the failed removal could read the rows it left or not
// (then the base tells a removed file's row).
func TestClearRemovalKeepsRowRewrittenAtItsPath(t *testing.T) {
	for _, blind := range []bool{false, true} {
		t.Run(map[bool]string{false: "rows-read", true: "rows-unread"}[blind], func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			data, db := filepath.Join(dir, "data"), filepath.Join(dir, "index.db")
			open := openIndex(t, db)
			gap := &gapStore{Index: open()}
			gap.blind.Store(blind)
			a, err := meta.New(hostDir(t, data), gap, meta.Options{Logger: quiet, PeerPoll: -1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { a.Close() })
			b := openPeerStack(t, data, db, meta.Options{PeerPoll: -1})

			if err := a.WriteFile(as("app"), "/proj/old.txt", []byte("old notes\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := a.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			gap.fail.Store(true)
			if err := a.RemoveAll(ctx, "/proj"); err != nil {
				t.Logf("RemoveAll: %v", err)
			}
			gap.fail.Store(false)
			if _, err := open().File(ctx, "/proj/old.txt"); err != nil {
				t.Fatalf("the failed removal's row is not left to clear: %v", err)
			}

			var hookErr error
			ran := false
			h := func() {
				ran = true
				if hookErr = b.m.WriteFile(as("peer"), "/proj/old.txt", []byte("zanzibar revenue numbers\n"), 0o644); hookErr == nil {
					if hookErr = b.m.SetTags(ctx, "/proj/old.txt", semfs.Tags{Groups: []string{"finance"}}); hookErr == nil {
						hookErr = b.m.Flush(ctx)
					}
				}
			}
			gap.afterWalk.Store(&h)
			if err := a.WriteFile(as("app"), "/proj/other.txt", []byte("other\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := a.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if hookErr != nil || !ran {
				t.Fatalf("other process: %v (ran %v)", hookErr, ran)
			}
			row, err := open().File(ctx, "/proj/old.txt")
			if err != nil || !slices.Equal(row.Groups, []string{"finance"}) {
				t.Errorf("the other process's row of /proj/old.txt after the clear: groups %v, %v; want [finance]", row.Groups, err)
			}
			if got, err := access.New(a, access.Policy{}).ReadFile(bob, "/proj/old.txt"); err == nil {
				t.Errorf("bob (not in finance) reads the other process's finance file through this process: %q", got)
			}
			if _, err := open().File(ctx, "/proj/other.txt"); err != nil {
				t.Errorf("the write that cleared has no row: %v", err)
			}
		})
	}
}
