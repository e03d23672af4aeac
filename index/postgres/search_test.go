package postgres

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/internal/testserver"
)

func putText(t *testing.T, s *Index, path, text string) {
	t.Helper()
	f := index.File{Meta: semfs.Meta{Path: path}}
	c, state, reason := index.Analyze(path, []byte(text))
	f.State, f.Reason = state, reason
	if err := s.Put(context.Background(), index.Item{File: f, TagText: path, Content: c}); err != nil {
		t.Fatal(err)
	}
}

// testRankCandidates: with a bound of 3 candidates, only the 3 shortest
// matching chunks are ranked (a longer chunk that would rank first is not
// seen); without a bound every match is ranked; the filter applies before
// the bound.
func testRankCandidates(t *testing.T, pg *testserver.Postgres) {
	ctx := context.Background()
	dsn := freshDB(t, pg)
	all := openStore(t, dsn)
	// The long chunk names the word in its path (weight A): it ranks first
	// when it is ranked at all.
	putText(t, all, "/heron/heron.md", "heron heron heron wading slowly through the reeds of the long grey marsh at dawn\n")
	for i := range 5 {
		putText(t, all, fmt.Sprintf("/d%d/x.md", i), "a heron\n")
	}
	if hits, err := all.SearchChunks(ctx, []string{"heron"}, index.Filter{}, 10); err != nil || len(hits) != 6 || hits[0].Path != "/heron/heron.md" {
		t.Fatalf("ranking every match: %v, %v", paths(hits), err)
	}
	bounded, err := Open(ctx, dsn, Options{RankCandidates: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer bounded.Close()
	hits, err := bounded.SearchChunks(ctx, []string{"heron"}, index.Filter{}, 10)
	if err != nil || len(hits) != 3 || slices.Contains(paths(hits), "/heron/heron.md") {
		t.Fatalf("3 candidates: %v, %v; want 3 of the short chunks", paths(hits), err)
	}
	hits, err = bounded.SearchChunks(ctx, []string{"heron"}, index.Filter{PathPrefix: "/heron"}, 10)
	if err != nil || !slices.Equal(paths(hits), []string{"/heron/heron.md"}) {
		t.Fatalf("3 candidates under /heron: %v, %v; the filter must apply before the bound", paths(hits), err)
	}
	unbounded, err := Open(ctx, dsn, Options{RankCandidates: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer unbounded.Close()
	if hits, err := unbounded.SearchChunks(ctx, []string{"heron"}, index.Filter{}, 10); err != nil || len(hits) != 6 || hits[0].Path != "/heron/heron.md" {
		t.Fatalf("RankCandidates -1: %v, %v", paths(hits), err)
	}
}

// testMigrationAddsChunkLen: a schema-1 database (no chunks.len) gets the
// column filled in place when a newer binary opens it, without a rebuild.
func testMigrationAddsChunkLen(t *testing.T, pg *testserver.Postgres) {
	ctx := context.Background()
	dsn := freshDB(t, pg)
	s := openStore(t, dsn)
	putText(t, s, "/a.md", "one two three\n")
	s.Close()
	if _, err := execSQL(dsn, `ALTER TABLE chunks DROP COLUMN len; DELETE FROM schema_version WHERE version >= 2`); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if len(s2.Repaired) > 0 {
		t.Fatalf("opening a schema-1 database rebuilt the derived data: %v", s2.Repaired)
	}
	var n, length int
	if err := s2.pool.QueryRow(ctx, `SELECT count(*), min(len) FROM chunks`).Scan(&n, &length); err != nil || n != 1 || length < 3 {
		t.Fatalf("chunks after migration: %d rows, len %d, %v", n, length, err)
	}
	if hits, err := s2.SearchChunks(ctx, []string{"two"}, index.Filter{}, 5); err != nil || len(hits) != 1 {
		t.Fatalf("search after migration: %v, %v", hits, err)
	}
}

func paths(hits []index.ChunkHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Path)
	}
	return out
}

func execSQL(dsn, sql string) (int64, error) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, sql)
	return tag.RowsAffected(), err
}

// testWorkMem: the store's sessions run with searchWorkMem (so a search's
// bitmap stays exact), unless the URL sets work_mem.
func testWorkMem(t *testing.T, pg *testserver.Postgres) {
	ctx := context.Background()
	dsn := freshDB(t, pg)
	var got string
	if err := openStore(t, dsn).pool.QueryRow(ctx, `SHOW work_mem`).Scan(&got); err != nil || got != searchWorkMem {
		t.Fatalf("work_mem = %q, %v; want %s", got, err, searchWorkMem)
	}
	if err := openStore(t, dsn+"&work_mem=8MB").pool.QueryRow(ctx, `SHOW work_mem`).Scan(&got); err != nil || got != "8MB" {
		t.Fatalf("work_mem with the URL's 8MB = %q, %v", got, err)
	}
}
