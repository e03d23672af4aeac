package access_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
)

// No answer to a session that never names a hidden file mentions it: not a
// listing, not a file list, not a search or query hit, not metadata, and
// not an error message — whatever the operation on the directories around
// it.
func TestHiddenNameNeverLeaks(t *testing.T) {
	inner := newTagged(map[string]string{
		"/api/users.mdx":          "users",
		"/api/zz-payments.mdx":    "payments users",
		"/api/sub/deep.mdx":       "deep users",
		"/api/sub/zz-payments.md": "payments deep",
		"/guide.md":               "guide users",
	})
	inner.hide("/api/zz-payments.mdx", "billing")
	inner.hide("/api/sub/zz-payments.md", "billing")
	if err := inner.SetTags(ctx, "/guide.md", semfs.Tags{Links: []string{"/api/zz-payments.mdx", "/api/users.mdx"}}); err != nil {
		t.Fatal(err)
	}
	f := access.New(inner, access.Policy{Rules: []access.Rule{{Path: "/api/users.mdx", Access: access.Read}}})
	agent := principalCtx("support")

	var out []string
	note := func(what string, v any, err error) {
		out = append(out, fmt.Sprintf("%s: %v %v", what, v, err))
	}
	for _, dir := range []string{"/", "/api", "/api/sub"} {
		entries, err := f.ReadDir(agent, dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		note("readdir "+dir, names, err)
		files, err := semfs.FileList(agent, f, dir)
		note("files "+dir, files, err)
		note("removeall "+dir, nil, f.RemoveAll(agent, dir))
		note("remove "+dir, nil, f.Remove(agent, dir))
		note("rename "+dir, nil, f.Rename(agent, dir, dir+"-moved"))
		info, err := f.Stat(agent, dir)
		note("stat "+dir, info, err)
	}
	res, err := f.Query(agent, "payments", 0)
	note("query", res, err)
	res, err = f.Query(agent, "mdx", 0)
	note("query", res, err)
	var hits []semfs.SearchHit
	_, err = f.Search(agent, semfs.SearchRequest{Query: "payments"}, func(h semfs.SearchHit) error {
		hits = append(hits, h)
		return nil
	})
	note("search", hits, err)
	rel, err := f.Related(agent, "/api/users.mdx", 0)
	note("related", rel, err)
	m, err := f.Meta(agent, "/guide.md")
	note("meta", m.Links, err)
	cands, ok, err := f.GrepCandidates(agent, "/", "payments", semfs.GrepOptions{Fixed: true})
	note("grep", cands, err)
	if !ok || len(cands) != 0 {
		t.Errorf("GrepCandidates = %v, %v; want an ok, empty answer", cands, ok)
	}
	cands, _, err = f.GrepCandidates(agent, "/api", "users", semfs.GrepOptions{Fixed: true})
	note("grep", cands, err)
	if len(cands) != 2 {
		t.Errorf("GrepCandidates(users) = %v; want /api/users.mdx and /api/sub/deep.mdx", cands)
	}
	n, err := f.TotalSize(agent)
	note("totalsize", n, err)

	for _, line := range out {
		if strings.Contains(line, "payments") {
			t.Errorf("hidden name leaked: %s", line)
		}
	}
	// The refusals did refuse, and nothing was removed or moved.
	if got := len(fileList(t, inner, ctx, "/")); got != 5 {
		t.Errorf("the tree holds %d files, want 5", got)
	}
	if len(out) < 20 {
		t.Fatalf("only %d observations", len(out))
	}
}
