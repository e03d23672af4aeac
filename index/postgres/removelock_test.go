package postgres

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/indextest"
	"github.com/semfs/semfs/internal/testserver"
)

// holdRow locks, in a transaction of its own outside semfs, the row at
// the first of paths that has one, until the returned func is called.
func holdRow(t *testing.T, dsn string, paths ...string) (release func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var p string
	if err := tx.QueryRow(ctx, `SELECT path FROM files WHERE path = ANY($1) ORDER BY path LIMIT 1 FOR UPDATE`, paths).Scan(&p); err != nil {
		t.Fatal(err)
	}
	return func() { tx.Rollback(ctx); conn.Close(ctx) }
}

// rowPaths returns the paths of the files rows at or below root.
func rowPaths(t *testing.T, s *Index, root string) []string {
	t.Helper()
	cond, args := below("path", root, 1)
	rows, err := s.pool.Query(context.Background(), `SELECT path FROM files WHERE `+cond+` ORDER BY path`, args...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// testRemoveOfRenamedRowsKeepsLockOrder: a directory's Remove, while it
// waits for a row of the directory, must not lock a row a Rename moves
// meanwhile out of path order (review 1, §4). Rows /e/-.md, /e/0.md and
// /e/1.md; an outside transaction holds /e/-.md while the Remove of /e
// starts, and a Rename of /e/0.md to /e/3.md runs; a second outside
// transaction holds the row once at /e/0.md, then the first lets go, and
// a Put of /e/1.md and /e/3.md runs. Before, the Remove had read the
// three rows in one statement and locked /e/0.md's row as moved to
// /e/3.md, after /e/-.md and before /e/1.md, while the Put held /e/1.md
// and waited for /e/3.md: PostgreSQL aborted one as a deadlock (40P01).
// Now the Remove takes the path locks of the rows it read before it
// locks them, so the Rename waits for it, and nothing is run again.
func testRemoveOfRenamedRowsKeepsLockOrder(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a, b := openStore(t, dsn), openStore(t, dsn)
	if err := a.Put(ctx, contentItem("/e/-.md", 0, 1), contentItem("/e/0.md", 0, 1), contentItem("/e/1.md", 0, 1)); err != nil {
		t.Fatal(err)
	}
	pause := func() { time.Sleep(300 * time.Millisecond) }
	releaseFirst := holdRow(t, dsn, "/e/-.md")
	removed := make(chan error, 1)
	go func() { removed <- a.Remove(ctx, "/e", true) }()
	pause()
	renamed := make(chan error, 1)
	go func() { renamed <- b.Rename(ctx, "/e/0.md", "/e/3.md") }()
	pause()
	releaseMoved := holdRow(t, dsn, "/e/0.md", "/e/3.md")
	releaseFirst()
	pause()
	put := make(chan error, 1)
	go func() { put <- b.Put(ctx, contentItem("/e/1.md", 1, 1), contentItem("/e/3.md", 1, 1)) }()
	pause()
	releaseMoved()
	for _, w := range []struct {
		name string
		c    chan error
	}{{"Remove of /e", removed}, {"Rename of /e/0.md", renamed}, {"Put", put}} {
		select {
		case err := <-w.c:
			if err != nil {
				t.Errorf("%s: %v", w.name, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s did not end", w.name)
		}
	}
	noRerun(t, a, b)
	// The Remove took every row; the Rename found nothing to move; the
	// Put wrote its two rows after them.
	if got := rowPaths(t, a, "/e"); !slices.Equal(got, []string{"/e/1.md", "/e/3.md"}) {
		t.Errorf("rows under /e: %v, want the Put's /e/1.md /e/3.md", got)
	}
}

// testRemoveTakesRowsMovedIntoIt: rows moved into a directory, or within
// it, between the Remove's first read of its rows and their path locks
// are removed with the others: the Remove finds them at paths it did not
// lock, and runs again holding the lock of all paths.
func testRemoveTakesRowsMovedIntoIt(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a, b := openStore(t, dsn), openStore(t, dsn)
	if err := a.Put(ctx, contentItem("/e/0.md", 0, 2), contentItem("/e/1.md", 0, 2), contentItem("/f/a.md", 0, 2)); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	hook := func() {
		once.Do(func() {
			if err := b.Rename(ctx, "/f/a.md", "/e/a.md"); err != nil {
				t.Error(err)
			}
			if err := b.Rename(ctx, "/e/0.md", "/e/3.md"); err != nil {
				t.Error(err)
			}
		})
	}
	a.testHookRangeRead.Store(&hook)
	if err := a.Remove(ctx, "/e", true); err != nil {
		t.Fatal(err)
	}
	a.testHookRangeRead.Store(nil)
	if got := rowPaths(t, a, "/e"); len(got) != 0 {
		t.Errorf("rows under /e after its Remove: %v, want none", got)
	}
	var n int
	if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM chunks WHERE path LIKE '/e/%'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("chunks under /e after its Remove: %d (%v), want none", n, err)
	}
	noRerun(t, a, b)
}

// testRenameRewritesLinksOfSourceMovedMeanwhile: a file's Rename
// rewrites the links of a file that was moved, between the Rename's
// first read of the rows linking to it and their path locks, to a path it
// did not read: it finds the row there and runs again holding the lock
// of all paths.
func testRenameRewritesLinksOfSourceMovedMeanwhile(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a, b := openStore(t, dsn), openStore(t, dsn)
	src := contentItem("/s.md", 0, 1)
	src.File.Links = []string{"/x.md"}
	src.TagText = index.TagText(src.File.Meta)
	if err := a.Put(ctx, src, contentItem("/x.md", 0, 1)); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	hook := func() {
		once.Do(func() {
			if err := b.Rename(ctx, "/s.md", "/a.md"); err != nil {
				t.Error(err)
			}
		})
	}
	a.testHookRangeRead.Store(&hook)
	if err := a.Rename(ctx, "/x.md", "/y.md"); err != nil {
		t.Fatal(err)
	}
	a.testHookRangeRead.Store(nil)
	f, err := a.File(ctx, "/a.md")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.Links, []string{"/y.md"}) {
		t.Errorf("links of /a.md (moved from /s.md during the rename of /x.md to /y.md): %v, want [/y.md]", f.Links)
	}
	if _, err := a.File(ctx, "/y.md"); err != nil {
		t.Errorf("/y.md after the rename: %v", err)
	}
	noRerun(t, a, b)
}

// testRemoveIf: RemoveIf shows gone the rows as another daemon committed
// them, removes only the rows gone returns (each alone), and writes
// nothing when gone fails or names a path it was not shown; a write of
// another daemon while gone decides waits and is kept.
func testRemoveIf(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a, b := openStore(t, dsn), openStore(t, dsn)
	if err := a.Put(ctx, contentItem("/a.md", 0, 2), contentItem("/b.md", 0, 2), contentItem("/c.md", 0, 2),
		contentItem("/d.md", 0, 2), contentItem("/a.md/below.md", 0, 1)); err != nil {
		t.Fatal(err)
	}
	// a's caller read /b.md earlier; b rewrites it since, restricted.
	earlier, err := a.File(ctx, "/b.md")
	if err != nil {
		t.Fatal(err)
	}
	rewritten := contentItem("/b.md", 1, 2)
	rewritten.File.Groups = []string{"finance"}
	if err := b.Put(ctx, rewritten); err != nil {
		t.Fatal(err)
	}

	var shown map[string]index.File
	late := make(chan error, 1)
	err = a.RemoveIf(ctx, []string{"/d.md", "/a.md", "/b.md", "/c.md", "/none.md", "/a.md"}, func(stored map[string]index.File) ([]string, error) {
		shown = stored
		go func() { late <- b.Put(ctx, contentItem("/d.md", 2, 1)) }()
		select {
		case err := <-late:
			t.Errorf("b's Put of /d.md committed (%v) while a's RemoveIf decided on its row", err)
			late <- err
		case <-time.After(300 * time.Millisecond):
		}
		// As a caller that keeps a row written since it read it.
		var gone []string
		for p, f := range stored {
			if p == "/b.md" && f.Task != earlier.Task {
				continue
			}
			if p != "/c.md" {
				gone = append(gone, p)
			}
		}
		return append(gone, "/none.md"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-late; err != nil {
		t.Fatal(err)
	}
	if keys := slices.Sorted(maps.Keys(shown)); !slices.Equal(keys, []string{"/a.md", "/b.md", "/c.md", "/d.md"}) {
		t.Errorf("gone was shown %v, want the rows of /a.md /b.md /c.md /d.md", keys)
	}
	if f := shown["/b.md"]; f.Task != "v1" || !slices.Equal(f.Groups, []string{"finance"}) {
		t.Errorf("gone was shown /b.md as task %q groups %v, want b's rewrite (v1, [finance])", f.Task, f.Groups)
	}
	if got := rowPaths(t, a, "/"); !slices.Equal(got, []string{"/a.md/below.md", "/b.md", "/c.md", "/d.md"}) {
		t.Errorf("rows after RemoveIf: %v, want /a.md/below.md /b.md /c.md /d.md", got)
	}
	if f, err := b.File(ctx, "/d.md"); err != nil || f.Task != "v2" {
		t.Errorf("/d.md after RemoveIf: task %q (%v), want b's later Put (v2)", f.Task, err)
	}
	var n int
	if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM chunks WHERE path = '/a.md'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("chunks of /a.md after RemoveIf: %d (%v), want none", n, err)
	}
	// Both daemons' memory dropped /a.md alone, not the row below it.
	for name, s := range map[string]*Index{"remover": a, "other": b} {
		s.refresh(ctx)
		s.tmu.RLock()
		_, removed := s.tags["/a.md"]
		_, below := s.tags["/a.md/below.md"]
		_, kept := s.tags["/b.md"]
		s.tmu.RUnlock()
		if removed || !below || !kept {
			t.Errorf("%s daemon's tag table: /a.md %v, /a.md/below.md %v, /b.md %v; want false, true, true", name, removed, below, kept)
		}
	}

	// An error from gone is returned and writes nothing.
	refused := errors.New("refused")
	err = a.RemoveIf(ctx, []string{"/c.md"}, func(map[string]index.File) ([]string, error) {
		return []string{"/c.md"}, refused
	})
	if !errors.Is(err, refused) {
		t.Errorf("RemoveIf whose gone failed = %v, want gone's error", err)
	}
	// A path gone was not shown is refused, and nothing is written.
	err = a.RemoveIf(ctx, []string{"/c.md"}, func(map[string]index.File) ([]string, error) {
		return []string{"/c.md", "/b.md"}, nil
	})
	if !errors.Is(err, semfs.ErrInvalid) {
		t.Errorf("RemoveIf whose gone named a path it was not shown = %v, want ErrInvalid", err)
	}
	if got := rowPaths(t, a, "/"); !slices.Equal(got, []string{"/a.md/below.md", "/b.md", "/c.md", "/d.md"}) {
		t.Errorf("rows after the refused RemoveIfs: %v, want /a.md/below.md /b.md /c.md /d.md", got)
	}
	if err := a.RemoveIf(ctx, nil, func(map[string]index.File) ([]string, error) {
		t.Error("gone called for no paths")
		return nil, nil
	}); err != nil {
		t.Errorf("RemoveIf of no paths: %v", err)
	}
	noRerun(t, a, b)
}

// testRemoveIfSeesOtherWriters runs the stores' shared check of RemoveIf
// with two daemons on one database.
func testRemoveIfSeesOtherWriters(t *testing.T, pg *testserver.Postgres) {
	indextest.RemoveIfSeesOtherWriters(t, func(t *testing.T) func() index.Store {
		dsn := freshDB(t, pg)
		return func() index.Store { return openStore(t, dsn) }
	})
}
