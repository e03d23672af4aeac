// Package indextest is the behaviour suite every index.Store runs (the
// embedded SQLite store and the PostgreSQL store): one suite, every store.
package indextest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
)

// Run runs the suite; open returns a new, empty store for each case.
func Run(t *testing.T, open func(t *testing.T) index.Store) {
	cases := []struct {
		name string
		fn   func(t *testing.T, s index.Store)
	}{
		{"MetadataRoundTrip", metadataRoundTrip},
		{"ContentSearchAndFilters", contentSearch},
		{"TagKeywords", tagKeywords},
		{"RemoveAndSubtree", removeRows},
		{"RenameMovesRowsChunksAndLinks", renameRows},
		{"EmbeddingQueue", embeddingQueue},
		{"UnchangedChunksKeepVectors", keepVectors},
		{"GrepCandidates", grepCandidates},
		{"MarkAllPending", markAllPending},
		{"HostileQueries", hostileQueries},
		{"RetagKeepsContent", retagKeepsContent},
		{"RenameFileAndSiblingPrefix", renameFileAndSibling},
		{"WalkOrderAndStop", walkOrderAndStop},
		{"SearchLimitAndRanking", searchLimitAndRanking},
		{"AllTokensFirst", allTokensFirst},
		{"BatchPut", batchPut},
		{"UnicodeAndLikeCharacters", unicodeAndLike},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := open(t)
			c.fn(t, s)
		})
	}
}

var ctx = context.Background()

func file(p, task, by string, apps ...string) index.File {
	now := time.Unix(1700000000, 123456789).UTC()
	return index.File{Meta: semfs.Meta{Path: p, Tags: semfs.Tags{Task: task, RelatedApps: apps}, CreatedBy: by,
		CreatedAt: now, UpdatedAt: now.Add(time.Second), Size: 10}, ModTime: now, State: index.StateIndexed}
}

func put(t *testing.T, s index.Store, f index.File, text string) {
	t.Helper()
	it := index.Item{File: f, TagText: index.TagText(f.Meta)}
	if text != "" {
		c, state, reason := index.Analyze(f.Path, []byte(text))
		it.Content = c
		it.File.State, it.File.Reason = state, reason
	}
	if err := s.Put(ctx, it); err != nil {
		t.Fatalf("Put(%s): %v", f.Path, err)
	}
}

func paths(hits []index.ChunkHit) []string {
	var out []string
	for _, h := range hits {
		if !slices.Contains(out, h.Path) {
			out = append(out, h.Path)
		}
	}
	sort.Strings(out)
	return out
}

