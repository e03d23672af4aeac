package docfs_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/docfs"
	"github.com/semfs/semfs/docfs/sqlstore"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/semfstest"
)

// seed 003's table: which pages each group may see.
var site = map[string]string{
	"/auth/oauth.mdx":             "# OAuth\n\nUse OAuth 2.0.\n\n## Scopes\n\nread, write\n",
	"/auth/api-keys.mdx":          "---\ntitle: API keys\n---\n# API keys\n\nRotate them.\n",
	"/internal/billing.mdx":       "# Billing internals\n\nStripe webhooks.\n",
	"/api-reference/users.mdx":    "# Users\n\n```\n# not a heading\n```\n\n## List users\n\nGET /users\n",
	"/api-reference/payments.mdx": "---\ngroups: [billing]\n---\n# Payments\n\nPOST /payments\n",
	"/.access.json":               `[{"path": "internal/**", "groups": ["admin", "billing"]}]`,
	"/notes.go":                   "package notes\n",
}

func newStore(t *testing.T) *sqlstore.Store {
	t.Helper()
	s, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), "docs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func ingest(t *testing.T, files map[string]string, opts docfs.IngestOptions) (*docfs.FS, docfs.IngestReport) {
	t.Helper()
	ctx := context.Background()
	src := memfs.New()
	for p, c := range files {
		if err := semfs.WriteFile(ctx, src, p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	store := newStore(t)
	rep, err := docfs.Ingest(ctx, store, "docs", src, opts)
	if err != nil {
		t.Fatalf("Ingest: %v", err)
	}
	f, err := docfs.Open(ctx, store, "docs", docfs.Options{Blobs: opts.Blobs})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return f, rep
}

func TestIngestAndReassemble(t *testing.T) {
	ctx := context.Background()
	f, rep := ingest(t, site, docfs.IngestOptions{})
	if rep.Pages != 5 {
		t.Fatalf("pages = %d, want 5 (the .go file and the sidecar are not pages)", rep.Pages)
	}
	for p, want := range site {
		if !strings.HasSuffix(p, ".mdx") {
			continue
		}
		got, err := semfs.ReadFile(ctx, f, p)
		if err != nil || string(got) != want {
			t.Errorf("cat %s = %q, %v; want %q", p, got, err, want)
		}
	}
	// Sections became chunks: the fenced "# not a heading" did not split.
	chunks, _ := f.Store().Chunks(ctx, "docs", "/api-reference/users.mdx")
	if len(chunks) != 2 || !strings.HasPrefix(chunks[1], "## List users") {
		t.Fatalf("users.mdx chunks = %q", chunks)
	}
	m, err := f.Meta(ctx, "/internal/billing.mdx")
	if err != nil || !slices.Equal(m.Groups, []string{"admin", "billing"}) {
		t.Fatalf("billing groups from the sidecar = %v, %v", m.Groups, err)
	}
	m, _ = f.Meta(ctx, "/api-reference/payments.mdx")
	if !slices.Equal(m.Groups, []string{"billing"}) {
		t.Fatalf("payments groups from front matter = %v", m.Groups)
	}
	if m, _ := f.Meta(ctx, "/auth/api-keys.mdx"); m.Summary != "API keys" {
		t.Fatalf("title = %q", m.Summary)
	}
}

func TestEveryWriteIsReadOnly(t *testing.T) {
	ctx := context.Background()
	f, _ := ingest(t, site, docfs.IngestOptions{})
	for name, err := range map[string]error{
		"write":  semfs.WriteFile(ctx, f, "/auth/oauth.mdx", []byte("x"), 0o644),
		"create": semfs.WriteFile(ctx, f, "/new.md", []byte("x"), 0o644),
		"mkdir":  semfs.Mkdir(ctx, f, "/d", 0o755),
		"remove": semfs.Remove(ctx, f, "/auth/oauth.mdx"),
		"rmall":  semfs.RemoveAll(ctx, f, "/auth"),
		"rename": semfs.Rename(ctx, f, "/auth/oauth.mdx", "/x.mdx"),
		"tag":    semfs.SetTags(ctx, f, "/auth/oauth.mdx", semfs.Tags{Task: "t"}),
	} {
		if !errors.Is(err, semfs.ErrReadOnly) {
			t.Errorf("%s: %v, want ErrReadOnly", name, err)
		}
	}
	if got, _ := semfs.ReadFile(ctx, f, "/auth/oauth.mdx"); string(got) != site["/auth/oauth.mdx"] {
		t.Fatal("a refused write changed a page")
	}
}

func TestGroupsPruneTheTree(t *testing.T) {
	ctx := context.Background()
	f, _ := ingest(t, site, docfs.IngestOptions{})
	view := access.New(f, access.Policy{Default: access.Read})
	as := func(groups ...string) context.Context {
		return semfs.WithPrincipal(ctx, semfs.Principal{ID: "s", Groups: groups})
	}
	// seed 003's table: public sees oauth, api-keys, users; not billing or payments.
	pub, err := semfs.FileList(as(), view, "/")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/api-reference/users.mdx", "/auth/api-keys.mdx", "/auth/oauth.mdx"}
	if !slices.Equal(pub, want) {
		t.Fatalf("public session sees %v, want %v", pub, want)
	}
	if _, err := view.Stat(as(), "/internal/billing.mdx"); !errors.Is(err, semfs.ErrNotExist) {
		t.Fatalf("hidden page stat: %v, want ErrNotExist", err)
	}
	if entries, _ := view.ReadDir(as(), "/"); slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == "internal" }) {
		t.Fatal("a directory holding only hidden pages is listed")
	}
	billing, _ := semfs.FileList(as("billing"), view, "/")
	if len(billing) != 5 {
		t.Fatalf("billing session sees %v, want all 5 pages", billing)
	}
}

