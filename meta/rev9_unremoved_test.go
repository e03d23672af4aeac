package meta_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/meta"
)

// hookedRemoves fails Remove while fail is set (running onFail first:
// what another process does while the removal fails), fails WalkFiles
// while blind is set, and runs afterWalk once after a WalkFiles.
type hookedRemoves struct {
	*sqlite.Index
	fail, blind *atomic.Bool
	onFail      *func()
	afterWalk   *func()
}

func (s hookedRemoves) Remove(ctx context.Context, p string, subtree bool) error {
	if s.fail.Load() {
		if f := *s.onFail; f != nil {
			*s.onFail = nil
			f()
		}
		return errors.New("database is locked (test)")
	}
	return s.Index.Remove(ctx, p, subtree)
}

// RemoveIf fails as Remove does (onFail included): the clear of a
// removal's rows removes through it.
func (s hookedRemoves) RemoveIf(ctx context.Context, paths []string, gone func(map[string]index.File) ([]string, error)) error {
	if s.fail.Load() {
		if f := *s.onFail; f != nil {
			*s.onFail = nil
			f()
		}
		return errors.New("database is locked (test)")
	}
	return s.Index.RemoveIf(ctx, paths, gone)
}

func (s hookedRemoves) WalkFiles(ctx context.Context, root string, fn func(index.File) error) error {
	if s.blind.Load() {
		return errors.New("database is locked (test)")
	}
	err := s.Index.WalkFiles(ctx, root, fn)
	if f := *s.afterWalk; f != nil {
		*s.afterWalk = nil
		f()
	}
	return err
}

type rev9Setup struct {
	a                 *meta.FS
	b                 peerStack
	ix                *sqlite.Index
	fail, blind       *atomic.Bool
	onFail, afterWalk *func()
	polled            bool // A polls for the peer's changes
}

// rev9Open opens this process (A, polling for the peer's changes every
// poll, never if negative) and the peer on one SQLite index.
func rev9Open(t *testing.T, poll time.Duration) rev9Setup {
	ctx := context.Background()
	dir := t.TempDir()
	data, db := filepath.Join(dir, "data"), filepath.Join(dir, "index.db")
	host := hostDir(t, data)
	ix, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	s := rev9Setup{ix: ix, fail: new(atomic.Bool), blind: new(atomic.Bool), onFail: new(func()), afterWalk: new(func()), polled: poll >= 0}
	s.a, err = meta.New(host, hookedRemoves{ix, s.fail, s.blind, s.onFail, s.afterWalk}, meta.Options{Logger: quiet, PeerPoll: poll})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.a.Close(); ix.Close() })
	s.b = openPeerStack(t, data, db, meta.Options{PeerPoll: -1})
	return s
}

