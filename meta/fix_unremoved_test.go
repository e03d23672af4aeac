package meta_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/meta"
)

// blindRemoves fails Remove while fail is set and, with walk set, reads
// of rows below a path too (the store cannot be read at all).
type blindRemoves struct {
	*sqlite.Index
	fail, walk *atomic.Bool
}

func (s blindRemoves) Remove(ctx context.Context, p string, subtree bool) error {
	if s.fail.Load() {
		return errors.New("database is locked (test)")
	}
	return s.Index.Remove(ctx, p, subtree)
}

// RemoveIf fails as Remove does: the clear of a removal's rows removes
// through it.
func (s blindRemoves) RemoveIf(ctx context.Context, paths []string, gone func(map[string]index.File) ([]string, error)) error {
	if s.fail.Load() {
		return errors.New("database is locked (test)")
	}
	return s.Index.RemoveIf(ctx, paths, gone)
}

func (s blindRemoves) WalkFiles(ctx context.Context, root string, fn func(index.File) error) error {
	if s.fail.Load() && s.walk.Load() {
		return errors.New("database is locked (test)")
	}
	return s.Index.WalkFiles(ctx, root, fn)
}

// After a removal whose rows the store kept, the rows another process
// wrote below the removed path meanwhile stay, with their groups, when
// this process next writes there: a file it saved again at the removed
// file's path, and a new file; and they stay hidden through this process
// although its poller never ran (the restrictions are read from the
// store). The removed file's row still goes: a file written at its path
// by this process starts a row of its own (review 6, R4). This holds
// whether the failed removal could read the rows it left or not (then
// rows at whose paths a file stands are the others').
func TestClearUnremovedKeepsOtherProcessesRows(t *testing.T) {
	for _, blind := range []bool{false, true} {
		t.Run(map[bool]string{false: "rows-read", true: "rows-unread"}[blind], func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			data, db := filepath.Join(dir, "data"), filepath.Join(dir, "index.db")
			host := hostDir(t, data)
			ix, err := sqlite.Open(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			var fail, walk atomic.Bool
			walk.Store(blind)
			a, err := meta.New(host, blindRemoves{ix, &fail, &walk}, meta.Options{Logger: quiet, PeerPoll: -1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { a.Close(); ix.Close() })
			b := openPeerStack(t, data, db, meta.Options{PeerPoll: -1})

			for _, p := range []string{"/proj/kept.txt", "/proj/mine.txt", "/proj/gone.txt"} {
				if err := a.WriteFile(as("app"), p, []byte("old "+p+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := a.SetTags(ctx, p, semfs.Tags{Groups: []string{"legal"}}); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			fail.Store(true)
			if err := a.RemoveAll(ctx, "/proj"); err != nil {
				t.Fatal(err)
			}
			fail.Store(false)

			// The other process writes at a removed file's path, and a
			// new file, and restricts both.
			for _, p := range []string{"/proj/kept.txt", "/proj/new.txt"} {
				if err := b.m.WriteFile(as("peer"), p, []byte("peer's "+p+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := b.m.SetTags(ctx, p, semfs.Tags{Task: "peer", Groups: []string{"finance"}}); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.m.Flush(ctx); err != nil {
				t.Fatal(err)
			}

			// This process writes at another removed file's path.
			accA := access.New(a, access.Policy{})
			if err := accA.WriteFile(bob, "/proj/mine.txt", []byte("bob's\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := a.Flush(ctx); err != nil {
				t.Fatal(err)
			}

			for _, p := range []string{"/proj/kept.txt", "/proj/new.txt"} {
				row, err := b.m.Meta(ctx, p)
				if err != nil || row.Task != "peer" || !slices.Equal(row.Groups, []string{"finance"}) {
					t.Errorf("the other process's row of %s after this one wrote below /proj: task=%q groups=%v, %v; want peer, finance", p, row.Task, row.Groups, err)
				}
				if got, err := accA.ReadFile(bob, p); err == nil {
					t.Errorf("bob (not in finance) reads the other process's %s through this one: %q", p, got)
				}
			}
			row, err := a.Meta(ctx, "/proj/mine.txt")
			if err != nil || row.CreatedBy != "bob" || len(row.Groups) != 0 {
				t.Errorf("row of bob's file at a removed file's path: created_by=%q groups=%v, %v; want bob, no groups", row.CreatedBy, row.Groups, err)
			}
			if got, err := accA.ReadFile(bob, "/proj/mine.txt"); err != nil || string(got) != "bob's\n" {
				t.Errorf("bob reads the file he wrote: %q, %v", got, err)
			}
			if _, err := ix.File(ctx, "/proj/gone.txt"); !errors.Is(err, semfs.ErrNotExist) {
				t.Errorf("row of the removed /proj/gone.txt: %v; want it removed", err)
			}
		})
	}
}
