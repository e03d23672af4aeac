package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/indextest"
	"github.com/semfs/semfs/internal/testserver"
)

var dbSeq atomic.Int64

// freshDB creates an empty database on the server and returns its URL.
func freshDB(t *testing.T, pg *testserver.Postgres) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("t%d", dbSeq.Add(1))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", pg.Port, name)
}

// TestWithServer runs the tests that can share one PostgreSQL server (each
// in its own database); starting a server costs seconds.
func TestWithServer(t *testing.T) {
	t.Parallel()
	pg := testserver.StartPostgres(t)
	for _, c := range []struct {
		name string
		fn   func(*testing.T, *testserver.Postgres)
	}{
		{"StoreSuite", testStoreSuite},
		{"TwoDaemonsSeeEachOther", testTwoDaemonsSeeEachOther},
		{"NextLookupSeesOtherDaemon", testNextLookupSeesOtherDaemon},
		{"PeerChangesReportOtherDaemon", testPeerChangesReportOtherDaemon},
		{"ListenerOrderedWithOwnWrites", testListenerOrderedWithOwnWrites},
		{"PeerChangesListOwnWriteOnceCommitted", testPeerChangesListOwnWriteOnceCommitted},
		{"NoLostUpdateBetweenDaemons", testNoLostUpdateBetweenDaemons},
		{"UpdateOfNewRowWaits", testUpdateOfNewRowWaits},
		{"UpdatesOfOverlappingPaths", testUpdatesOfOverlappingPaths},
		{"RenameOntoNewRowWaits", testRenameOntoNewRowWaits},
		{"PutOfNewRowWaits", testPutOfNewRowWaits},
		{"WritersOfOverlappingPathsCommit", testWritersOfOverlappingPathsCommit},
		{"WritersOfOverlappingPathsCommitAgain", testWritersOfOverlappingPathsCommitAgain},
		{"RemoveOfRenamedRowsKeepsLockOrder", testRemoveOfRenamedRowsKeepsLockOrder},
		{"RemoveTakesRowsMovedIntoIt", testRemoveTakesRowsMovedIntoIt},
		{"RenameRewritesLinksOfSourceMovedMeanwhile", testRenameRewritesLinksOfSourceMovedMeanwhile},
		{"RemoveIf", testRemoveIf},
		{"RemoveIfSeesOtherWriters", testRemoveIfSeesOtherWriters},
		{"RebuildAmongWriters", testRebuildAmongWriters},
		{"ChunkRowsInKeyOrder", testChunkRowsInKeyOrder},
		{"LoadAmongPuts", testLoadAmongPuts},
		{"RenameAmongVectorBatches", testRenameAmongVectorBatches},
		{"RemoveAmongVectorBatches", testRemoveAmongVectorBatches},
		{"WipeAmongPuts", testWipeAmongPuts},
		{"WipesAtOnce", testWipesAtOnce},
		{"VectorBatchInAnyOrder", testVectorBatchInAnyOrder},
		{"DeadlockIsRunAgain", testDeadlockIsRunAgain},
		{"RefusedStatementNamesNoOutage", testRefusedStatementNamesNoOutage},
		{"BulkChangesReachOtherDaemons", testBulkChangesReachOtherDaemons},
		{"StoreSuiteOverDelayedLink", testStoreSuiteOverDelayedLink},
		{"DelayedAndCutLink", testDelayedAndCutLink},
		{"NULInTagsIsRefused", testNULInTagsIsRefused},
		{"LoadWritesWhatPutWrites", testLoadWritesWhatPutWrites},
		{"RankCandidates", testRankCandidates},
		{"MigrationAddsChunkLen", testMigrationAddsChunkLen},
		{"WorkMem", testWorkMem},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, pg) })
	}
}

// TestRestarts runs the tests that stop and start the server, one after
// the other on one server.
func TestRestarts(t *testing.T) {
	t.Parallel()
	pg := testserver.StartPostgres(t)
	t.Run("ServerRestart", func(t *testing.T) { testServerRestart(t, pg) })
	t.Run("RestartDuringWriteStream", func(t *testing.T) { testRestartDuringWriteStream(t, pg) })
}

func testStoreSuite(t *testing.T, pg *testserver.Postgres) {
	indextest.Run(t, func(t *testing.T) index.Store {
		return openStore(t, freshDB(t, pg))
	})
}

