package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
)

func open(t *testing.T, path string) *Index {
	t.Helper()
	ix, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func item(path, text string, tags semfs.Tags) index.Item {
	m := semfs.Meta{Path: path, Tags: tags, CreatedBy: "app", CreatedAt: time.Unix(1, 0), UpdatedAt: time.Unix(2, 0), Size: int64(len(text))}
	c, state, reason := index.Analyze(path, []byte(text))
	return index.Item{File: index.File{Meta: m, State: state, Reason: reason}, TagText: index.TagText(m), Content: c}
}

func TestPutSearchRenameRemove(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "i.db"))
	err := ix.Put(ctx,
		item("/docs/auth.md", "# Login\n\nThe login handler checks passwords.\n", semfs.Tags{Task: "fix auth bug", RelatedApps: []string{"editor"}}),
		item("/docs/cook.md", "Two cups of flour.\n", semfs.Tags{Links: []string{"/docs/auth.md"}, Extra: map[string]string{"k": "v"}}),
	)
	if err != nil {
		t.Fatal(err)
	}
	hits, err := ix.SearchChunks(ctx, index.QueryTokens("password"), index.Filter{}, 10)
	if err != nil || len(hits) != 1 || hits[0].Path != "/docs/auth.md" || hits[0].StartLine != 1 {
		t.Fatalf("search: %v %+v", err, hits)
	}
	// Filters reach SQL as parameters.
	hits, err = ix.SearchChunks(ctx, index.QueryTokens("flour"), index.Filter{Tags: map[string]string{"k": "v"}}, 10)
	if err != nil || len(hits) != 1 {
		t.Fatalf("tag filter: %v %+v", err, hits)
	}
	hits, err = ix.SearchChunks(ctx, index.QueryTokens("flour"), index.Filter{Tags: map[string]string{"k": "w"}}, 10)
	if err != nil || len(hits) != 0 {
		t.Fatalf("tag filter mismatch: %v %+v", err, hits)
	}
	got, err := ix.TagKeywordCandidates(ctx, "AUTH")
	if err != nil || !slices.Equal(got, []string{"/docs/auth.md"}) {
		t.Fatalf("tag candidates: %v %v", got, err)
	}
	got, err = ix.TagKeywordCandidates(ctx, "ed") // short: scan path; "editor" and "created_by"? no
	if err != nil || !slices.Equal(got, []string{"/docs/auth.md"}) {
		t.Fatalf("short tag candidates: %v %v", got, err)
	}

	if err := ix.Rename(ctx, "/docs", "/notes"); err != nil {
		t.Fatal(err)
	}
	f, err := ix.File(ctx, "/notes/cook.md")
	if err != nil || !slices.Equal(f.Links, []string{"/notes/auth.md"}) || f.Extra["k"] != "v" {
		t.Fatalf("after rename: %+v %v", f, err)
	}
	if _, err := ix.File(ctx, "/docs/auth.md"); !errors.Is(err, semfs.ErrNotExist) {
		t.Fatalf("old path still there: %v", err)
	}
	hits, _ = ix.SearchChunks(ctx, index.QueryTokens("notes"), index.Filter{}, 10)
	if len(hits) != 2 {
		t.Fatalf("path tokens not moved: %+v", hits)
	}
	q, ok, err := index.PlanGrep("pass(word|phrase)", false, false)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	paths, pending, err := ix.GrepCandidates(ctx, "/", q)
	if err != nil || pending != 0 || !slices.Equal(paths, []string{"/notes/auth.md"}) {
		t.Fatalf("grep: %v %d %v", paths, pending, err)
	}
	if err := ix.Remove(ctx, "/notes", true); err != nil {
		t.Fatal(err)
	}
	r, err := ix.Check(ctx, false)
	if err != nil || r.Files != 0 || r.Chunks != 0 || len(r.Problems) != 0 {
		t.Fatalf("check after remove: %+v %v", r, err)
	}
}

func TestEmbeddingStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	ix := open(t, path)
	if err := ix.Put(ctx, item("/a.txt", "alpha\n\nbeta\n", semfs.Tags{Task: "t"})); err != nil {
		t.Fatal(err)
	}
	p, err := ix.NeedingEmbedding(ctx, embedding.SpaceTags, "", 10)
	if err != nil || len(p) != 1 || p[0].Key != "/a.txt" || p[0].Text != "t /a.txt" {
		t.Fatalf("needing: %+v %v", p, err)
	}
	// A vector for outdated text is ignored.
	if err := ix.SetEmbedding(ctx, embedding.SpaceTags, "/a.txt", "old text", []float32{1, 0}); err != nil {
		t.Fatal(err)
	}
	if n, _ := ix.CountNeedingEmbedding(ctx, embedding.SpaceTags); n != 1 {
		t.Fatalf("stale text accepted: %d", n)
	}
	if err := ix.SetEmbedding(ctx, embedding.SpaceTags, "/a.txt", "t /a.txt", []float32{1, 0}); err != nil {
		t.Fatal(err)
	}
	if n, _ := ix.CountNeedingEmbedding(ctx, embedding.SpaceTags); n != 0 {
		t.Fatalf("still needing: %d", n)
	}
	c, _ := ix.NeedingEmbedding(ctx, embedding.SpaceContent, "", 10)
	if len(c) != 1 || c[0].Key != "/a.txt#00000" {
		t.Fatalf("content needing: %+v", c)
	}
	if err := ix.SetEmbedding(ctx, embedding.SpaceContent, c[0].Key, c[0].Text, []float32{0, 1}); err != nil {
		t.Fatal(err)
	}
	// Re-writing the same bytes keeps the chunk vector.
	if err := ix.Put(ctx, item("/a.txt", "alpha\n\nbeta\n", semfs.Tags{Task: "t"})); err != nil {
		t.Fatal(err)
	}
	if n, _ := ix.CountNeedingEmbedding(ctx, embedding.SpaceContent); n != 0 {
		t.Fatalf("unchanged chunk needs embedding again: %d", n)
	}
	hits, _ := ix.Nearest(ctx, embedding.SpaceContent, []float32{0, 1}, 5, 0.5)
	if len(hits) != 1 || hits[0].Key != "/a.txt#00000" {
		t.Fatalf("nearest: %+v", hits)
	}
	// Vectors survive a reopen (loaded from disk).
	ix.Close()
	ix = open(t, path)
	hits, _ = ix.Nearest(ctx, embedding.SpaceTags, []float32{1, 0}, 5, 0.5)
	if len(hits) != 1 || hits[0].Key != "/a.txt" {
		t.Fatalf("nearest after reopen: %+v", hits)
	}
	if err := ix.WipeVectors(ctx, embedding.SpaceTags); err != nil {
		t.Fatal(err)
	}
	if n, _ := ix.CountNeedingEmbedding(ctx, embedding.SpaceTags); n != 1 {
		t.Fatalf("wipe left fresh rows: %d", n)
	}
	if _, err := ix.NeedingEmbedding(ctx, "bogus", "", 1); !errors.Is(err, semfs.ErrInvalid) {
		t.Fatalf("unknown space: %v", err)
	}
}

// greetIndex makes an index file holding one file, /a.md of task "greet",
// and returns its path, closed.
func greetIndex(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "i.db")
	ix := open(t, path)
	if err := ix.Put(context.Background(), item("/a.md", "hello world\n", semfs.Tags{Task: "greet"})); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	return path
}

func TestDerivedDamageDetected(t *testing.T) {
	ctx := context.Background()
	path := greetIndex(t)
	var ix *Index
	for _, damage := range []string{`DROP TABLE chunks_fts`, `DELETE FROM chunks`, `UPDATE kv SET value = '0' WHERE key = 'derived_version'`} {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(damage); err != nil {
			t.Fatal(damage, err)
		}
		db.Close()
		ix = open(t, path)
		if len(ix.Repaired) == 0 {
			t.Fatalf("%s: not detected", damage)
		}
		f, err := ix.File(ctx, "/a.md")
		if err != nil || f.Task != "greet" || f.State != index.StatePending {
			t.Fatalf("%s: metadata lost or not pending: %+v %v", damage, f, err)
		}
		// Re-index, as the meta layer would, so the next round starts clean.
		if err := ix.Put(ctx, item("/a.md", "hello world\n", semfs.Tags{Task: "greet"})); err != nil {
			t.Fatal(err)
		}
		ix.Close()
	}
}

