package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
)

// chunkPaths returns the distinct paths of the chunks rows, sorted.
func chunkPaths(t *testing.T, ix *Index) []string {
	t.Helper()
	rows, err := ix.db.Query(`SELECT DISTINCT substr(key, 1, length(key) - 6) FROM chunks ORDER BY 1`)
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

// The queries that find chunks by path or key must use the index of
// (fresh, key): the chunks table has no other index on path or key, and
// a full scan per file would make a Put or a filtered search quadratic;
// the drain's queries read the pending chunks and the vectors in key
// order from it, without a sort.
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
	inRange := "INDEX chunks_key (fresh=? AND key>? AND key<?)"
	s, err := space(embedding.SpaceContent)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q, want string
		args    []any
	}{
		{`SELECT id, key, text, vec, fresh FROM chunks WHERE ` + chunksOf, inRange, chunksOfArgs("/a")},
		{`DELETE FROM chunks WHERE ` + chunksOf, inRange, chunksOfArgs("/a")},
		{filesChunks + ` WHERE f.task = ? AND f.task != ''`, inRange, []any{"t"}},
		{`SELECT count(*) FROM files f WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.fresh IN (0, 1) AND c.key >= f.path || '#' AND c.key < f.path || '$' AND substr(c.key, 1, length(c.key) - 6) = f.path)`,
			"COVERING " + inRange, nil},
		{`SELECT count(DISTINCT substr(key, 1, length(key) - 6)) FROM chunks`, "COVERING INDEX", nil},
		{`SELECT ` + chunkPathNo + `, start_line, end_line, text FROM chunks WHERE fresh IN (0, 1) AND key = ?`, "INDEX chunks_key (fresh=? AND key=?)", []any{"/a#00000"}},
		{`UPDATE chunks SET vec = ?, fresh = 1 WHERE ` + byKey(s) + ` AND text = ?`, "INDEX chunks_key (fresh=? AND key=?)", []any{nil, "/a#00000", "x"}},
		{needingSQL(s), "INDEX chunks_key (fresh=? AND key>?)", []any{"", 10}},
		{countNeedingSQL(s), "COVERING INDEX chunks_key (fresh=?)", nil},
		{vectorsSQL(s), "INDEX chunks_key (fresh=? AND key>?)", []any{""}},
	} {
		got := plan(c.q, c.args...)
		if !strings.Contains(got, c.want) || strings.Contains(got, "TEMP B-TREE FOR ORDER BY") {
			t.Errorf("%s\nplan %q, want %q and no sort", c.q, got, c.want)
		}
	}
}

// An index written with DerivedVersion 5 (chunks_path), 6 (a UNIQUE
// index of keys and chunks_need), 7 (chunks with path and no columns) or
// 8 (postings segments of format 1) is rebuilt on open: the old indexes
// and columns are gone, the metadata is kept, every file is pending, and
// once re-indexed it searches as before.
func TestOldIndexVersionsRebuilt(t *testing.T) {
	for _, c := range []struct {
		version string
		schema  []string // makes the current schema that version's
		gone    []string // its indexes
	}{
		{"5", []string{`ALTER TABLE chunks ADD COLUMN path TEXT NOT NULL DEFAULT ''`, `ALTER TABLE chunks ADD COLUMN no INTEGER NOT NULL DEFAULT 0`,
			`CREATE INDEX chunks_path ON chunks(path, no)`}, []string{"chunks_path"}},
		{"6", []string{`DROP INDEX chunks_key`, `CREATE UNIQUE INDEX chunks_key6 ON chunks(key)`,
			`CREATE INDEX chunks_need ON chunks(key) WHERE fresh = 0`}, []string{"chunks_key6", "chunks_need"}},
		{"7", []string{`ALTER TABLE chunks ADD COLUMN path TEXT NOT NULL DEFAULT ''`, `ALTER TABLE chunks ADD COLUMN no INTEGER NOT NULL DEFAULT 0`}, nil},
		{"8", nil, nil}, // the schema of 9, postings of format 1
	} {
		t.Run(c.version, func(t *testing.T) {
			ctx := context.Background()
			path := greetIndex(t)
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range append(c.schema, `UPDATE kv SET value = '`+c.version+`' WHERE key = 'derived_version'`) {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(q, err)
				}
			}
			db.Close()
			ix := open(t, path)
			if len(ix.Repaired) == 0 {
				t.Fatalf("an index of DerivedVersion %s was not rebuilt", c.version)
			}
			want := map[string]int{"chunks_key": 1}
			for _, name := range c.gone {
				want[name] = 0
			}
			for name, w := range want {
				var n int
				if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = ?`, name).Scan(&n); err != nil || n != w {
					t.Fatalf("index %s: %d after the rebuild, want %d (%v)", name, n, w, err)
				}
			}
			var cols int
			if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('chunks') WHERE name IN ('path', 'no')`).Scan(&cols); err != nil || cols != 0 {
				t.Fatalf("%d of chunks' path and no columns after the rebuild (%v)", cols, err)
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
		})
	}
}

// Chunk keys are unique by construction, not by the index: a Put whose
// chunk numbers repeat, go down or need six digits fails with a clear
// error and writes nothing.
func TestChunkNumbersChecked(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "i.db"))
	ok := item("/ok.md", "fine\n", semfs.Tags{})
	for _, nos := range [][]int{{0, 0}, {1, 0}, {0, 100000}, {-1}} {
		bad := item("/bad.md", "one\n\ntwo\n", semfs.Tags{})
		var chunks []index.Chunk
		for _, no := range nos {
			chunks = append(chunks, index.Chunk{No: no, StartLine: 1, EndLine: 1, Text: fmt.Sprint("chunk ", no)})
		}
		bad.Content.Chunks = chunks
		err := ix.Put(ctx, ok, bad)
		if !errors.Is(err, semfs.ErrInvalid) || !strings.Contains(err.Error(), "chunk number") {
			t.Errorf("chunk numbers %v: %v, want an invalid-argument error naming chunk numbers", nos, err)
		}
	}
	var n int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM files`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d files rows after refused Puts (%v), want 0", n, err)
	}
	if err := ix.Put(ctx, ok); err != nil {
		t.Fatal(err)
	}
}

// A chunk's fresh is 0 or 1, and 1 where it holds a vector: the queries
// of chunks by key name both values, and the vectors are read as the
// fresh ones.
func TestChunkFreshChecked(t *testing.T) {
	ix := open(t, filepath.Join(t.TempDir(), "i.db"))
	if err := ix.Put(context.Background(), item("/a.md", "hello\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`UPDATE chunks SET fresh = 2`, `UPDATE chunks SET vec = x'0000803f'`} {
		if _, err := ix.db.Exec(bad); err == nil || !strings.Contains(err.Error(), "CHECK") {
			t.Errorf("%s: %v, want a CHECK constraint error", bad, err)
		}
	}
	if _, err := ix.db.Exec(`UPDATE chunks SET vec = x'0000803f', fresh = 1`); err != nil {
		t.Errorf("a vector with fresh = 1: %v", err)
	}
}
