package access_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/memfs"
)

func TestRuleMatching(t *testing.T) {
	f := access.New(memfs.New(), access.Policy{
		Default: access.None,
		Rules: []access.Rule{
			{Path: "/corpus", Access: access.Read},
			{Path: "/work", Access: access.Write},
			{Path: "/**/*.locked.md", Access: access.Read},
			{Path: "/work/tmp/*", Access: access.None},
			{Path: "/work/tmp/keep?.txt", Access: access.Write},
			{Path: "/pub/**/draft", Access: access.Write},
			{Path: "/x/[ab]c", Access: access.Read},
		},
	})
	for p, want := range map[string]access.Access{
		"/":                        access.None,
		"/corpus":                  access.Read,
		"/corpus/a/b.md":           access.Read,
		"/corpusx":                 access.None,
		"/work":                    access.Write,
		"/work/a/b":                access.Write,
		"/work/a/b.locked.md":      access.Read,
		"/a.locked.md":             access.Read,
		"/work/x.locked.md/inside": access.Read, // a rule covers a subtree
		"/work/tmp":                access.Write,
		"/work/tmp/junk":           access.None,
		"/work/tmp/junk/deeper":    access.None,
		"/work/tmp/keep1.txt":      access.Write,
		"/work/tmp/keep10.txt":     access.None,
		"/pub/draft":               access.Write,
		"/pub/a/b/draft/x":         access.Write,
		"/pub/a/b/final":           access.None,
		"/x/ac":                    access.Read,
		"/x/cc":                    access.None,
		"bad//path":                access.Unset,
	} {
		if got := f.Effective(p); got != want {
			t.Errorf("Effective(%q) = %v, want %v", p, got, want)
		}
	}
	if got := access.New(memfs.New(), access.Policy{}).Effective("/any"); got != access.Write {
		t.Errorf("unset default = %v, want write", got)
	}
	for _, bad := range []access.Policy{
		{Rules: []access.Rule{{Path: "relative", Access: access.Read}}},
		{Rules: []access.Rule{{Path: "/a", Access: access.Unset}}},
		{Rules: []access.Rule{{Path: "/a/../b", Access: access.Read}}},
		{Rules: []access.Rule{{Path: "/a/[", Access: access.Read}}},
		{Default: 9},
		{Quota: -1},
	} {
		if bad.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want an error", bad)
		}
	}
	if a, err := access.ParseAccess("Read"); a != access.Read || err != nil {
		t.Errorf("ParseAccess(Read) = %v, %v", a, err)
	}
	if _, err := access.ParseAccess("rw"); err == nil {
		t.Error("ParseAccess(rw) succeeded")
	}
}

// seed004 is the policy from seed 004's withAccess example over a small
// tree.
func seed004(t *testing.T) (*access.FS, *memfs.FS) {
	t.Helper()
	inner := memfs.FromMap(map[string]string{
		"/corpus/guide.md":           "guide",
		"/work/notes.md":             "notes",
		"/work/plan.locked.md":       "plan",
		"/secret/keys.txt":           "keys",
		"/top.txt":                   "top",
		"/deep/a/b/c/spec.locked.md": "spec",
		"/deep/a/other.txt":          "other",
	})
	return access.New(inner, access.Policy{
		Default: access.None,
		Rules: []access.Rule{
			{Path: "/corpus", Access: access.Read, Note: "curated upstream"},
			{Path: "/work", Access: access.Write},
			{Path: "/**/*.locked.md", Access: access.Read},
		},
	}), inner
}

func TestListingFilters(t *testing.T) {
	f, _ := seed004(t)
	// /secret and /top.txt are left out; /deep leads to a locked file.
	wantNames(t, f, ctx, "/", "corpus/", "deep/", "work/")
	wantNames(t, f, ctx, "/work", "notes.md", "plan.locked.md")
	wantNames(t, f, ctx, "/deep/a", "b/")
	files := fileList(t, f, ctx, "/")
	want := []string{"/corpus/guide.md", "/deep/a/b/c/spec.locked.md", "/work/notes.md", "/work/plan.locked.md"}
	if !slices.Equal(files, want) {
		t.Errorf("Files = %v, want %v", files, want)
	}
}