func rev9Write(t *testing.T, m *meta.FS, who, p string, groups ...string) {
	ctx := context.Background()
	if err := m.WriteFile(as(who), p, []byte(who+"'s "+p+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if len(groups) > 0 {
		if err := m.SetTags(ctx, p, semfs.Tags{Task: who, Groups: groups}); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// rev9Check: after this process (A) writes below /proj, the peer's
// finance file at p keeps its row and groups, and bob does not read it
// through A.
func rev9Check(t *testing.T, s rev9Setup, p string) {
	ctx := context.Background()
	accA := access.New(s.a, access.Policy{})
	if err := accA.WriteFile(bob, "/proj/other.txt", []byte("bob's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.b.m.Stat(ctx, p); err != nil {
		t.Fatalf("the peer's file %s is gone from the host: %v", p, err)
	}
	if row, err := s.ix.File(ctx, p); err != nil || len(row.Meta.Groups) == 0 {
		t.Errorf("the peer's live file %s: row %+v, %v; want its row with groups [finance]", p, row.Meta.Groups, err)
	}
	if s.polled {
		// A learns of the peer's restriction at its next poll.
		waitFor(t, "A applies the peer's restriction of "+p, func() bool {
			_, err := accA.ReadFile(bob, p)
			return err != nil
		})
		return
	}
	if got, err := accA.ReadFile(bob, p); err == nil {
		t.Errorf("bob (not in finance) reads the peer's finance file %s through A: %q", p, got)
	}
}

// When a failed removal could not read the rows it left, a row another
// process renamed into the removed directory afterwards (a rename keeps
// the row's old times, as `cp -p` and Reconcile do) is not taken for a
// removed file's: its file stands in the base, so this process's next
// write there keeps the row and its restriction (review 9, R9-1a).
func TestUnreadRemovalKeepsRowRenamedIn(t *testing.T) {
	s := rev9Open(t, -1)
	ctx := context.Background()
	rev9Write(t, s.a, "app", "/proj/old.txt", "legal")
	rev9Write(t, s.b.m, "peer", "/elsewhere/secret.txt", "finance")
	s.fail.Store(true)
	s.blind.Store(true)
	if err := s.a.RemoveAll(ctx, "/proj"); err != nil {
		t.Fatal(err)
	}
	s.fail.Store(false)
	s.blind.Store(false)
	if err := semfs.MkdirAll(ctx, s.b.m, "/proj", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.b.m.Rename(ctx, "/elsewhere/secret.txt", "/proj/secret.txt"); err != nil {
		t.Fatal(err)
	}
	rev9Check(t, s, "/proj/secret.txt")
}

// A failed removal's rows are those read before the base's removal: a
// row another process writes below the path while the store's removal
// fails is not taken for a removed file's, and keeps its row and
// restriction when this process next writes there (review 9, R9-1b).
func TestFailedRemovalKeepsRowWrittenDuringIt(t *testing.T) {
	s := rev9Open(t, -1)
	ctx := context.Background()
	rev9Write(t, s.a, "app", "/proj/old.txt", "legal")
	*s.onFail = func() { rev9Write(t, s.b.m, "peer", "/proj/new.txt", "finance") }
	s.fail.Store(true)
	if err := s.a.RemoveAll(ctx, "/proj"); err != nil {
		t.Fatal(err)
	}
	s.fail.Store(false)
	rev9Check(t, s, "/proj/new.txt")
}

// Clearing a failed removal's rows removes them path by path, never the
// subtree: a row another process writes below the path between the
// clear's read of the rows and its removals stays, with its groups, and
// this process hides the file once its poller applies them (review 9,
// R9-1c).
func TestClearRemovalKeepsRowWrittenAfterItsRead(t *testing.T) {
	s := rev9Open(t, 20*time.Millisecond)
	ctx := context.Background()
	rev9Write(t, s.a, "app", "/proj/old.txt", "legal")
	s.fail.Store(true)
	if err := s.a.RemoveAll(ctx, "/proj"); err != nil {
		t.Fatal(err)
	}
	s.fail.Store(false)
	*s.afterWalk = func() { rev9Write(t, s.b.m, "peer", "/proj/new.txt", "finance") }
	rev9Check(t, s, "/proj/new.txt")
}

// While the rows a failed removal left cannot be read, a write below its
// path fails with an error that says to retry, and the file is not
// written (the base must still tell the removed files' rows from
// others'); once they can be read, the write succeeds and the file has a
// row of its own (review 9, R9-1a).
func TestUnreadRemovalRefusesWritesUntilRowsRead(t *testing.T) {
	s := rev9Open(t, -1)
	ctx := context.Background()
	rev9Write(t, s.a, "app", "/proj/old.txt", "legal")
	s.fail.Store(true)
	s.blind.Store(true)
	if err := s.a.RemoveAll(ctx, "/proj"); err != nil {
		t.Fatal(err)
	}
	err := s.a.WriteFile(as("bob"), "/proj/old.txt", []byte("bob's\n"), 0o644)
	var pe *fs.PathError
	if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), "retry") {
		t.Errorf("write below the removed /proj while its rows cannot be read: %v; want a path error saying to retry", err)
	}
	if _, err := s.b.m.Stat(ctx, "/proj/old.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused write's file in the base: %v; want none", err)
	}
	s.fail.Store(false)
	s.blind.Store(false)
	if err := s.a.WriteFile(as("bob"), "/proj/old.txt", []byte("bob's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	row, err := s.a.Meta(ctx, "/proj/old.txt")
	if err != nil || row.CreatedBy != "bob" || len(row.Groups) != 0 {
		t.Errorf("bob's file at the removed file's path: created_by=%q groups=%v, %v; want bob, no groups", row.CreatedBy, row.Groups, err)
	}
}