func TestLazyPages(t *testing.T) {
	ctx := context.Background()
	blobs := memfs.New()
	big := strings.Repeat("# Section\n\nlorem ipsum dolor sit amet\n", 2000)
	f, rep := ingest(t, map[string]string{"/spec/openapi.md": big, "/small.md": "hi\n"},
		docfs.IngestOptions{LazyOver: 1 << 10, Blobs: blobs})
	if rep.Lazy != 1 {
		t.Fatalf("lazy pages = %d, want 1", rep.Lazy)
	}
	if chunks, _ := f.Store().Chunks(ctx, "docs", "/spec/openapi.md"); len(chunks) != 0 {
		t.Fatalf("a lazy page has %d stored chunks", len(chunks))
	}
	got, err := semfs.ReadFile(ctx, f, "/spec/openapi.md")
	if err != nil || string(got) != big {
		t.Fatalf("lazy read: %d bytes, %v", len(got), err)
	}
	if info, _ := f.Stat(ctx, "/spec/openapi.md"); info.Size() != int64(len(big)) {
		t.Fatalf("lazy page size = %d", info.Size())
	}
	// Once read, the page is cached: losing the blob does not matter.
	semfs.Remove(ctx, blobs, "/docs/spec/openapi.md")
	if got, err := semfs.ReadFile(ctx, f, "/spec/openapi.md"); err != nil || len(got) != len(big) {
		t.Fatalf("cached lazy read: %d, %v", len(got), err)
	}
}

func TestDamagedStoreGivesClearErrors(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	if _, err := docfs.Open(ctx, store, "nope", docfs.Options{}); !errors.Is(err, semfs.ErrNotExist) || !strings.Contains(err.Error(), "semfs docs ingest") {
		t.Fatalf("missing site: %v", err)
	}
	// A page whose record says more bytes than its chunks hold.
	pages := []docfs.Page{{Path: "/a.md", Size: 10, Chunks: 1}}
	if err := store.ReplaceSite(ctx, "s", pages, map[string][]string{"/a.md": {"short"}}); err != nil {
		t.Fatal(err)
	}
	f, err := docfs.Open(ctx, store, "s", docfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := semfs.ReadFile(ctx, f, "/a.md"); err == nil || !strings.Contains(err.Error(), "re-ingest") {
		t.Fatalf("short page: %v", err)
	}
	bad := []docfs.Page{{Path: "../x", Size: 0}}
	store.ReplaceSite(ctx, "bad", bad, nil)
	if _, err := docfs.Open(ctx, store, "bad", docfs.Options{}); err == nil {
		t.Fatal("a page with an invalid path was accepted")
	}
}

func TestSplitSectionsIsExact(t *testing.T) {
	texts := []string{
		"", "no newline", "# a\nb\n# c\n", "x\n```\n# in code\n```\n# out\n",
		strings.Repeat("é", 50000), strings.Repeat("line\n", 10000) + "# h\n" + strings.Repeat("z", 40000),
	}
	for _, text := range texts {
		chunks := docfs.SplitSections(text, 1000)
		if strings.Join(chunks, "") != text {
			t.Fatalf("chunks of %.20q do not reassemble", text)
		}
		for _, c := range chunks {
			if len(c) > 1000 || !utf8.ValidString(c) || c == "" {
				t.Fatalf("bad chunk: %d bytes, valid UTF-8 %v", len(c), utf8.ValidString(c))
			}
		}
	}
}

func TestConformanceReadOnly(t *testing.T) {
	semfstest.Run(t, nil, semfstest.ReadOnly(), semfstest.Seed(func(tb semfstest.TB, files map[string][]byte) semfs.FS {
		ctx := context.Background()
		src := memfs.New()
		for p, c := range files {
			if err := semfs.WriteFile(ctx, src, p, c, 0o644); err != nil {
				tb.Fatalf("seed: %v", err)
			}
		}
		store, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "docs.db"))
		if err != nil {
			tb.Fatalf("store: %v", err)
		}
		t.Cleanup(func() { store.Close() })
		// Every seeded file is a page, whatever its extension.
		var exts []string
		for p := range files {
			e := p[strings.LastIndexByte(p, '/')+1:]
			if i := strings.LastIndexByte(e, '.'); i >= 0 {
				exts = append(exts, e[i+1:])
			} else {
				exts = append(exts, "")
			}
		}
		if _, err := docfs.Ingest(ctx, store, "s", src, docfs.IngestOptions{Extensions: exts, MaxChunk: 4096}); err != nil {
			tb.Fatalf("ingest: %v", err)
		}
		f, err := docfs.Open(ctx, store, "s", docfs.Options{})
		if err != nil {
			tb.Fatalf("open: %v", err)
		}
		return f
	}))
}