func metadataRoundTrip(t *testing.T, s index.Store) {
	f := file("/notes/a.md", "auth bug", "notes", "editor", "ci")
	f.Summary, f.Provenance = "a summary", "from the ci run"
	f.Links = []string{"/notes/b.md"}
	f.Extra = map[string]string{"priority": "high"}
	f.Groups, f.Public = []string{"billing"}, false
	f.Hash = "abc"
	put(t, s, f, "")
	got, err := s.File(ctx, "/notes/a.md")
	if err != nil {
		t.Fatal(err)
	}
	if got.Task != f.Task || !slices.Equal(got.RelatedApps, f.RelatedApps) || got.Summary != f.Summary ||
		got.Provenance != f.Provenance || !slices.Equal(got.Links, f.Links) || got.Extra["priority"] != "high" ||
		!slices.Equal(got.Groups, f.Groups) || got.CreatedBy != "notes" || got.Hash != "abc" || got.Size != 10 ||
		!got.CreatedAt.Equal(f.CreatedAt) || !got.UpdatedAt.Equal(f.UpdatedAt) || !got.ModTime.Equal(f.ModTime) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, f)
	}
	if _, err := s.File(ctx, "/missing"); !errors.Is(err, semfs.ErrNotExist) {
		t.Fatalf("File(missing) = %v, want ErrNotExist", err)
	}
	put(t, s, file("/notes/b.md", "", "x"), "")
	put(t, s, file("/notes.md", "", "x"), "")
	put(t, s, file("/other/c.md", "", "x"), "")
	m, err := s.Files(ctx, []string{"/notes/a.md", "/other/c.md", "/nope"})
	if err != nil || len(m) != 2 || m["/other/c.md"].Path != "/other/c.md" {
		t.Fatalf("Files = %v, %v", m, err)
	}
	var walked []string
	if err := s.WalkFiles(ctx, "/notes", func(f index.File) error { walked = append(walked, f.Path); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(walked, []string{"/notes/a.md", "/notes/b.md"}) {
		t.Fatalf("WalkFiles(/notes) = %v (a sibling /notes.md must not be below /notes)", walked)
	}
}

func contentSearch(t *testing.T, s index.Store) {
	a := file("/docs/payments.md", "billing", "api")
	a.Extra = map[string]string{"team": "core"}
	put(t, s, a, "# Payments\n\nStripe webhooks retry failed charges.\n")
	put(t, s, file("/docs/auth.md", "login", "web"), "# Auth\n\nOAuth tokens expire after an hour.\n")
	put(t, s, file("/src/retry.go", "billing", "api"), "package retry\n\n// Retry webhooks with backoff.\nfunc Retry() {}\n")
	hits, err := s.SearchChunks(ctx, index.QueryTokens("webhooks"), index.Filter{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(hits); !slices.Equal(got, []string{"/docs/payments.md", "/src/retry.go"}) {
		t.Fatalf("search webhooks = %v", got)
	}
	for _, h := range hits {
		if h.StartLine < 1 || h.EndLine < h.StartLine || h.Text == "" || h.Score <= 0 {
			t.Fatalf("bad hit %+v", h)
		}
	}
	for name, c := range map[string]struct {
		f    index.Filter
		want []string
	}{
		"type":    {index.Filter{Type: "go"}, []string{"/src/retry.go"}},
		"path":    {index.Filter{PathPrefix: "/docs"}, []string{"/docs/payments.md"}},
		"task":    {index.Filter{Task: "billing", CreatedBy: "api"}, []string{"/docs/payments.md", "/src/retry.go"}},
		"tag":     {index.Filter{Tags: map[string]string{"team": "core"}}, []string{"/docs/payments.md"}},
		"nothing": {index.Filter{Task: "none"}, nil},
	} {
		hits, err := s.SearchChunks(ctx, index.QueryTokens("webhooks"), c.f, 10)
		if err != nil || !slices.Equal(paths(hits), c.want) {
			t.Errorf("%s filter: %v, %v; want %v", name, paths(hits), err, c.want)
		}
	}
	// A path word finds the file even when the body lacks it.
	hits, _ = s.SearchChunks(ctx, index.QueryTokens("payments"), index.Filter{}, 10)
	if len(hits) == 0 || hits[0].Path != "/docs/payments.md" {
		t.Fatalf("search payments = %v", paths(hits))
	}
	h, err := s.Chunk(ctx, index.ChunkKey("/docs/auth.md", 0))
	if err != nil || h.Path != "/docs/auth.md" {
		t.Fatalf("Chunk = %+v, %v", h, err)
	}
	if _, err := s.Chunk(ctx, index.ChunkKey("/docs/auth.md", 99)); !errors.Is(err, semfs.ErrNotExist) {
		t.Fatalf("Chunk(missing) = %v", err)
	}
}

func tagKeywords(t *testing.T, s index.Store) {
	put(t, s, file("/a/report.md", "Fix the AUTH bug", "notes", "code-editor"), "")
	put(t, s, file("/b/x.md", "", "ci"), "")
	for word, want := range map[string][]string{
		"auth":   {"/a/report.md"},
		"editor": {"/a/report.md"},
		"ci":     {"/b/x.md"},
		"x":      {"/a/report.md", "/b/x.md"}, // "fix", "x.md"
		"zzz":    nil,
		"report": {"/a/report.md"},
	} {
		got, err := s.TagKeywordCandidates(ctx, word)
		sort.Strings(got)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("TagKeywordCandidates(%q) = %v, %v; want %v", word, got, err, want)
		}
	}
}

func removeRows(t *testing.T, s index.Store) {
	put(t, s, file("/d/a.md", "", ""), "alpha words here\n")
	put(t, s, file("/d/sub/b.md", "", ""), "alpha more words\n")
	put(t, s, file("/d2/c.md", "", ""), "alpha again\n")
	if err := s.Remove(ctx, "/d/a.md", false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.File(ctx, "/d/a.md"); !errors.Is(err, semfs.ErrNotExist) {
		t.Fatalf("removed row still there: %v", err)
	}
	if err := s.Remove(ctx, "/d", true); err != nil {
		t.Fatal(err)
	}
	hits, _ := s.SearchChunks(ctx, []string{"alpha"}, index.Filter{}, 10)
	if got := paths(hits); !slices.Equal(got, []string{"/d2/c.md"}) {
		t.Fatalf("after removing /d, search = %v", got)
	}
	if got, _ := s.TagKeywordCandidates(ctx, "sub"); len(got) != 0 {
		t.Fatalf("removed row still a tag candidate: %v", got)
	}
}

func renameRows(t *testing.T, s index.Store) {
	put(t, s, file("/old/a.md", "t1", "app"), "zebra stripes\n")
	put(t, s, file("/old/deep/b.md", "", ""), "giraffe necks\n")
	linker := file("/index.md", "", "")
	linker.Links = []string{"/old/a.md", "/old/deep/b.md", "/elsewhere.md"}
	put(t, s, linker, "")
	put(t, s, file("/new/stale.md", "", ""), "replaced\n")
	if err := s.Rename(ctx, "/old", "/new"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.File(ctx, "/old/a.md"); !errors.Is(err, semfs.ErrNotExist) {
		t.Fatal("old row still present")
	}
	a, err := s.File(ctx, "/new/a.md")
	if err != nil || a.Task != "t1" || a.CreatedBy != "app" {
		t.Fatalf("moved row = %+v, %v", a, err)
	}
	if _, err := s.File(ctx, "/new/stale.md"); !errors.Is(err, semfs.ErrNotExist) {
		t.Fatal("a row below the destination survived the rename")
	}
	hits, _ := s.SearchChunks(ctx, []string{"giraffe"}, index.Filter{}, 10)
	if got := paths(hits); !slices.Equal(got, []string{"/new/deep/b.md"}) {
		t.Fatalf("search after rename = %v", got)
	}
	if _, err := s.Chunk(ctx, index.ChunkKey("/new/deep/b.md", 0)); err != nil {
		t.Fatalf("chunk key not moved: %v", err)
	}
	l, _ := s.File(ctx, "/index.md")
	if !slices.Equal(l.Links, []string{"/new/a.md", "/new/deep/b.md", "/elsewhere.md"}) {
		t.Fatalf("links not rewritten: %v", l.Links)
	}
	if got, _ := s.TagKeywordCandidates(ctx, "new/deep"); !slices.Equal(got, []string{"/new/deep/b.md"}) {
		t.Fatalf("tag keywords after rename = %v", got)
	}
}

func embeddingQueue(t *testing.T, s index.Store) {
	for _, p := range []string{"/q/1", "/q/2", "/q/3"} {
		put(t, s, file(p, "task "+p, ""), "")
	}
	n, err := s.CountNeedingEmbedding(ctx, embedding.SpaceTags)
	if err != nil || n != 3 {
		t.Fatalf("CountNeedingEmbedding = %d, %v", n, err)
	}
	page, err := s.NeedingEmbedding(ctx, embedding.SpaceTags, "/q/1", 10)
	if err != nil || len(page) != 2 || page[0].Key != "/q/2" || page[0].Text == "" {
		t.Fatalf("NeedingEmbedding after /q/1 = %+v, %v", page, err)
	}
	v1 := []float32{1, 0, 0}
	if err := s.SetEmbedding(ctx, embedding.SpaceTags, "/q/2", page[0].Text, v1); err != nil {
		t.Fatal(err)
	}
	// A stale text is ignored: the row changed since it was read.
	if err := s.SetEmbedding(ctx, embedding.SpaceTags, "/q/3", "not its text", []float32{0, 1, 0}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Vector(ctx, embedding.SpaceTags, "/q/3"); ok {
		t.Fatal("a vector for stale text was stored")
	}
	if v, ok := s.Vector(ctx, embedding.SpaceTags, "/q/2"); !ok || !slices.Equal(v, v1) {
		t.Fatalf("Vector = %v, %v", v, ok)
	}
	if n, _ := s.CountNeedingEmbedding(ctx, embedding.SpaceTags); n != 2 {
		t.Fatalf("after one embedding, %d need one", n)
	}
	hits, err := s.Nearest(ctx, embedding.SpaceTags, []float32{0.9, 0.1, 0}, 5, 0.5)
	if err != nil || len(hits) != 1 || hits[0].Key != "/q/2" {
		t.Fatalf("Nearest = %v, %v", hits, err)
	}
	// Same tag text: the vector stays fresh; new tag text: stale again.
	put(t, s, file("/q/2", "task /q/2", ""), "")
	if _, ok := s.Vector(ctx, embedding.SpaceTags, "/q/2"); !ok {
		t.Fatal("re-putting identical tag text dropped the vector")
	}
	put(t, s, file("/q/2", "another task", ""), "")
	if n, _ := s.CountNeedingEmbedding(ctx, embedding.SpaceTags); n != 3 {
		t.Fatalf("changed tag text not stale: %d need embedding", n)
	}
	var keys []string
	s.SetEmbedding(ctx, embedding.SpaceTags, "/q/1", index.TagText(file("/q/1", "task /q/1", "").Meta), []float32{0, 0, 1})
	if err := s.Vectors(ctx, embedding.SpaceTags, func(k string, v []float32) error { keys = append(keys, k); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(keys, "/q/1") || slices.Contains(keys, "/q/3") {
		t.Fatalf("Vectors = %v; want /q/1 (stored) and not /q/3 (never embedded)", keys)
	}
	if err := s.WipeVectors(ctx, embedding.SpaceTags); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.CountNeedingEmbedding(ctx, embedding.SpaceTags); n != 3 {
		t.Fatalf("after wipe %d need embedding, want 3", n)
	}
	if hits, _ := s.Nearest(ctx, embedding.SpaceTags, []float32{0, 0, 1}, 5, 0); len(hits) != 0 {
		t.Fatalf("vectors survived the wipe: %v", hits)
	}
	if _, err := s.NeedingEmbedding(ctx, "nope", "", 1); err == nil {
		t.Fatal("unknown space accepted")
	}
}

func keepVectors(t *testing.T, s index.Store) {
	text := "# One\n\nfirst section\n\n# Two\n\nsecond section\n"
	put(t, s, file("/k.md", "", ""), text)
	page, _ := s.NeedingEmbedding(ctx, embedding.SpaceContent, "", 10)
	if len(page) != 2 {
		t.Fatalf("content rows needing vectors = %v", page)
	}
	for _, p := range page {
		s.SetEmbedding(ctx, embedding.SpaceContent, p.Key, p.Text, []float32{1, 0})
	}
	put(t, s, file("/k.md", "", ""), "# One\n\nfirst section\n\n# Two\n\nsecond section changed\n")
	page, _ = s.NeedingEmbedding(ctx, embedding.SpaceContent, "", 10)
	if len(page) != 1 || page[0].Key != index.ChunkKey("/k.md", 1) {
		t.Fatalf("after changing one section, needing = %+v (the unchanged one must keep its vector)", page)
	}
}

func grepCandidates(t *testing.T, s index.Store) {
	put(t, s, file("/g/a.txt", "", ""), "the quick brown fox\n")
	put(t, s, file("/g/b.txt", "", ""), "lazy dogs sleep\n")
	pend := file("/g/p.txt", "", "")
	pend.State = index.StatePending
	put(t, s, pend, "")
	q, ok, err := index.PlanGrep("quick.*fox", false, false)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	got, pending, err := s.GrepCandidates(ctx, "/g", q)
	if err != nil || !slices.Equal(got, []string{"/g/a.txt", "/g/p.txt"}) || pending != 1 {
		t.Fatalf("candidates = %v, pending %d, %v; want a.txt plus the pending file", got, pending, err)
	}
	q, _, _ = index.PlanGrep("DOGS|cats", false, true)
	got, _, _ = s.GrepCandidates(ctx, "/", q)
	if !slices.Equal(got, []string{"/g/b.txt", "/g/p.txt"}) {
		t.Fatalf("case-folded alternation candidates = %v", got)
	}
	got, _, _ = s.GrepCandidates(ctx, "/", nil)
	if len(got) != 3 {
		t.Fatalf("nil query candidates = %v", got)
	}
}

func markAllPending(t *testing.T, s index.Store) {
	put(t, s, file("/m/a.md", "", ""), "some text\n")
	if err := s.MarkAllPending(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := s.PendingFiles(ctx, 10)
	if err != nil || !slices.Equal(p, []string{"/m/a.md"}) {
		t.Fatalf("PendingFiles = %v, %v", p, err)
	}
	if hits, _ := s.SearchChunks(ctx, []string{"text"}, index.Filter{}, 10); len(hits) != 0 {
		t.Fatalf("derived data survived MarkAllPending: %v", hits)
	}
	r, err := s.Check(ctx, false)
	if err != nil || r.Files != 1 || r.Pending != 1 || len(r.Problems) != 0 {
		t.Fatalf("Check = %+v, %v", r, err)
	}
}

func hostileQueries(t *testing.T, s index.Store) {
	put(t, s, file("/h.md", "", ""), "plain text\n")
	for _, q := range []string{`" OR 1=1; --`, `*`, `NEAR(a b)`, `'); DROP TABLE files; --`, "\x00", `a:b ^c -d`, `\`, `%_`} {
		if _, err := s.SearchChunks(ctx, index.QueryTokens(q), index.Filter{}, 10); err != nil {
			t.Errorf("SearchChunks(%q): %v", q, err)
		}
		if _, err := s.TagKeywordCandidates(ctx, q); err != nil {
			t.Errorf("TagKeywordCandidates(%q): %v", q, err)
		}
	}
	if _, err := s.File(ctx, "/h.md"); err != nil {
		t.Fatalf("store damaged by hostile queries: %v", err)
	}
}

// retagKeepsContent: a Put without Content changes metadata and keeps the
// derived data; a Put with new Content replaces it.
func retagKeepsContent(t *testing.T, s index.Store) {
	put(t, s, file("/r/a.md", "first task", "x"), "walrus tusks\n")
	put(t, s, file("/r/a.md", "second task", "x"), "")
	got, err := s.File(ctx, "/r/a.md")
	if err != nil || got.Task != "second task" {
		t.Fatalf("retagged row = %+v, %v", got, err)
	}
	if hits, _ := s.SearchChunks(ctx, []string{"walrus"}, index.Filter{}, 10); !slices.Equal(paths(hits), []string{"/r/a.md"}) {
		t.Fatalf("a metadata-only Put dropped the content: %v", paths(hits))
	}
	if c, _ := s.TagKeywordCandidates(ctx, "first"); len(c) != 0 {
		t.Fatalf("old task still a keyword candidate: %v", c)
	}
	if c, _ := s.TagKeywordCandidates(ctx, "second"); !slices.Equal(c, []string{"/r/a.md"}) {
		t.Fatalf("new task not a keyword candidate: %v", c)
	}
	put(t, s, file("/r/a.md", "second task", "x"), "otter whiskers\n")
	if hits, _ := s.SearchChunks(ctx, []string{"walrus"}, index.Filter{}, 10); len(hits) != 0 {
		t.Fatalf("replaced content still found: %v", paths(hits))
	}
	if hits, _ := s.SearchChunks(ctx, []string{"otter"}, index.Filter{}, 10); !slices.Equal(paths(hits), []string{"/r/a.md"}) {
		t.Fatalf("new content not found: %v", paths(hits))
	}
}

// renameFileAndSibling: renaming one file replaces the destination file,
// and a path that merely shares a prefix with the source does not move.
func renameFileAndSibling(t *testing.T, s index.Store) {
	put(t, s, file("/x/a.md", "mine", ""), "heron feathers\n")
	put(t, s, file("/x/b.md", "theirs", ""), "pelican beaks\n")
	put(t, s, file("/x/a.md.bak", "backup", ""), "")
	put(t, s, file("/x2/c.md", "", ""), "")
	if err := s.Rename(ctx, "/x/a.md", "/x/b.md"); err != nil {
		t.Fatal(err)
	}
	b, err := s.File(ctx, "/x/b.md")
	if err != nil || b.Task != "mine" {
		t.Fatalf("destination after rename = %+v, %v", b, err)
	}
	if _, err := s.File(ctx, "/x/a.md.bak"); err != nil {
		t.Fatalf("a sibling sharing the prefix moved or vanished: %v", err)
	}
	if hits, _ := s.SearchChunks(ctx, []string{"pelican"}, index.Filter{}, 10); len(hits) != 0 {
		t.Fatalf("the replaced file's content survived: %v", paths(hits))
	}
	if hits, _ := s.SearchChunks(ctx, []string{"heron"}, index.Filter{}, 10); !slices.Equal(paths(hits), []string{"/x/b.md"}) {
		t.Fatalf("moved content = %v", paths(hits))
	}
	if err := s.Rename(ctx, "/x", "/y"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.File(ctx, "/x2/c.md"); err != nil {
		t.Fatalf("/x2 moved with /x: %v", err)
	}
	var all []string
	s.WalkFiles(ctx, "/", func(f index.File) error { all = append(all, f.Path); return nil })
	if !slices.Equal(all, []string{"/x2/c.md", "/y/a.md.bak", "/y/b.md"}) {
		t.Fatalf("rows after renames = %v", all)
	}
}

// walkOrderAndStop: WalkFiles visits in path order, a file root visits
// that file, and an error from fn stops the walk and is returned.
func walkOrderAndStop(t *testing.T, s index.Store) {
	for _, p := range []string{"/w/b.md", "/w/a/z.md", "/w/a.md", "/w.md", "/v.md"} {
		put(t, s, file(p, "", ""), "")
	}
	var got []string
	if err := s.WalkFiles(ctx, "/", func(f index.File) error { got = append(got, f.Path); return nil }); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(got)
	sort.Strings(want)
	if len(got) != 5 || !slices.Equal(got, want) {
		t.Fatalf("WalkFiles(/) = %v, want 5 rows in path order", got)
	}
	got = nil
	s.WalkFiles(ctx, "/w/a.md", func(f index.File) error { got = append(got, f.Path); return nil })
	if !slices.Equal(got, []string{"/w/a.md"}) {
		t.Fatalf("WalkFiles(file) = %v", got)
	}
	stop := errors.New("stop")
	n := 0
	err := s.WalkFiles(ctx, "/", func(f index.File) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("WalkFiles with a failing fn: %v after %d rows", err, n)
	}
}

// searchLimitAndRanking: limit caps the hits; hits come best first (a
// short chunk ranks above longer ones holding the word as often); a file
// path prefix filter that names a file keeps only that file. (Chunks
// holding every query word: allTokensFirst.)
func searchLimitAndRanking(t *testing.T, s index.Store) {
	for i := range 6 {
		put(t, s, file(fmt.Sprintf("/s/one%d.md", i), "", ""), "kestrel hovering over fields\n")
	}
	put(t, s, file("/s/short.md", "", ""), "kestrel\n")
	hits, err := s.SearchChunks(ctx, index.QueryTokens("kestrel"), index.Filter{}, 3)
	if err != nil || len(hits) != 3 {
		t.Fatalf("limit 3: %d hits, %v", len(hits), err)
	}
	if hits[0].Path != "/s/short.md" {
		t.Fatalf("the shortest chunk holding the word ranks %v", paths(hits))
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Fatalf("hits not best first: %+v", hits)
		}
	}
	hits, _ = s.SearchChunks(ctx, index.QueryTokens("kestrel"), index.Filter{PathPrefix: "/s/one3.md"}, 10)
	if !slices.Equal(paths(hits), []string{"/s/one3.md"}) {
		t.Fatalf("file path filter = %v", paths(hits))
	}
	if hits, _ := s.SearchChunks(ctx, index.QueryTokens("kestrel"), index.Filter{}, 0); len(hits) != 0 {
		t.Fatalf("limit 0 returned %d hits", len(hits))
	}
}

// batchPut: one Put of many items stores all of them, each with its own
// content.
func batchPut(t *testing.T, s index.Store) {
	var items []index.Item
	for i := range 50 {
		f := file(fmt.Sprintf("/batch/%02d.md", i), fmt.Sprintf("task%02d", i), "bulk")
		c, state, reason := index.Analyze(f.Path, []byte(fmt.Sprintf("item number%02d body\n", i)))
		f.State, f.Reason = state, reason
		items = append(items, index.Item{File: f, TagText: index.TagText(f.Meta), Content: c})
	}
	if err := s.Put(ctx, items...); err != nil {
		t.Fatal(err)
	}
	n := 0
	s.WalkFiles(ctx, "/batch", func(index.File) error { n++; return nil })
	if n != 50 {
		t.Fatalf("%d of 50 rows stored", n)
	}
	hits, _ := s.SearchChunks(ctx, []string{"number37"}, index.Filter{}, 10)
	if !slices.Equal(paths(hits), []string{"/batch/37.md"}) {
		t.Fatalf("search for one item's word = %v", paths(hits))
	}
	if c, _ := s.TagKeywordCandidates(ctx, "task49"); !slices.Equal(c, []string{"/batch/49.md"}) {
		t.Fatalf("keyword candidates = %v", c)
	}
}

// unicodeAndLike: non-ASCII paths and tags round-trip and match case-
// insensitively; LIKE wildcards in a keyword are literal.
func unicodeAndLike(t *testing.T, s index.Store) {
	put(t, s, file("/ü/Ärger.md", "Überprüfung", "bot"), "")
	put(t, s, file("/p/100%_done.md", "", ""), "")
	put(t, s, file("/p/100x.md", "", ""), "")
	if c, _ := s.TagKeywordCandidates(ctx, "überprüfung"); !slices.Equal(c, []string{"/ü/Ärger.md"}) {
		t.Fatalf("non-ASCII keyword = %v", c)
	}
	if f, err := s.File(ctx, "/ü/Ärger.md"); err != nil || f.Task != "Überprüfung" {
		t.Fatalf("non-ASCII row = %+v, %v", f, err)
	}
	if c, _ := s.TagKeywordCandidates(ctx, "0%_d"); !slices.Equal(c, []string{"/p/100%_done.md"}) {
		t.Fatalf("keyword with LIKE wildcards = %v", c)
	}
}

// allTokensFirst: chunks holding every query token are returned before (and
// instead of) chunks holding one token, however strongly that one matches;
// too few all-token chunks fall back to any token.
func allTokensFirst(t *testing.T, s index.Store) {
	put(t, s, file("/loud.md", "", ""), "# Alpha\n\nalpha alpha alpha alpha alpha alpha.\n")
	put(t, s, file("/both1.md", "", ""), "# Notes\n\nalpha and beta together in a longer paragraph of words.\n")
	put(t, s, file("/both2.md", "", ""), "# More\n\nbeta, then alpha, in another fairly long paragraph.\n")
	put(t, s, file("/beta.md", "", ""), "# Beta\n\nbeta only.\n")
	limit := 8
	if index.AllTokensEnough(limit) > 2 {
		t.Fatalf("AllTokensEnough(%d) = %d: the case below assumes two all-token chunks are enough", limit, index.AllTokensEnough(limit))
	}
	hits, err := s.SearchChunks(ctx, index.QueryTokens("alpha beta"), index.Filter{}, limit)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(hits); !slices.Equal(got, []string{"/both1.md", "/both2.md"}) {
		t.Fatalf("search alpha beta = %v, want only the files holding both words", got)
	}
	// AnyToken ranks every chunk holding either word.
	hits, err = s.SearchChunks(ctx, index.QueryTokens("alpha beta"), index.Filter{AnyToken: true}, limit)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(hits); !slices.Equal(got, []string{"/beta.md", "/both1.md", "/both2.md", "/loud.md"}) {
		t.Fatalf("search alpha beta, any token = %v, want every file holding either word", got)
	}
	// No chunk holds alpha and gamma: every alpha chunk is a hit.
	put(t, s, file("/gamma.md", "", ""), "# Gamma\n\ngamma rays.\n")
	hits, err = s.SearchChunks(ctx, index.QueryTokens("alpha gamma"), index.Filter{}, limit)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(hits); !slices.Equal(got, []string{"/both1.md", "/both2.md", "/gamma.md", "/loud.md"}) {
		t.Fatalf("search alpha gamma = %v, want every file holding either word", got)
	}
	// One all-token chunk (fewer than AllTokensEnough(40)) falls back too.
	if index.AllTokensEnough(40) < 2 {
		t.Fatalf("AllTokensEnough(40) = %d: the case below needs two", index.AllTokensEnough(40))
	}
	hits, err = s.SearchChunks(ctx, index.QueryTokens("rays gamma"), index.Filter{}, 40)
	if err != nil || len(hits) != 1 || hits[0].Path != "/gamma.md" {
		t.Fatalf("search rays gamma = %v, %v", paths(hits), err)
	}
}
