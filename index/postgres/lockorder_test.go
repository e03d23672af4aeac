package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/internal/testserver"
)

// The tests here run two writers that take overlapping locks at once, many
// times, and fail on any error: before every writer followed the lock
// order of pathLocks, PostgreSQL aborted one of them as a deadlock (40P01).
// write now runs such a transaction again, so they also fail when one was
// (noRerun).

// noRerun fails t if PostgreSQL aborted a write of any of stores as a
// deadlock, which write then ran again: semfs's writers must not wait for
// each other in a cycle.
func noRerun(t *testing.T, stores ...*Index) {
	t.Helper()
	for i, s := range stores {
		if n := s.rerun.Load(); n > 0 {
			t.Errorf("store %d: %d write(s) aborted as a deadlock and run again; the writers' lock order is broken", i, n)
		}
	}
}

// contentItem is a file of chunks whose texts name the path, the version
// v and the chunk number.
func contentItem(p string, v, chunks int) index.Item {
	m := semfs.Meta{Path: p, CreatedBy: "w", Tags: semfs.Tags{Task: "v" + strconv.Itoa(v)}}
	c := &index.Content{GrepOK: true, Grep: fmt.Sprintf("%s version %d", p, v)}
	for no := range chunks {
		c.Chunks = append(c.Chunks, index.Chunk{No: no, StartLine: no + 1, EndLine: no + 1, Text: fmt.Sprintf("v%d chunk %d of %s", v, no, p)})
	}
	return index.Item{File: index.File{Meta: m, State: index.StateIndexed}, TagText: index.TagText(m), Content: c}
}