// An index of DerivedVersion 3 held a tags_fts table; opening it with this
// code rebuilds the derived schema and drops the retired table, keeping the
// metadata and the tag query.
func TestRetiredTableDropped(t *testing.T) {
	ctx := context.Background()
	path := greetIndex(t)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE VIRTUAL TABLE tags_fts USING fts5(path, created_by, task, apps, content='', contentless_delete=1, tokenize='trigram')`,
		`UPDATE kv SET value = '3' WHERE key = 'derived_version'`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	db.Close()
	ix := open(t, path)
	defer ix.Close()
	if len(ix.Repaired) == 0 {
		t.Fatal("an index of DerivedVersion 3 was not rebuilt")
	}
	var n int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'tags_fts'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("tags_fts still there (%d, %v)", n, err)
	}
	if got, err := ix.TagKeywordCandidates(ctx, "greet"); err != nil || len(got) != 1 || got[0] != "/a.md" {
		t.Fatalf("tag keyword after the rebuild = %v, %v", got, err)
	}
}

// Full-text writes are deferred to the end of a Put and sorted by rowid;
// a file replaced within one batch, and again in a later one, must keep
// only its last content in every derived table.
func TestReplaceWithinAndAcrossBatches(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "i.db"))
	if err := ix.Put(ctx,
		item("/a.md", "alpha words here\n", semfs.Tags{Task: "first"}),
		item("/b.md", "beta words here\n", semfs.Tags{}),
		item("/a.md", "omega words here\n", semfs.Tags{Task: "second"}),
	); err != nil {
		t.Fatal(err)
	}
	if err := ix.Put(ctx, item("/a.md", "gamma words here\n", semfs.Tags{Task: "third"})); err != nil {
		t.Fatal(err)
	}
	for word, want := range map[string][]string{"alpha": nil, "omega": nil, "gamma": {"/a.md"}, "beta": {"/b.md"}, "words": {"/a.md", "/b.md"}} {
		q, _, err := index.PlanGrep(word, false, false)
		if err != nil {
			t.Fatal(err)
		}
		paths, _, err := ix.GrepCandidates(ctx, "/", q)
		if err != nil || !slices.Equal(paths, want) {
			t.Errorf("grep %s: %v %v, want %v", word, paths, err, want)
		}
		hits, err := ix.SearchChunks(ctx, index.QueryTokens(word), index.Filter{}, 10)
		var got []string
		for _, h := range hits {
			got = append(got, h.Path)
		}
		slices.Sort(got)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("search %s: %v %v, want %v", word, got, err, want)
		}
	}
	for task, want := range map[string]int{"first": 0, "second": 0, "third": 1} {
		if got, _ := ix.TagKeywordCandidates(ctx, task); len(got) != want {
			t.Errorf("tag %s: %v, want %d", task, got, want)
		}
	}
	r, err := ix.Check(ctx, false)
	if err != nil || len(r.Problems) > 0 {
		t.Fatalf("check: %+v %v", r, err)
	}
	for _, tbl := range derivedTables[1:] {
		if _, err := ix.db.ExecContext(ctx, `INSERT INTO `+tbl+`(`+tbl+`) VALUES ('integrity-check')`); err != nil {
			t.Errorf("%s: %v", tbl, err)
		}
	}
}

// The FTS5 flush threshold of derived.sql is stored with the tables (and so
// survives reopening); at the default 1 MiB a bulk Put became dozens of
// segments to merge.
func TestFTSHashSizeStored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "i.db")
	open(t, path).Close()
	ix := open(t, path)
	for _, tbl := range []string{"chunks_fts", "grep_fts"} {
		var v int
		if err := ix.db.QueryRow(`SELECT v FROM ` + tbl + `_config WHERE k = 'hashsize'`).Scan(&v); err != nil || v != 8<<20 {
			t.Errorf("%s hashsize: %d %v", tbl, v, err)
		}
	}
}

// A bulk Put must reach each FTS5 table as one segment: FTS5 flushes its
// pending terms at every statement savepoint and at every lower rowid, and
// interleaved or multi-row FTS writes once made a segment per file (or per
// statement) that merging then rewrote.
func TestBulkPutOneSegment(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "i.db"))
	var items []index.Item
	for i := range 200 {
		items = append(items, item(fmt.Sprintf("/d/f%03d.md", 199-i), fmt.Sprintf("note %d about kestrels\n\nand hawks %d\n", i, i*7), semfs.Tags{Task: "birds"}))
	}
	if err := ix.Put(ctx, items...); err != nil {
		t.Fatal(err)
	}
	for _, tbl := range derivedTables[1:] {
		var n int
		if err := ix.db.QueryRow(`SELECT count(DISTINCT segid) FROM ` + tbl + `_idx`).Scan(&n); err != nil || n != 1 {
			t.Errorf("%s: %d segments after one Put (%v), want 1", tbl, n, err)
		}
	}
}
