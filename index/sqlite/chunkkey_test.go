package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// chunkPaths returns the distinct paths of the chunks rows, sorted.
func chunkPaths(t *testing.T, ix *Index) []string {
	t.Helper()
	rows, err := ix.db.Query(`SELECT DISTINCT path FROM chunks ORDER BY path`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// Chunks are found by path through the range of their keys; a path that
// extends another with '#' has keys inside that range, and replacing,
// renaming, filtering or removing the shorter one must leave its chunks
// alone.
func TestChunksOfPathWithHash(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "i.db"))
	if err := ix.Put(ctx,
		item("/a.md", "apple\n", semfs.Tags{Task: "t1"}),
		item("/a.md#b", "banana\n", semfs.Tags{Task: "t2"}),
		item("/a.md#b#00000", "cherry\n", semfs.Tags{Task: "t3"}),
	); err != nil {
		t.Fatal(err)
	}
	search := func(word string, f index.Filter) []string {
		t.Helper()
		hits, err := ix.SearchChunks(ctx, index.QueryTokens(word), f, 10)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, h := range hits {
			paths = append(paths, h.Path)
		}
		return paths
	}
	if got := search("banana", index.Filter{Task: "t2"}); !slices.Equal(got, []string{"/a.md#b"}) {
		t.Fatalf("task filter: %v", got)
	}
	if got := search("banana", index.Filter{Task: "t1"}); len(got) != 0 {
		t.Fatalf("task t1 matched another file's chunk: %v", got)
	}
	if got := search("cherry", index.Filter{PathPrefix: "/a.md#b#00000"}); !slices.Equal(got, []string{"/a.md#b#00000"}) {
		t.Fatalf("path filter: %v", got)
	}
	// Replace the shortest path: the others keep their chunks.
	if err := ix.Put(ctx, item("/a.md", "apricot\n", semfs.Tags{Task: "t1"})); err != nil {
		t.Fatal(err)
	}
	if got := search("banana", index.Filter{}); !slices.Equal(got, []string{"/a.md#b"}) {
		t.Fatalf("after replacing /a.md: banana %v", got)
	}
	if got := search("apple", index.Filter{}); len(got) != 0 {
		t.Fatalf("old chunk of /a.md still found: %v", got)
	}
	if err := ix.Rename(ctx, "/a.md", "/z.md"); err != nil {
		t.Fatal(err)
	}
	if got := chunkPaths(t, ix); !slices.Equal(got, []string{"/a.md#b", "/a.md#b#00000", "/z.md"}) {
		t.Fatalf("after rename: chunk paths %v", got)
	}
	if c, err := ix.Chunk(ctx, index.ChunkKey("/z.md", 0)); err != nil || !strings.Contains(c.Text, "apricot") {
		t.Fatalf("chunk by its new key: %+v %v", c, err)
	}
	if err := ix.Remove(ctx, "/a.md#b", false); err != nil {
		t.Fatal(err)
	}
	if got := chunkPaths(t, ix); !slices.Equal(got, []string{"/a.md#b#00000", "/z.md"}) {
		t.Fatalf("after remove: chunk paths %v", got)
	}
	r, err := ix.Check(ctx, false)
	if err != nil || r.Files != 2 || r.Chunks != 2 || len(r.Problems) != 0 {
		t.Fatalf("check: %+v %v", r, err)
	}
}

// The queries that find chunks by path must use the index of keys: the
// chunks table has no other index on path, and a full scan per file would
// make a Put or a filtered search quadratic.
func TestChunkQueriesUseKeyIndex(t *testing.T) {
	ix := open(t, filepath.Join(t.TempDir(), "i.db"))
	plan := func(q string, args ...any) string {
		t.Helper()
		rows, err := ix.db.Query(`EXPLAIN QUERY PLAN `+q, args...)
		if err != nil {
			t.Fatal(q, err)
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			b.WriteString(detail + "; ")
		}
		return b.String()
	}
	byKey := "INDEX sqlite_autoindex_chunks_1 (key>? AND key<?)"
	for _, c := range []struct {
		q, want string
		args    []any
	}{
		{`SELECT id, key, text, vec, fresh FROM chunks WHERE ` + chunksOf, byKey, chunksOfArgs("/a")},
		{`DELETE FROM chunks WHERE ` + chunksOf, byKey, chunksOfArgs("/a")},
		{`SELECT fc.id FROM files f JOIN chunks fc ON fc.key >= f.path || '#' AND fc.key < f.path || '$' AND fc.path = f.path WHERE f.task = ? AND f.task != ''`,
			byKey, []any{"t"}},
		{`SELECT count(*) FROM files f WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.key >= f.path || '#' AND c.key < f.path || '$' AND substr(c.key, 1, length(c.key) - 6) = f.path)`,
			"COVERING " + byKey, nil},
		{`SELECT count(DISTINCT substr(key, 1, length(key) - 6)) FROM chunks`, "COVERING INDEX", nil},
	} {
		if got := plan(c.q, c.args...); !strings.Contains(got, c.want) {
			t.Errorf("%s\nplan %q, want %q", c.q, got, c.want)
		}
	}
}

// An index written with DerivedVersion 5 (chunks_path) is rebuilt on
// open: the old index is gone, the metadata is kept, every file is
// pending, and once re-indexed it searches as before.
func TestVersion5IndexRebuilt(t *testing.T) {
	ctx := context.Background()
	path := greetIndex(t)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE INDEX chunks_path ON chunks(path, no)`,
		`UPDATE kv SET value = '5' WHERE key = 'derived_version'`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	db.Close()
	ix := open(t, path)
	if len(ix.Repaired) == 0 {
		t.Fatal("an index of DerivedVersion 5 was not rebuilt")
	}
	var n int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'chunks_path'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("chunks_path still there (%d, %v)", n, err)
	}
	f, err := ix.File(ctx, "/a.md")
	if err != nil || f.Task != "greet" || f.State != index.StatePending {
		t.Fatalf("after the rebuild: %+v %v", f, err)
	}
	if err := ix.Put(ctx, item("/a.md", "hello world\n", semfs.Tags{Task: "greet"})); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.SearchChunks(ctx, index.QueryTokens("hello"), index.Filter{Task: "greet"}, 10)
	if err != nil || len(hits) != 1 || hits[0].Path != "/a.md" {
		t.Fatalf("search after re-indexing: %+v %v", hits, err)
	}
	ix.Close()
	re := open(t, path)
	if len(re.Repaired) > 0 {
		t.Fatalf("reopen after re-indexing repaired %v", re.Repaired)
	}
}
