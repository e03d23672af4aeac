package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/postings"
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
	for _, damage := range []string{`DROP TABLE postings`, `DELETE FROM chunks`, `UPDATE kv SET value = '0' WHERE key = 'derived_version'`,
		`UPDATE postings SET data = zeroblob(length(data)) WHERE kind = 1`, // fails its checksum
		`UPDATE postings SET data = substr(data, 1, length(data) - 1) || x'00' WHERE kind = 2`,
		`DELETE FROM postings WHERE kind = 2`,
		`INSERT INTO postings_dead(seg, doc) VALUES (999, 0)`,
		`INSERT INTO postings_dead(seg, doc) SELECT id, 0 FROM postings WHERE kind = 1`,
	} {
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
	retag := item("/a.md", "", semfs.Tags{Task: "first"})
	retag.Content = nil // metadata only: keeps the derived data
	if err := ix.Put(ctx,
		item("/a.md", "alpha words here\n", semfs.Tags{Task: "first"}),
		retag,
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
}

// A bulk Put writes one postings segment per kind, in its transaction.
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
	ix.waitMerges()
	for kind, want := range map[int]int{kindText: 200, kindGrep: 200} {
		var n int
		if err := ix.db.QueryRow(`SELECT count(*) FROM postings WHERE kind = ?`, kind).Scan(&n); err != nil || n != 1 {
			t.Errorf("kind %d: %d segments after one Put (%v), want 1", kind, n, err)
		}
		x := map[int]interface{ Live() int }{kindText: ix.text, kindGrep: ix.grep}[kind]
		if x.Live() != want {
			t.Errorf("kind %d: %d live documents, want %d", kind, x.Live(), want)
		}
	}
}

// An index of DerivedVersion 4 kept full text and grep trigrams in FTS5
// tables; opening it rebuilds the derived schema without them, keeps the
// metadata, and marks the files pending.
func TestFTSIndexRebuilt(t *testing.T) {
	ctx := context.Background()
	path := greetIndex(t)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE VIRTUAL TABLE chunks_fts USING fts5(path, body, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2')`,
		`CREATE VIRTUAL TABLE grep_fts USING fts5(tris, content='', contentless_delete=1, tokenize='ascii', detail='none')`,
		`UPDATE kv SET value = '4' WHERE key = 'derived_version'`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	db.Close()
	ix := open(t, path)
	if len(ix.Repaired) == 0 {
		t.Fatal("an index of DerivedVersion 4 was not rebuilt")
	}
	for _, tbl := range []string{"chunks_fts", "grep_fts"} {
		var n int
		if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = ?`, tbl).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s still there (%d, %v)", tbl, n, err)
		}
	}
	f, err := ix.File(ctx, "/a.md")
	if err != nil || f.Task != "greet" || f.State != index.StatePending {
		t.Fatalf("after the rebuild: %+v %v", f, err)
	}
}

// Postings written by many small Puts, renames and removes are merged
// into a bounded number of segments, survive reopening, and rank exactly
// as postings written in one Put of the final files.
func TestPostingsPersistAndMerge(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ix := open(t, filepath.Join(dir, "i.db"))
	words := []string{"kestrel", "hawk", "falcon", "owl", "heron", "wren", "finch", "crane"}
	text := func(i int) string {
		return fmt.Sprintf("# Note %d\n\nThe %s met the %s near the %s.\n", i, words[i%8], words[(i*3)%8], words[(i*5+1)%8])
	}
	final := map[string]string{}
	for i := range 120 {
		p := fmt.Sprintf("/n/%02d/note%d.md", i%7, i)
		if err := ix.Put(ctx, item(p, text(i), semfs.Tags{})); err != nil {
			t.Fatal(err)
		}
		final[p] = text(i)
		switch {
		case i%10 == 3: // replace an earlier file
			q := fmt.Sprintf("/n/%02d/note%d.md", (i-3)%7, i-3)
			if err := ix.Put(ctx, item(q, text(i+1000), semfs.Tags{})); err != nil {
				t.Fatal(err)
			}
			final[q] = text(i + 1000)
		case i%17 == 5:
			if err := ix.Remove(ctx, p, false); err != nil {
				t.Fatal(err)
			}
			delete(final, p)
		}
	}
	if err := ix.Rename(ctx, "/n/03", "/m/three"); err != nil {
		t.Fatal(err)
	}
	for p, s := range final {
		if np, ok := moved(p, "/n/03", "/m/three"); ok {
			delete(final, p)
			final[np] = s
		}
	}
	ix.waitMerges()
	if n := ix.text.Segments(); n >= 2*postings.MergeFactor {
		t.Errorf("%d text segments after 120 Puts", n)
	}
	if ix.text.Live() != len(final) || ix.grep.Live() != len(final) {
		t.Fatalf("live: %d text, %d grep, want %d", ix.text.Live(), ix.grep.Live(), len(final))
	}
	fresh := open(t, filepath.Join(dir, "fresh.db"))
	var items []index.Item
	for p, s := range final {
		items = append(items, item(p, s, semfs.Tags{}))
	}
	if err := fresh.Put(ctx, items...); err != nil {
		t.Fatal(err)
	}
	queries := [][]string{{"kestrel"}, {"hawk", "owl"}, {"three", "crane"}, {"note"}, {"heron", "zebra"}, {"n", "wren"}}
	search := func(s *Index) [][]index.ChunkHit {
		var out [][]index.ChunkHit
		for _, q := range queries {
			hits, err := s.SearchChunks(ctx, q, index.Filter{}, 15)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, hits)
		}
		return out
	}
	same := func(what string, got, want [][]index.ChunkHit) {
		t.Helper()
		for i := range want {
			if len(got[i]) != len(want[i]) {
				t.Fatalf("%s %v: %d hits, want %d", what, queries[i], len(got[i]), len(want[i]))
			}
			for j := range want[i] {
				g, w := got[i][j], want[i][j]
				if g.Path != w.Path && g.Score != w.Score || math.Abs(g.Score-w.Score) > 1e-9 {
					t.Fatalf("%s %v hit %d: %s %g, want %s %g", what, queries[i], j, g.Path, g.Score, w.Path, w.Score)
				}
			}
		}
	}
	want := search(fresh)
	if len(want[0]) == 0 {
		t.Fatal("no hits for kestrel")
	}
	same("merged", search(ix), want)
	ix.Close()
	ix = open(t, filepath.Join(dir, "i.db"))
	if len(ix.Repaired) > 0 {
		t.Fatalf("reopen repaired: %v", ix.Repaired)
	}
	same("reopened", search(ix), want)
	if r, err := ix.Check(ctx, false); err != nil || len(r.Problems) > 0 {
		t.Fatalf("check: %+v %v", r, err)
	}
}
