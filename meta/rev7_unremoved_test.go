package meta_test

// Rows another process writes below a path whose store removal failed
// are kept when this process clears the removed files' rows (review 7,
// R5).

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/meta"
)

// failingRemoves is the SQLite index (every method, PeerStore included)
// with Remove failing while fail is set (a busy or full database).
type failingRemoves struct {
	*sqlite.Index
	fail *atomic.Bool
}

func (s failingRemoves) Remove(ctx context.Context, p string, subtree bool) error {
	if s.fail.Load() {
		return errors.New("database is locked (test)")
	}
	return s.Index.Remove(ctx, p, subtree)
}

// RemoveIf fails as Remove does: the clear of a removal's rows removes
// through it.
func (s failingRemoves) RemoveIf(ctx context.Context, paths []string, gone func(map[string]index.File) ([]string, error)) error {
	if s.fail.Load() {
		return errors.New("database is locked (test)")
	}
	return s.Index.RemoveIf(ctx, paths, gone)
}

// TestClearUnremovedKeepsPeerRows: daemon A removes /proj, and the
// store fails to remove its rows (remembered in A's unremoved set). Another
// process on the same index (a second daemon, the CLI) then creates
// /proj/new.txt there and restricts it to finance; A's poller applies the
// restriction. A's next save anywhere below /proj runs clearUnremoved,
// which removes every row below /proj — the other process's live,
// restricted row included — and drops A's in-memory restriction below
// /proj (vis.drop): the finance file becomes readable by everyone through
// A, and its groups are gone from the shared index.
func TestClearUnremovedKeepsPeerRows(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, db := filepath.Join(dir, "data"), filepath.Join(dir, "index.db")
	host := hostDir(t, data)
	ix, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var fail atomic.Bool
	a, err := meta.New(host, failingRemoves{ix, &fail}, meta.Options{Logger: quiet, PeerPoll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); ix.Close() })
	b := openPeerStack(t, data, db, meta.Options{PeerPoll: -1})

	if err := a.WriteFile(as("app"), "/proj/old.txt", []byte("old notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	if err := a.RemoveAll(ctx, "/proj"); err != nil {
		t.Logf("RemoveAll: %v", err)
	}
	fail.Store(false)

	// The other process creates a finance file below /proj.
	if err := b.m.WriteFile(as("peer"), "/proj/new.txt", []byte("zanzibar revenue numbers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.m.SetTags(ctx, "/proj/new.txt", semfs.Tags{Groups: []string{"finance"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	accA := access.New(a, access.Policy{})
	waitFor(t, "A applies the peer's restriction of /proj/new.txt", func() bool {
		_, err := accA.ReadFile(bob, "/proj/new.txt")
		return err != nil
	})

	// Any save below /proj on A.
	if err := a.WriteFile(as("app"), "/proj/other.txt", []byte("other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := accA.ReadFile(bob, "/proj/new.txt"); err == nil {
		t.Errorf("bob (not in finance) reads the peer's finance file through A after A's save below /proj: %q", got)
	}
	row, err := b.m.Meta(ctx, "/proj/new.txt")
	if err != nil || len(row.Groups) == 0 {
		t.Errorf("the peer's row of its live file /proj/new.txt after A's save: groups=%v, %v; want finance (A's clearUnremoved removed it)", row.Groups, err)
	}
}