// testRebuildAmongWriters: one daemon rebuilds the derived tables
// (MarkAllPending, Check with repair) and wipes the vectors while another
// puts, updates, removes and stores embeddings of overlapping files. Every
// write commits, and the derived data is whole afterwards.
func testRebuildAmongWriters(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a, b := openStore(t, dsn), openStore(t, dsn)
	var paths []string
	for i := range 16 {
		paths = append(paths, fmt.Sprintf("/r/%02d.md", i))
	}
	var seed []index.Item
	for _, p := range paths {
		seed = append(seed, contentItem(p, 0, 4))
	}
	if err := b.Put(ctx, seed...); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 100)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 2))
			for v := 1; ; v++ {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				switch r.IntN(4) {
				case 0:
					var items []index.Item
					for range 3 {
						items = append(items, contentItem(paths[r.IntN(len(paths))], v, 4))
					}
					err = b.Put(ctx, items...)
				case 1:
					ps := []string{paths[r.IntN(len(paths))], paths[r.IntN(len(paths))]}
					err = b.Update(ctx, ps, func(map[string]index.File) ([]index.Item, error) {
						return []index.Item{contentItem(ps[0], v, 4), contentItem(ps[1], v, 4)}, nil
					})
				case 2:
					err = b.Remove(ctx, paths[r.IntN(len(paths))], false)
				case 3:
					space := []string{embedding.SpaceTags, embedding.SpaceContent}[r.IntN(2)]
					var rows []embedding.Pending
					if rows, err = b.NeedingEmbedding(ctx, space, "", 50); err == nil && len(rows) > 0 {
						vecs := make([][]float32, len(rows))
						for i := range vecs {
							vecs[i] = []float32{1, 0}
						}
						err = b.SetEmbeddings(ctx, space, rows, vecs)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 12 {
		var err error
		switch i % 3 {
		case 0:
			err = a.MarkAllPending(ctx)
		case 1:
			// Check repairs only what it finds wrong: a stale version
			// marker makes it rebuild.
			if _, err = a.pool.Exec(ctx, `UPDATE kv SET value = '0' WHERE key = 'derived_version'`); err == nil {
				var r index.CheckReport
				if r, err = a.Check(ctx, true); err == nil && !r.Repaired {
					err = errors.New("Check found nothing to repair under a stale derived_version")
				}
			}
		case 2:
			err = a.WipeVectors(ctx, []string{embedding.SpaceTags, embedding.SpaceContent}[i%2])
		}
		if err != nil {
			t.Errorf("rebuild %d among writers: %v", i, err)
			break
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a write during a rebuild failed: %v", err)
	}
	r, err := a.Check(ctx, false)
	if err != nil || len(r.Problems) > 0 {
		t.Errorf("after the rebuilds: problems %v, %v", r.Problems, err)
	}
	noRerun(t, a, b)
}

// testChunkRowsInKeyOrder: a Put replaces the chunks of two files while
// the drain stores vectors of those chunks, a batch in key order. The
// files /n and "/n x" sort one way by path ("/n" first) and the other way
// by chunk key ("/n x#…" before "/n#…", a space sorting before '#'), so a
// Put that deleted each file's chunks in path order waited for the batch
// holding the chunks of "/n x" while the batch waited for the chunks of
// /n it held. Every write commits, and no chunk keeps a vector of a text
// it no longer has.
func testChunkRowsInKeyOrder(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a, b := openStore(t, dsn), openStore(t, dsn)
	paths := []string{"/n", "/n x"}
	put := func(v int) error {
		return a.Put(ctx, contentItem(paths[0], v, 30), contentItem(paths[1], v, 30))
	}
	if err := put(0); err != nil {
		t.Fatal(err)
	}
	for v := 1; v <= 30; v++ {
		rows, err := b.NeedingEmbedding(ctx, embedding.SpaceContent, "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 60 || !strings.HasPrefix(rows[0].Key, "/n x#") {
			t.Fatalf("round %d: %d rows need a vector, the first %q; want the 60 chunks, those of \"/n x\" first", v, len(rows), rows[0].Key)
		}
		vecs := make([][]float32, len(rows))
		for i := range vecs {
			vecs[i] = []float32{float32(v - 1), 1} // the version of the text read
		}
		var wg sync.WaitGroup
		var putErr, setErr error
		wg.Go(func() { setErr = b.SetEmbeddings(ctx, embedding.SpaceContent, rows, vecs) })
		wg.Go(func() { putErr = put(v) })
		wg.Wait()
		if putErr != nil || setErr != nil {
			t.Fatalf("round %d: Put: %v; vector batch: %v", v, putErr, setErr)
		}
		// The Put changed every text, so none may keep a vector.
		var stale int
		if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM chunks WHERE fresh OR vec IS NOT NULL`).Scan(&stale); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM chunks WHERE text LIKE $1`, fmt.Sprintf("v%d chunk %%", v)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if stale != 0 || n != 60 {
			t.Fatalf("round %d: %d chunks hold a vector of an older text, %d of 60 hold the Put's text", v, stale, n)
		}
	}
	noRerun(t, a, b)
}

// testRenameAmongVectorBatches: a Rename moves a directory holding /d/n
// and "/d/n x" (their chunks' keys in the other order, see
// testChunkRowsInKeyOrder) while the drain stores vectors of their chunks
// in key order. The Rename locks the chunks it moves in key order too;
// before, it updated them a file at a time in path order, and one of the
// two was aborted as a deadlock. Every chunk moves with its file.
func testRenameAmongVectorBatches(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a, b := openStore(t, dsn), openStore(t, dsn)
	if err := a.Put(ctx, contentItem("/d/n", 0, 30), contentItem("/d/n x", 0, 30)); err != nil {
		t.Fatal(err)
	}
	dirs := []string{"/d", "/e"}
	for round := range 30 {
		from, to := dirs[round%2], dirs[(round+1)%2]
		if _, err := a.pool.Exec(ctx, `UPDATE chunks SET vec = NULL, fresh = false`); err != nil {
			t.Fatal(err)
		}
		rows, err := b.NeedingEmbedding(ctx, embedding.SpaceContent, "", 1000)
		if err != nil || len(rows) != 60 {
			t.Fatalf("round %d: %d rows need a vector (%v), want 60", round, len(rows), err)
		}
		vecs := make([][]float32, len(rows))
		for i := range vecs {
			vecs[i] = []float32{1, 0}
		}
		var wg sync.WaitGroup
		var renameErr, setErr error
		wg.Go(func() { setErr = b.SetEmbeddings(ctx, embedding.SpaceContent, rows, vecs) })
		wg.Go(func() { renameErr = a.Rename(ctx, from, to) })
		wg.Wait()
		if renameErr != nil || setErr != nil {
			t.Fatalf("round %d: Rename: %v; vector batch: %v", round, renameErr, setErr)
		}
		var moved, left int
		if err := a.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE path LIKE $1), count(*) FILTER (WHERE path LIKE $2) FROM chunks`, to+"/%", from+"/%").Scan(&moved, &left); err != nil {
			t.Fatal(err)
		}
		if moved != 60 || left != 0 {
			t.Fatalf("round %d: %d of 60 chunks moved to %s, %d left in %s", round, moved, to, left, from)
		}
	}
	noRerun(t, a, b)
}

// testRemoveAmongVectorBatches: a Remove of a directory holding /d/n and
// "/d/n x" while the drain stores vectors of their chunks in key order.
// The Remove deletes the chunks in key order too; before, it deleted them
// a file at a time in path order, and one of the two was aborted as a
// deadlock. No chunk of a removed file is left.
func testRemoveAmongVectorBatches(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a, b := openStore(t, dsn), openStore(t, dsn)
	for round := range 30 {
		if err := a.Put(ctx, contentItem("/d/n", round, 30), contentItem("/d/n x", round, 30)); err != nil {
			t.Fatal(err)
		}
		rows, err := b.NeedingEmbedding(ctx, embedding.SpaceContent, "", 1000)
		if err != nil || len(rows) != 60 {
			t.Fatalf("round %d: %d rows need a vector (%v), want 60", round, len(rows), err)
		}
		vecs := make([][]float32, len(rows))
		for i := range vecs {
			vecs[i] = []float32{1, 0}
		}
		var wg sync.WaitGroup
		var removeErr, setErr error
		wg.Go(func() { setErr = b.SetEmbeddings(ctx, embedding.SpaceContent, rows, vecs) })
		wg.Go(func() { removeErr = a.Remove(ctx, "/d", true) })
		wg.Wait()
		if removeErr != nil || setErr != nil {
			t.Fatalf("round %d: Remove: %v; vector batch: %v", round, removeErr, setErr)
		}
		var left int
		if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM chunks`).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left != 0 {
			t.Fatalf("round %d: %d chunks of removed files left", round, left)
		}
	}
	noRerun(t, a, b)
}

// testWipeAmongPuts: WipeVectors of the tag space while a Put rewrites
// every file in path order. The files are written in reverse path order
// first, so the table's scan meets them in that order: a wipe locking the
// rows as it scanned them held the last paths while the Put, holding the
// first, waited for them. The wipe now takes the table's lock first.
func testWipeAmongPuts(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a, b := openStore(t, dsn), openStore(t, dsn)
	var items []index.Item
	for i := range 60 {
		items = append(items, contentItem(fmt.Sprintf("/w/%02d.md", i), 0, 1))
	}
	for round := range 10 {
		if err := a.Remove(ctx, "/w", true); err != nil {
			t.Fatal(err)
		}
		for i := len(items) - 1; i >= 0; i-- {
			if err := a.Put(ctx, items[i]); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		var putErr, wipeErr error
		wg.Go(func() { putErr = a.Put(ctx, items...) })
		wg.Go(func() { wipeErr = b.WipeVectors(ctx, embedding.SpaceTags) })
		wg.Wait()
		if putErr != nil || wipeErr != nil {
			t.Fatalf("round %d: Put: %v; WipeVectors: %v", round, putErr, wipeErr)
		}
	}
	noRerun(t, a, b)
}

// testWipesAtOnce: two daemons starting with a new model wipe the same
// space at once, each on fresh connections. A wipe whose UPDATE was
// prepared in its transaction before its table lock held ROW EXCLUSIVE
// while it waited for EXCLUSIVE, as the other did: a deadlock. The table
// lock now comes first, in a round trip of its own. Two rebuilds at once
// (MarkAllPending) likewise.
func testWipesAtOnce(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	if err := openStore(t, dsn).Put(ctx, contentItem("/w.md", 0, 2)); err != nil {
		t.Fatal(err)
	}
	for round := range 12 {
		a, b := openStore(t, dsn), openStore(t, dsn)
		space := []string{embedding.SpaceTags, embedding.SpaceContent, "rebuild"}[round%3]
		run := func(s *Index) error {
			if space == "rebuild" {
				return s.MarkAllPending(ctx)
			}
			return s.WipeVectors(ctx, space)
		}
		var wg sync.WaitGroup
		var errA, errB error
		wg.Go(func() { errA = run(a) })
		wg.Go(func() { errB = run(b) })
		wg.Wait()
		if errA != nil || errB != nil {
			t.Fatalf("round %d: two of %s at once: %v; %v", round, space, errA, errB)
		}
		noRerun(t, a, b)
		a.Close()
		b.Close()
	}
}

// testLoadAmongPuts: a Load of new files and a Put of the same files,
// each listing them in the other's order, at once. Before Load took the
// lock of all paths, each inserted rows the other then waited for. Now
// one commits first: the Load's files and then the Put's over them, or
// the Put's and then the Load fails with ErrExist; either way the Put's
// rows are what is stored.
func testLoadAmongPuts(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a, b := openStore(t, dsn), openStore(t, dsn)
	for round := range 20 {
		var puts, loads []index.Item
		for i := range 40 {
			p := fmt.Sprintf("/load/%d/%02d.md", round, i)
			puts = append(puts, contentItem(p, 1, 2))
			loads = append(loads, contentItem(p, 0, 2))
		}
		slices.Reverse(loads)
		var wg sync.WaitGroup
		var putErr, loadErr error
		wg.Go(func() { putErr = a.Put(ctx, puts...) })
		wg.Go(func() { loadErr = b.Load(ctx, loads) })
		wg.Wait()
		if putErr != nil || (loadErr != nil && !errors.Is(loadErr, semfs.ErrExist)) {
			t.Fatalf("round %d: Put: %v; Load: %v (want nil, or ErrExist when the Put committed first)", round, putErr, loadErr)
		}
		rows, err := a.pool.Query(ctx, `SELECT path, task FROM files WHERE path LIKE $1 ORDER BY path`, fmt.Sprintf("/load/%d/%%", round))
		if err != nil {
			t.Fatal(err)
		}
		type row struct{ path, task string }
		got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
			var x row
			err := r.Scan(&x.path, &x.task)
			return x, err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 40 {
			t.Fatalf("round %d: %d of 40 rows stored", round, len(got))
		}
		for _, r := range got {
			if r.task != "v1" {
				t.Fatalf("round %d: %s holds the Load's row (task %q) though the Put committed after it", round, r.path, r.task)
			}
		}
	}
	noRerun(t, a, b)
}

// testVectorBatchInAnyOrder: SetEmbeddings sorts its rows by key before
// it updates them; each vector still lands on its own row.
func testVectorBatchInAnyOrder(t *testing.T, pg *testserver.Postgres) {
	s := openStore(t, freshDB(t, pg))
	ctx := context.Background()
	if err := s.Put(ctx, contentItem("/b.md", 0, 12), contentItem("/a.md", 0, 3)); err != nil {
		t.Fatal(err)
	}
	rows, err := s.NeedingEmbedding(ctx, embedding.SpaceContent, "", 100)
	if err != nil || len(rows) != 15 {
		t.Fatalf("%d rows need a vector (%v), want 15", len(rows), err)
	}
	want := map[string]float32{}
	vecs := make([][]float32, len(rows))
	r := rand.New(rand.NewPCG(3, 3))
	r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	for i, row := range rows {
		vecs[i] = []float32{float32(i), 1}
		want[row.Key] = float32(i)
	}
	if err := s.SetEmbeddings(ctx, embedding.SpaceContent, rows, vecs); err != nil {
		t.Fatal(err)
	}
	got := map[string]float32{}
	if err := s.Vectors(ctx, embedding.SpaceContent, func(key string, vec []float32) error {
		got[key] = vec[0]
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d vectors stored, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s holds vector %v, want %v", k, got[k], v)
		}
	}
}

// testDeadlockIsRunAgain: another client of the database (a daemon of an
// older version, a script) holds /b's row and then asks for /a's, which
// an Update holds while it waits for /b's: PostgreSQL aborts the Update,
// which waited first, as a deadlock. The Update runs again once the other
// client commits, and succeeds; the user sees no error.
func testDeadlockIsRunAgain(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	var log bytes.Buffer
	var logMu sync.Mutex
	s, err := Open(ctx, dsn, Options{Logger: slog.New(slog.NewTextHandler(lockedWriter{&logMu, &log}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Put(ctx, contentItem("/a", 0, 1), contentItem("/b", 0, 1)); err != nil {
		t.Fatal(err)
	}
	other, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM files WHERE path = '/b' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	watch, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	done := make(chan error, 1)
	go func() {
		done <- s.Update(ctx, []string{"/a", "/b"}, func(stored map[string]index.File) ([]index.Item, error) {
			var items []index.Item
			for _, p := range []string{"/a", "/b"} {
				f := stored[p]
				f.Task = "semfs"
				items = append(items, index.Item{File: f, TagText: index.TagText(f.Meta)})
			}
			return items, nil
		})
	}()
	// Wait until the Update holds /a and waits for /b.
	for {
		var waiting int
		if err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting == 1 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the Update ended (%v) while another client held /b's row", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	// PostgreSQL aborts the one whose deadlock_timeout (1s) runs out
	// first while both wait: the Update's, which started waiting 0.3s
	// before the other client (and checks once, so the other must wait
	// by then).
	time.Sleep(300 * time.Millisecond)
	if _, err := tx.Exec(ctx, `UPDATE files SET task = 'other' WHERE path = '/a'`); err != nil {
		t.Fatalf("the other client's update of /a: %v (want the Update aborted, not it)", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the Update aborted as a deadlock failed: %v", err)
	}
	logMu.Lock()
	logged := log.String()
	logMu.Unlock()
	if !strings.Contains(logged, "running it again") || !strings.Contains(logged, "40P01") || s.rerun.Load() != 1 {
		t.Fatalf("no deadlock was logged, so the test proved nothing; the log:\n%s", logged)
	}
	row, err := s.File(ctx, "/a")
	if err != nil || row.Task != "semfs" {
		t.Fatalf("/a after the Update ran again: task %q, %v; want the Update's (it committed last)", row.Task, err)
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// testRefusedStatementNamesNoOutage: an error the server answers with (here
// a path too long for the path index) says what the server said and does
// not tell the user to check that the server is up, which it is.
func testRefusedStatementNamesNoOutage(t *testing.T, pg *testserver.Postgres) {
	s := openStore(t, freshDB(t, pg))
	r := rand.New(rand.NewPCG(5, 5))
	long := make([]byte, 12000)
	for i := range long {
		long[i] = byte('!' + r.IntN(90))
	}
	err := s.Put(context.Background(), contentItem("/"+string(long), 0, 1))
	if err == nil {
		t.Fatal("a Put of a 12000-byte path succeeded; the test needs a statement the server refuses")
	}
	msg := err.Error()
	msg = msg[max(0, strings.Index(msg, "index store")):] // without the long path
	if strings.Contains(msg, "check that the server") || !strings.Contains(msg, "SQLSTATE") {
		t.Fatalf("error of a refused statement: %s; want the server's answer without a hint that it is down", msg)
	}
}
