package meta_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/meta"
)

// TestLookupsSeeOtherProcessRestrictionAtOnce: search, query, related and
// grep candidates read the changes other processes made to the index
// before they filter by the restricted set, so a file another process
// just restricted is not among a non-member's hits even before the next
// poll (the poll here never comes).
func TestLookupsSeeOtherProcessRestrictionAtOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, db := filepath.Join(dir, "data"), filepath.Join(dir, "index.db")
	daemon := openPeerStack(t, data, db, meta.Options{PeerPoll: time.Hour})
	cli := openPeerStack(t, data, db, meta.Options{PeerPoll: -1})
	const p = "/notes/zanzibar.md"
	if err := daemon.m.WriteFile(ctx, p, []byte("# Zanzibar\n\nquarterly zanzibar revenue forecast\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := daemon.m.SetTags(ctx, p, semfs.Tags{Task: "zanzibar forecast"}); err != nil {
		t.Fatal(err)
	}
	if err := daemon.m.WriteFile(ctx, "/notes/other.md", []byte("quarterly zanzibar revenue, public copy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bob := semfs.WithPrincipal(ctx, semfs.Principal{ID: "bob"})
	acc := access.New(daemon.m, access.Policy{})
	found := func() (search, query, grep bool) {
		t.Helper()
		if _, err := acc.Search(bob, semfs.SearchRequest{Query: "zanzibar revenue"}, func(h semfs.SearchHit) error {
			search = search || h.Path == p
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		res, err := acc.Query(bob, "zanzibar forecast", 10)
		if err != nil {
			t.Fatal(err)
		}
		query = slices.ContainsFunc(res, func(r semfs.QueryResult) bool { return r.Path == p })
		paths, _, err := acc.GrepCandidates(bob, "/", "zanzibar", semfs.GrepOptions{Fixed: true})
		if err != nil {
			t.Fatal(err)
		}
		grep = slices.Contains(paths, p)
		return search, query, grep
	}
	if s, q, g := found(); !s || !q || !g {
		t.Fatalf("before the restriction bob finds %s: search %v, query %v, grep %v; want all", p, s, q, g)
	}
	if err := cli.m.SetTags(ctx, p, semfs.Tags{Task: "zanzibar forecast", Groups: []string{"finance"}}); err != nil {
		t.Fatal(err)
	}
	if s, q, g := found(); s || q || g {
		t.Fatalf("right after another process restricted %s bob finds it: search %v, query %v, grep %v", p, s, q, g)
	}
	if err := cli.m.SetTags(ctx, p, semfs.Tags{Task: "zanzibar forecast"}); err != nil {
		t.Fatal(err)
	}
	if s, q, g := found(); !s || !q || !g {
		t.Fatalf("right after another process made %s public again bob finds it: search %v, query %v, grep %v; want all", p, s, q, g)
	}
}