func TestNamedReadRefused(t *testing.T) {
	f, _ := seed004(t)
	// A real file and a made-up one get the same answer: no probe.
	for _, p := range []string{"/secret/keys.txt", "/secret/none.txt", "/top.txt", "/nothing.txt", "/deep/a/other.txt"} {
		_, err := f.ReadFile(ctx, p)
		pe := wantErr(t, err, semfs.ErrPermission, p)
		if strings.Contains(pe.Error(), "no such") {
			t.Errorf("refusal %q reads like absence", pe)
		}
		_, err = f.Open(ctx, p)
		wantErr(t, err, semfs.ErrPermission, p)
		_, err = f.Stat(ctx, p)
		wantErr(t, err, semfs.ErrPermission, p)
		if ok, err := semfs.Exists(ctx, f, p); ok || err != nil {
			t.Errorf("Exists(%s) = %v, %v; want false", p, ok, err)
		}
		_, err = f.Meta(ctx, p)
		wantErr(t, err, semfs.ErrPermission, p)
	}
	_, err := f.ReadDir(ctx, "/secret")
	wantErr(t, err, semfs.ErrPermission, "/secret")
	if got := string(must(f.ReadFile(ctx, "/corpus/guide.md"))); got != "guide" {
		t.Errorf("granted read = %q", got)
	}
	// The note explains a write refusal.
	pe := wantErr(t, f.WriteFile(ctx, "/corpus/new.md", nil, 0o644), semfs.ErrPermission, "/corpus/new.md")
	if !strings.Contains(pe.Error(), "curated upstream") {
		t.Errorf("refusal %q lacks the rule's note", pe)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestTraversalIsNotReadAccess(t *testing.T) {
	inner := memfs.FromMap(map[string]string{
		"/a/b/c/granted.txt": "g",
		"/a/b/sibling.txt":   "s",
		"/a/x.txt":           "x",
		"/a/other/y.txt":     "y",
		"/z.txt":             "z",
	})
	f := access.New(inner, access.Policy{Default: access.None, Rules: []access.Rule{{Path: "/a/b/c", Access: access.Read}}})
	wantNames(t, f, ctx, "/", "a/")
	wantNames(t, f, ctx, "/a", "b/")
	wantNames(t, f, ctx, "/a/b", "c/")
	wantNames(t, f, ctx, "/a/b/c", "granted.txt")
	for _, p := range []string{"/a", "/a/b"} {
		if info, err := f.Stat(ctx, p); err != nil || !info.IsDir() {
			t.Errorf("Stat(%s) = %v, %v; want the directory", p, info, err)
		}
		if ok, _ := f.Exists(ctx, p); !ok {
			t.Errorf("Exists(%s) = false", p)
		}
	}
	for _, p := range []string{"/a/x.txt", "/a/b/sibling.txt", "/a/other"} {
		_, err := f.Stat(ctx, p)
		wantErr(t, err, semfs.ErrPermission, p)
	}
	_, err := f.ReadFile(ctx, "/a/x.txt")
	wantErr(t, err, semfs.ErrPermission, "/a/x.txt")
	_, err = f.ReadDir(ctx, "/a/other")
	wantErr(t, err, semfs.ErrPermission, "/a/other")
	if got := string(must(f.ReadFile(ctx, "/a/b/c/granted.txt"))); got != "g" {
		t.Errorf("granted file = %q", got)
	}
	// A traversed directory is not writable.
	wantErr(t, f.WriteFile(ctx, "/a/new.txt", nil, 0o644), semfs.ErrPermission, "/a/new.txt")
}

func TestRootAlwaysExists(t *testing.T) {
	f := access.New(memfs.FromMap(map[string]string{"/a/b.txt": "b", "/c.txt": "c"}), access.Policy{Default: access.None})
	if info, err := f.Stat(ctx, "/"); err != nil || !info.IsDir() {
		t.Errorf("Stat(/) = %v, %v", info, err)
	}
	wantNames(t, f, ctx, "/")
	if files := fileList(t, f, ctx, "/"); len(files) != 0 {
		t.Errorf("Files(/) = %v, want none", files)
	}
	if ok, err := f.Exists(ctx, "/"); !ok || err != nil {
		t.Errorf("Exists(/) = %v, %v", ok, err)
	}
	_, err := f.Open(ctx, "/")
	wantErr(t, err, semfs.ErrIsDir, "/")
	_, err = f.Stat(ctx, "/a")
	wantErr(t, err, semfs.ErrPermission, "/a")
}

func TestRecursiveRemoveRefusedWhole(t *testing.T) {
	inner := memfs.FromMap(map[string]string{
		"/work/a.txt":              "a",
		"/work/sub/b.txt":          "b",
		"/work/sub/keep.locked.md": "k",
		"/work/z.txt":              "z",
	})
	f := access.New(inner, access.Policy{Rules: []access.Rule{{Path: "/**/*.locked.md", Access: access.Read}}})
	before := fileList(t, inner, ctx, "/")
	pe := wantErr(t, f.RemoveAll(ctx, "/work"), semfs.ErrPermission, "/work")
	if !strings.Contains(pe.Error(), "/work/sub/keep.locked.md") || !strings.Contains(pe.Error(), "nothing was changed") {
		t.Errorf("refusal %q should name the readable protected path", pe)
	}
	if after := fileList(t, inner, ctx, "/"); !slices.Equal(before, after) {
		t.Errorf("refused RemoveAll changed the tree: %v -> %v", before, after)
	}
	wantErr(t, f.RemoveAll(ctx, "/"), semfs.ErrPermission, "/")
	// Without the protected file, the same removal goes through.
	if err := f.RemoveAll(ctx, "/work/a.txt"); err != nil {
		t.Fatal(err)
	}
	if err := inner.Remove(ctx, "/work/sub/keep.locked.md"); err != nil {
		t.Fatal(err)
	}
	if err := f.RemoveAll(ctx, "/work"); err != nil {
		t.Fatalf("RemoveAll without protected paths: %v", err)
	}
	if ok, _ := semfs.Exists(ctx, inner, "/work"); ok {
		t.Error("/work still exists")
	}
}

func TestTotalSizeIsWholeTree(t *testing.T) {
	f, inner := seed004(t)
	got, err := f.TotalSize(ctx)
	want, _ := inner.TotalSize(ctx)
	if err != nil || got != want || want == 0 {
		t.Errorf("TotalSize = %d, %v; want the whole tree's %d", got, err, want)
	}
}

func TestQuotaWriteFile(t *testing.T) {
	inner := memfs.FromMap(map[string]string{"/hidden/big.bin": strings.Repeat("x", 60)})
	f := access.New(inner, access.Policy{Quota: 100, Rules: []access.Rule{{Path: "/hidden", Access: access.None}}})
	if err := f.WriteFile(ctx, "/a.txt", make([]byte, 30), 0o644); err != nil {
		t.Fatal(err)
	}
	err := f.WriteFile(ctx, "/b.txt", make([]byte, 11), 0o644)
	pe := wantErr(t, err, semfs.ErrQuota, "/b.txt")
	for _, n := range []string{"11", "101", "100", "90"} {
		if !strings.Contains(pe.Error(), n) {
			t.Errorf("quota error %q lacks %s", pe, n)
		}
	}
	if ok, _ := semfs.Exists(ctx, inner, "/b.txt"); ok {
		t.Error("refused write created the file")
	}
	// Replacing a file counts new size against old.
	if err := f.WriteFile(ctx, "/a.txt", make([]byte, 40), 0o644); err != nil {
		t.Fatalf("growing a.txt to the quota exactly: %v", err)
	}
	wantErr(t, f.WriteFile(ctx, "/a.txt", make([]byte, 41), 0o644), semfs.ErrQuota, "/a.txt")
	if err := f.WriteFile(ctx, "/a.txt", nil, 0o644); err != nil {
		t.Fatalf("shrinking: %v", err)
	}
}

func TestQuotaOpenFile(t *testing.T) {
	inner := memfs.FromMap(map[string]string{"/old.txt": strings.Repeat("o", 50)})
	f := access.New(inner, access.Policy{Quota: 100})
	w, err := f.OpenFile(ctx, "/new.txt", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if n, err := w.Write(make([]byte, 40)); n != 40 || err != nil {
		t.Fatalf("Write 40 = %d, %v", n, err)
	}
	_, err = w.Write(make([]byte, 11))
	wantErr(t, err, semfs.ErrQuota, "/new.txt")
	// Overwriting in place does not grow the tree.
	if _, err := w.WriteAt(make([]byte, 40), 0); err != nil {
		t.Fatalf("WriteAt in place: %v", err)
	}
	_, err = w.WriteAt(make([]byte, 5), 56)
	wantErr(t, err, semfs.ErrQuota, "/new.txt")
	wantErr(t, w.Truncate(61), semfs.ErrQuota, "/new.txt")
	if err := w.Truncate(10); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Seek(0, io.SeekEnd); err != nil {
		t.Fatal(err)
	}
	if n, err := w.Write(make([]byte, 40)); n != 40 || err != nil {
		t.Fatalf("Write after shrinking = %d, %v", n, err)
	}
	if total, _ := inner.TotalSize(ctx); total != 100 {
		t.Errorf("tree holds %d bytes, want exactly the quota 100", total)
	}
	a, err := f.OpenFile(ctx, "/old.txt", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = a.Write([]byte("x"))
	wantErr(t, err, semfs.ErrQuota, "/old.txt")
}

func TestRenameIntoAndOutOfReadOnlyArea(t *testing.T) {
	inner := memfs.FromMap(map[string]string{
		"/corpus/doc.md":          "d",
		"/work/draft.md":          "w",
		"/work/dir/a.txt":         "a",
		"/work/dir/x.locked.md":   "x",
		"/work/free/b.txt":        "b",
		"/work/landing/ro/keep.t": "k",
	})
	f := access.New(inner, access.Policy{Rules: []access.Rule{
		{Path: "/corpus", Access: access.Read},
		{Path: "/**/*.locked.md", Access: access.Read},
		{Path: "/work/landing/ro", Access: access.Read},
	}})
	wantErr(t, f.Rename(ctx, "/work/draft.md", "/corpus/draft.md"), semfs.ErrPermission, "/corpus/draft.md")
	wantErr(t, f.Rename(ctx, "/corpus/doc.md", "/work/doc.md"), semfs.ErrPermission, "/corpus/doc.md")
	wantErr(t, f.Rename(ctx, "/work/draft.md", "/work/draft.locked.md"), semfs.ErrPermission, "/work/draft.locked.md")
	// A directory holding a read-only file cannot move.
	wantErr(t, f.Rename(ctx, "/work/dir", "/work/dir2"), semfs.ErrPermission, "/work/dir")
	// Nor can a directory whose contents would land on read-only paths.
	if err := inner.MkdirAll(ctx, "/work/free/ro", 0o755); err != nil {
		t.Fatal(err)
	}
	wantErr(t, f.Rename(ctx, "/work/free", "/work/landing"), semfs.ErrPermission, "/work/free")
	for _, p := range []string{"/corpus/doc.md", "/work/draft.md", "/work/dir/x.locked.md", "/work/free/b.txt"} {
		if ok, _ := semfs.Exists(ctx, inner, p); !ok {
			t.Errorf("%s moved despite the refusal", p)
		}
	}
	if err := f.Rename(ctx, "/work/draft.md", "/work/final.md"); err != nil {
		t.Fatalf("rename inside the writable area: %v", err)
	}
	if err := f.Rename(ctx, "/work/free", "/work/free2"); err != nil {
		t.Fatalf("directory rename inside the writable area: %v", err)
	}
}

func TestWritesFollowRules(t *testing.T) {
	f, inner := seed004(t)
	wantErr(t, f.WriteFile(ctx, "/corpus/guide.md", []byte("x"), 0o644), semfs.ErrPermission, "/corpus/guide.md")
	wantErr(t, f.Remove(ctx, "/corpus/guide.md"), semfs.ErrPermission, "/corpus/guide.md")
	wantErr(t, f.Mkdir(ctx, "/corpus/d", 0o755), semfs.ErrPermission, "/corpus/d")
	wantErr(t, f.MkdirAll(ctx, "/secret/d", 0o755), semfs.ErrPermission, "/secret/d")
	wantErr(t, f.SetTags(ctx, "/corpus/guide.md", semfs.Tags{Task: "t"}), semfs.ErrPermission, "/corpus/guide.md")
	_, err := f.OpenFile(ctx, "/corpus/guide.md", os.O_RDWR, 0)
	wantErr(t, err, semfs.ErrPermission, "/corpus/guide.md")
	r, err := f.OpenFile(ctx, "/corpus/guide.md", os.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("read-only open of a readable file: %v", err)
	}
	r.Close()
	_, err = f.OpenFile(ctx, "/secret/keys.txt", os.O_RDONLY, 0)
	wantErr(t, err, semfs.ErrPermission, "/secret/keys.txt")
	if err := f.WriteFile(ctx, "/work/new/n.md", []byte("n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := string(must(inner.ReadFile(ctx, "/work/new/n.md"))); got != "n" {
		t.Errorf("written file holds %q", got)
	}
	if got := string(must(inner.ReadFile(ctx, "/corpus/guide.md"))); got != "guide" {
		t.Errorf("read-only file changed to %q", got)
	}
}

// principalCtx is a session of the given groups.
func principalCtx(groups ...string) context.Context {
	return semfs.WithPrincipal(context.Background(), semfs.Principal{ID: "agent", Groups: groups})
}

func TestInvisibleFileDoesNotExist(t *testing.T) {
	inner := newTagged(map[string]string{
		"/auth/oauth.mdx":          "oauth public",
		"/internal/billing.mdx":    "billing secret",
		"/api/users.mdx":           "users public",
		"/api/payments.mdx":        "payments secret",
		"/api/payments-public.mdx": "payments public",
	})
	inner.hide("/internal/billing.mdx", "admin", "billing")
	inner.hide("/api/payments.mdx", "billing")
	if err := inner.SetTags(ctx, "/auth/oauth.mdx", semfs.Tags{Links: []string{"/api/payments.mdx", "/api/users.mdx"}}); err != nil {
		t.Fatal(err)
	}
	f := access.New(inner, access.Policy{})
	agent := principalCtx("support")

	for _, p := range []string{"/api/payments.mdx", "/internal/billing.mdx", "/internal"} {
		_, err := f.Stat(agent, p)
		wantErr(t, err, semfs.ErrNotExist, p)
		if ok, err := f.Exists(agent, p); ok || err != nil {
			t.Errorf("Exists(%s) = %v, %v; want false", p, ok, err)
		}
	}
	_, err := f.ReadFile(agent, "/api/payments.mdx")
	wantErr(t, err, semfs.ErrNotExist, "/api/payments.mdx")
	_, err = f.Meta(agent, "/api/payments.mdx")
	wantErr(t, err, semfs.ErrNotExist, "/api/payments.mdx")
	wantErr(t, f.Remove(agent, "/api/payments.mdx"), semfs.ErrNotExist, "/api/payments.mdx")
	wantErr(t, f.SetTags(agent, "/api/payments.mdx", semfs.Tags{}), semfs.ErrNotExist, "/api/payments.mdx")
	wantErr(t, f.Rename(agent, "/api/payments.mdx", "/api/p.mdx"), semfs.ErrNotExist, "/api/payments.mdx")
	// Writing over it cannot pretend it is absent, and says nothing more.
	pe := wantErr(t, f.WriteFile(agent, "/api/payments.mdx", []byte("x"), 0o644), semfs.ErrPermission, "/api/payments.mdx")
	if strings.Contains(pe.Error(), "billing") {
		t.Errorf("refusal %q leaks the groups", pe)
	}

	wantNames(t, f, agent, "/", "api/", "auth/") // /internal holds only hidden files
	wantNames(t, f, agent, "/api", "payments-public.mdx", "users.mdx")
	files := fileList(t, f, agent, "/")
	if want := []string{"/api/payments-public.mdx", "/api/users.mdx", "/auth/oauth.mdx"}; !slices.Equal(files, want) {
		t.Errorf("Files = %v, want %v", files, want)
	}

	// A failing recursive remove names no hidden file, and removes nothing.
	err = f.RemoveAll(agent, "/api")
	pe = wantErr(t, err, semfs.ErrPermission, "/api")
	if strings.Contains(pe.Error(), "payments.mdx") {
		t.Errorf("RemoveAll error %q names the hidden file", pe)
	}
	if got := len(fileList(t, inner, ctx, "/api")); got != 3 {
		t.Errorf("refused RemoveAll left %d of 3 files", got)
	}
	// Removing a hidden subtree is removing nothing.
	if err := f.RemoveAll(agent, "/internal"); err != nil {
		t.Errorf("RemoveAll of a hidden directory = %v, want nil", err)
	}
	if ok, _ := semfs.Exists(ctx, inner, "/internal/billing.mdx"); !ok {
		t.Error("RemoveAll removed a hidden file")
	}

	// Metadata links, query, search and relatives leave it out.
	m, err := f.Meta(agent, "/auth/oauth.mdx")
	if err != nil || !slices.Equal(m.Links, []string{"/api/users.mdx"}) {
		t.Errorf("Meta links = %v, %v; want only the visible one", m.Links, err)
	}
	res, err := f.Query(agent, "payments", 0)
	if err != nil || len(res) != 1 || res[0].Path != "/api/payments-public.mdx" {
		t.Errorf("Query = %v, %v", res, err)
	}
	var hits []string
	if _, err := f.Search(agent, semfs.SearchRequest{Query: "secret"}, func(h semfs.SearchHit) error {
		hits = append(hits, h.Path)
		return nil
	}); err != nil || len(hits) != 0 {
		t.Errorf("Search(secret) = %v, %v; want nothing", hits, err)
	}
	rel, err := f.Related(agent, "/api/users.mdx", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rel {
		if c.Path == "/api/payments.mdx" || strings.HasPrefix(c.Path, "/internal") {
			t.Errorf("Related reveals %s", c.Path)
		}
	}
	if len(rel) != 2 {
		t.Errorf("Related = %v, want the 2 other visible files", rel)
	}

	// The billing group sees it; an admin and a host call see everything.
	for name, c := range map[string]context.Context{
		"billing": principalCtx("billing"),
		"admin":   semfs.WithPrincipal(ctx, semfs.Principal{ID: "root", Admin: true}),
		"host":    ctx,
	} {
		if got := string(must(f.ReadFile(c, "/api/payments.mdx"))); got != "payments secret" {
			t.Errorf("%s reads %q", name, got)
		}
	}
	wantNames(t, f, principalCtx("billing"), "/", "api/", "auth/", "internal/")
	wantNames(t, f, principalCtx("billing"), "/internal", "billing.mdx")
}

// Listing from metadata (one Meta per entry): a directory is hidden when
// it holds files and none is visible, at any depth; a visible file among
// its entries settles that without a scan of the files below.
func TestListingDirectoryVisibilityFromMeta(t *testing.T) {
	inner := newTagged(map[string]string{
		"/open/a.md":           "a",
		"/open/b.md":           "b",
		"/deep/secret.md":      "s",
		"/deep/sub/ok.md":      "ok",
		"/closed/secret.md":    "s",
		"/closed/sub/also.md":  "s",
		"/shell/secret.md":     "s",
		"/shell/empty/.keep":   "",
		"/shell/empty2/x/y.md": "s",
	})
	for _, p := range []string{"/deep/secret.md", "/closed/secret.md", "/closed/sub/also.md", "/shell/secret.md",
		"/shell/empty/.keep", "/shell/empty2/x/y.md"} {
		inner.hide(p, "billing")
	}
	if err := inner.Remove(ctx, "/shell/empty/.keep"); err != nil {
		t.Fatal(err)
	}
	f := access.New(inner, access.Policy{})
	agent := principalCtx("support")

	before := inner.metaCalls.Load()
	wantNames(t, f, agent, "/open", "a.md", "b.md")
	if n := inner.metaCalls.Load() - before; n != 2 {
		t.Errorf("listing a directory of 2 visible files asked Meta %d times, want 2 (no scan)", n)
	}
	wantNames(t, f, agent, "/deep", "sub/")
	// /shell holds only hidden files and an empty directory: hidden, like
	// /closed; the empty directory alone is visible.
	for _, dir := range []string{"/closed", "/closed/sub", "/shell"} {
		_, err := f.ReadDir(agent, dir)
		pe := wantErr(t, err, semfs.ErrNotExist, dir)
		if strings.Contains(pe.Error(), "secret") {
			t.Errorf("ReadDir(%s) error %q names a hidden file", dir, pe)
		}
	}
	wantNames(t, f, agent, "/shell/empty")
	wantNames(t, f, agent, "/", "deep/", "open/")
	wantNames(t, f, principalCtx("billing"), "/shell", "empty/", "empty2/", "secret.md")
}

func TestVisibleHookOverrides(t *testing.T) {
	inner := newTagged(map[string]string{"/a.txt": "a", "/b.txt": "b", "/d/c.txt": "c"})
	inner.hide("/a.txt", "nobody") // the hook, not the tags, decides
	f := access.New(inner, access.Policy{Visible: func(ctx context.Context, p string) (bool, error) {
		return p != "/b.txt" && p != "/d", nil
	}})
	wantNames(t, f, ctx, "/", "a.txt")
	_, err := f.Stat(ctx, "/d/c.txt")
	if err != nil {
		t.Fatalf("the hook allows /d/c.txt: %v", err)
	}
	_, err = f.ReadFile(ctx, "/b.txt")
	wantErr(t, err, semfs.ErrNotExist, "/b.txt")
	if inner.metaCalls.Load() != 0 {
		t.Errorf("Meta was asked %d times despite the hook", inner.metaCalls.Load())
	}
}

// bulk is a tree implementing VisibilityFS, counting its calls.
type bulk struct {
	*tagged
	hiddenCalls, visibleCalls int
}

func (b *bulk) VisibleTo(ctx context.Context, p semfs.Principal, name string) (bool, error) {
	b.visibleCalls++
	m, err := b.tagged.Meta(ctx, name)
	if err != nil {
		return false, nil
	}
	return m.VisibleTo(p), nil
}

func (b *bulk) HiddenIn(ctx context.Context, p semfs.Principal, dir string) (map[string]bool, error) {
	b.hiddenCalls++
	out := map[string]bool{}
	b.mu.Lock()
	defer b.mu.Unlock()
	for path, tags := range b.tags {
		if semfs.Dir(path) == dir && !tags.VisibleTo(p) {
			out[semfs.BaseName(path)] = true
		}
	}
	return out, nil
}

func TestVisibilityFSUsedForListings(t *testing.T) {
	inner := &bulk{tagged: newTagged(map[string]string{"/a.txt": "a", "/b.txt": "b", "/c.txt": "c"})}
	inner.hide("/b.txt", "billing")
	f := access.New(inner, access.Policy{})
	var _ access.VisibilityFS = inner
	agent := principalCtx("support")
	wantNames(t, f, agent, "/", "a.txt", "c.txt")
	if inner.hiddenCalls != 1 || inner.metaCalls.Load() != 0 {
		t.Errorf("listing made %d HiddenIn and %d Meta calls; want 1 and 0", inner.hiddenCalls, inner.metaCalls.Load())
	}
	_, err := f.Stat(agent, "/b.txt")
	wantErr(t, err, semfs.ErrNotExist, "/b.txt")
	if inner.visibleCalls != 1 {
		t.Errorf("Stat made %d VisibleTo calls, want 1", inner.visibleCalls)
	}
}

func TestUnwrapAndErrorsShape(t *testing.T) {
	inner := memfs.New()
	f := access.New(inner, access.Policy{})
	if f.Unwrap() != semfs.FS(inner) || semfs.Base(f) != semfs.FS(inner) {
		t.Error("Unwrap/Base do not reach the wrapped tree")
	}
	_, err := f.Stat(ctx, "a//b")
	if !errors.Is(err, semfs.ErrInvalid) {
		t.Errorf("bad path: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("New with an invalid policy did not panic")
		}
	}()
	access.New(inner, access.Policy{Rules: []access.Rule{{Path: "nope"}}})
}

func TestPolicyJSON(t *testing.T) {
	const doc = `{"default":"none","rules":[{"path":"/corpus","access":"Read","note":"curated upstream"},{"path":"/work","access":"write"}],"quota":1024}`
	var p access.Policy
	if err := json.Unmarshal([]byte(doc), &p); err != nil {
		t.Fatal(err)
	}
	if p.Default != access.None || len(p.Rules) != 2 || p.Rules[0].Access != access.Read || p.Rules[0].Note != "curated upstream" || p.Quota != 1024 {
		t.Errorf("decoded %+v", p)
	}
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(doc, `"Read"`, `"read"`, 1); string(out) != want {
		t.Errorf("encoded %s, want %s", out, want)
	}
	if err := json.Unmarshal([]byte(`{"rules":[{"path":"/a","access":"rw"}]}`), &p); err == nil {
		t.Error("an unknown access decoded")
	}
}

func TestRenameRefusedWhenAFencedFileLinksToIt(t *testing.T) {
	inner := newTagged(map[string]string{
		"/work/a.md":       "a",
		"/work/c.md":       "c",
		"/work/free.md":    "f",
		"/work/linker.md":  "l",
		"/work/secret.md":  "s",
		"/corpus/guide.md": "g",
	})
	link := func(p string, to ...string) {
		if err := inner.SetTags(ctx, p, semfs.Tags{Links: to, Groups: inner.tags[p].Groups}); err != nil {
			t.Fatal(err)
		}
	}
	link("/corpus/guide.md", "/work/a.md")
	link("/work/linker.md", "/work/free.md")
	inner.hide("/work/secret.md", "billing")
	link("/work/secret.md", "/work/c.md")
	var _ access.BacklinksFS = inner
	f := access.New(inner, access.Policy{Rules: []access.Rule{{Path: "/corpus", Access: access.Read}}})
	agent := principalCtx("support")

	pe := wantErr(t, f.Rename(agent, "/work/a.md", "/work/b.md"), semfs.ErrPermission, "/work/a.md")
	if !strings.Contains(pe.Error(), "/corpus/guide.md") {
		t.Errorf("refusal %q should name the readable linking file", pe)
	}
	pe = wantErr(t, f.Rename(agent, "/work/c.md", "/work/d.md"), semfs.ErrPermission, "/work/c.md")
	if strings.Contains(pe.Error(), "secret") {
		t.Errorf("refusal %q names a hidden file", pe)
	}
	for _, p := range []string{"/work/a.md", "/work/c.md"} {
		if ok, _ := semfs.Exists(ctx, inner, p); !ok {
			t.Errorf("%s moved despite the refusal", p)
		}
	}
	// A link held by a writable file does not stop the move.
	if err := f.Rename(agent, "/work/free.md", "/work/free2.md"); err != nil {
		t.Fatalf("rename linked from a writable file: %v", err)
	}
}