// TestTwoDaemonsSeeEachOther: two stores on one database (two daemons):
// changes by one reach the other's in-memory vectors and tag table through
// LISTEN/NOTIFY within a bounded delay.
func testTwoDaemonsSeeEachOther(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a := openStore(t, dsn)
	b := openStore(t, dsn)
	f := index.File{}
	f.Path, f.Task = "/shared/x.md", "deploy pipeline"
	start := time.Now()
	if err := a.Put(ctx, index.Item{File: f, TagText: "deploy pipeline /shared/x.md"}); err != nil {
		t.Fatal(err)
	}
	if err := a.SetEmbedding(ctx, embedding.SpaceTags, "/shared/x.md", "deploy pipeline /shared/x.md", []float32{0, 1}); err != nil {
		t.Fatal(err)
	}
	deadline := start.Add(5 * time.Second)
	for {
		_, okVec := b.Vector(ctx, embedding.SpaceTags, "/shared/x.md")
		cands, _ := b.TagKeywordCandidates(ctx, "pi") // short word: answered from memory
		if okVec && len(cands) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon B did not see A's change within 5s (vector %v, candidates %v)", okVec, cands)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("A wrote and B saw it within %v of the first write", time.Since(start))
	if err := b.Remove(ctx, "/shared", true); err != nil {
		t.Fatal(err)
	}
	for {
		if _, ok := a.Vector(ctx, embedding.SpaceTags, "/shared/x.md"); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("daemon A still holds a vector B removed")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestServerRestart: a write while PostgreSQL is down fails with a clear
// error that names no password; after the restart writes work again and the
// notification connection is re-established.
func testServerRestart(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a := openStore(t, dsn)
	b := openStore(t, dsn)
	put := func(s *Index, p string) error {
		f := index.File{}
		f.Path, f.Task = p, "restart test"
		return s.Put(ctx, index.Item{File: f, TagText: p})
	}
	if err := put(a, "/before"); err != nil {
		t.Fatal(err)
	}
	pg.Stop()
	err := put(a, "/during")
	if err == nil {
		t.Fatal("a write succeeded with the server down")
	}
	if !strings.Contains(err.Error(), "check that the server") {
		t.Fatalf("unclear error: %v", err)
	}
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for put(a, "/after") != nil {
		if time.Now().After(deadline) {
			t.Fatal("writes did not recover after the restart")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := a.File(ctx, "/before"); err != nil {
		t.Fatalf("an acknowledged row was lost: %v", err)
	}
	if _, err := a.File(ctx, "/during"); err == nil {
		t.Fatal("the failed write is present")
	}
	// B reconnects its listener and sees A's next change.
	for {
		_ = put(a, "/later")
		if c, _ := b.TagKeywordCandidates(ctx, "la"); len(c) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("daemon B never saw changes after the restart")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestRedact(t *testing.T) {
	got := Redact("postgres://alice:s3cret@db:5432/x?sslmode=disable")
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "alice") {
		t.Fatalf("Redact = %q", got)
	}
	_, err := Open(context.Background(), "postgres://alice:s3cret@127.0.0.1:1/x?connect_timeout=1", Options{})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("Open error leaks the password or succeeded: %v", err)
	}
}

// TestBulkChangesReachOtherDaemons: a Put of many rows and a batch of many
// vectors notify in several parts (one NOTIFY holds under 8000 bytes); the
// other daemon ends up with every row and vector.
func testBulkChangesReachOtherDaemons(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a := openStore(t, dsn)
	b := openStore(t, dsn)
	const n = 600
	var items []index.Item
	var rows []embedding.Pending
	var vecs [][]float32
	for i := range n {
		f := index.File{}
		f.Path = fmt.Sprintf("/bulk/%s/file-%04d.md", strings.Repeat("long-directory-name", 3), i)
		f.State = index.StateIndexed
		items = append(items, index.Item{File: f, TagText: "tag text " + f.Path})
		rows = append(rows, embedding.Pending{Key: f.Path, Text: "tag text " + f.Path})
		vecs = append(vecs, []float32{float32(i), 1})
	}
	if len((&change{Paths: []string{items[0].File.Path}}).payloads()) != 1 {
		t.Fatal("a small change was split")
	}
	ch := &change{Paths: make([]string, n)}
	for i := range items {
		ch.Paths[i] = items[i].File.Path
	}
	parts := ch.payloads()
	if len(parts) < 2 {
		t.Fatalf("a %d-path change is one payload", n)
	}
	for _, p := range parts {
		if len(p) > maxPayload || strings.Contains(p, `"r":true`) {
			t.Fatalf("payload of %d bytes (reload: %v)", len(p), strings.Contains(p, `"r":true`))
		}
	}
	if err := a.Put(ctx, items...); err != nil {
		t.Fatal(err)
	}
	rows = append(rows, embedding.Pending{Key: "/bulk/missing", Text: "x"})
	vecs = append(vecs, []float32{1, 0})
	if err := a.SetEmbeddings(ctx, embedding.SpaceTags, rows, vecs); err != nil {
		t.Fatal(err)
	}
	if left, _ := a.CountNeedingEmbedding(ctx, embedding.SpaceTags); left != 0 {
		t.Fatalf("%d rows still need embedding after the batch", left)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		cands, _ := b.TagKeywordCandidates(ctx, "lo")
		have := 0
		for _, it := range items {
			if v, ok := b.Vector(ctx, embedding.SpaceTags, it.File.Path); ok && len(v) == 2 {
				have++
			}
		}
		if len(cands) == n && have == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon B holds %d of %d rows and %d vectors", len(cands), n, have)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, ok := b.Vector(ctx, embedding.SpaceTags, "/bulk/missing"); ok {
		t.Fatal("a vector for a row that does not exist")
	}
	if v, _ := b.Vector(ctx, embedding.SpaceTags, items[7].File.Path); v[0] != 7 {
		t.Fatalf("vector of row 7 = %v", v)
	}
}

// openStore opens the store at dsn for the test and closes it when the
// test ends.
func openStore(t *testing.T, dsn string) *Index {
	t.Helper()
	ix, err := Open(context.Background(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// testNULInTagsIsRefused: PostgreSQL text cannot hold NUL, so a tag with
// one is refused with ErrInvalid and a way out, and the row is untouched.
func testNULInTagsIsRefused(t *testing.T, pg *testserver.Postgres) {
	s := openStore(t, freshDB(t, pg))
	ctx := context.Background()
	f := index.File{}
	f.Path, f.Task = "/a.md", "clean"
	if err := s.Put(ctx, index.Item{File: f, TagText: "clean /a.md"}); err != nil {
		t.Fatal(err)
	}
	f.Task = "bad\x00task"
	err := s.Put(ctx, index.Item{File: f, TagText: "bad /a.md"})
	if !errors.Is(err, semfs.ErrInvalid) || !strings.Contains(err.Error(), "NUL") {
		t.Fatalf("Put with a NUL in a tag: %v", err)
	}
	got, err := s.File(ctx, "/a.md")
	if err != nil || got.Task != "clean" {
		t.Fatalf("row after the refused Put: %+v, %v", got, err)
	}
}
