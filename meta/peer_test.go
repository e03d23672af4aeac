package meta_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/meta"
)

// peerStack is a meta.FS over a host directory and an index file shared
// with other stacks, as a daemon and the CLI beside it hold them.
type peerStack struct {
	m  *meta.FS
	ix *sqlite.Index
}

func openPeerStack(t *testing.T, data, db string, opts meta.Options) peerStack {
	t.Helper()
	ctx := context.Background()
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	host, err := hostfs.Open(data, hostfs.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger = quiet
	m, err := meta.New(host, ix, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); ix.Close(); host.Close() })
	return peerStack{m, ix}
}

// waitFor polls cond until it holds or a deadline far above the poll
// interval passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A restriction written to the index by another process (the CLI's
// `semfs tag --groups`, which opens the index itself) hides the file from
// a running daemon's stack within a poll; making the file public again,
// renaming it and removing its row there are seen too. (Review 5, F4:
// the daemon showed the file until it restarted.)
func TestOtherProcessRestrictionReachesDaemon(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, db := filepath.Join(dir, "data"), filepath.Join(dir, "index.db")
	var mu sync.Mutex
	retagged := map[string]int{}
	daemon := openPeerStack(t, data, db, meta.Options{PeerPoll: 10 * time.Millisecond, PeerRetagged: func(paths []string) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range paths {
			retagged[p]++
		}
	}})
	told := func(p string) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			return retagged[p] > 0
		}
	}
	if err := daemon.m.WriteFile(as("app"), "/q3.txt", []byte("secret revenue numbers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := daemon.m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	cli := openPeerStack(t, data, db, meta.Options{PeerPoll: -1})
	bob := semfs.WithPrincipal(ctx, semfs.Principal{ID: "bob", Groups: []string{"eng"}})
	ann := semfs.WithPrincipal(ctx, semfs.Principal{ID: "ann", Groups: []string{"finance"}})
	acc := access.New(daemon.m, access.Policy{})
	hidden := func(p string) bool {
		_, err := acc.Stat(bob, p)
		return errors.Is(err, semfs.ErrNotExist)
	}
	if hidden("/q3.txt") {
		t.Fatal("bob cannot stat /q3.txt before any restriction")
	}

	if err := cli.m.SetTags(ctx, "/q3.txt", semfs.Tags{Groups: []string{"finance"}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "bob still stats /q3.txt restricted to finance by another process", func() bool { return hidden("/q3.txt") })
	waitFor(t, "PeerRetagged was not told of /q3.txt", told("/q3.txt"))
	if b, err := acc.ReadFile(bob, "/q3.txt"); err == nil {
		t.Errorf("bob reads /q3.txt restricted to finance: %q", b)
	}
	if m, err := acc.Meta(bob, "/q3.txt"); err == nil {
		t.Errorf("bob reads the Meta of /q3.txt, groups %v", m.Tags.Groups)
	}
	if _, err := acc.Stat(ann, "/q3.txt"); err != nil {
		t.Errorf("ann (finance) cannot stat /q3.txt: %v", err)
	}

	// Public again through the other process: bob sees it again.
	if err := cli.m.SetTags(ctx, "/q3.txt", semfs.Tags{Groups: []string{"finance"}, Public: true}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "bob cannot stat /q3.txt made public by another process", func() bool { return !hidden("/q3.txt") })

	// Restricted again, then renamed there: the restriction follows it.
	if err := cli.m.SetTags(ctx, "/q3.txt", semfs.Tags{Groups: []string{"finance"}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "bob still stats /q3.txt restricted again", func() bool { return hidden("/q3.txt") })
	if err := cli.m.Rename(ctx, "/q3.txt", "/q4.txt"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the restriction of /q3.txt did not follow the other process's rename to /q4.txt", func() bool {
		ok, err := daemon.m.VisibleTo(ctx, semfs.Principal{ID: "bob", Groups: []string{"eng"}}, "/q4.txt")
		return err == nil && !ok
	})
	if !hidden("/q4.txt") {
		t.Error("bob stats /q4.txt, renamed with its restriction by another process")
	}
	waitFor(t, "PeerRetagged was not told of /q4.txt", told("/q4.txt"))

	// The row removed there (the file stays): nothing restricts it.
	if err := cli.ix.Remove(ctx, "/q4.txt", false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "bob cannot stat /q4.txt whose restricted row another process removed", func() bool { return !hidden("/q4.txt") })
}
