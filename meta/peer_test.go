package meta_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/index"
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

// Two daemons restricting and opening the same files at once: once the
// writes stop, each one's set shows what the store holds (a poll never
// leaves memory at an older state than the store's).
func TestPeersConvergeToStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, db := filepath.Join(dir, "data"), filepath.Join(dir, "index.db")
	opts := meta.Options{PeerPoll: time.Millisecond}
	a := openPeerStack(t, data, db, opts)
	b := openPeerStack(t, data, db, opts)
	var names []string
	for i := range 8 {
		p := fmt.Sprintf("/f%d.txt", i)
		names = append(names, p)
		if err := a.m.WriteFile(as("app"), p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w, s := range []peerStack{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				p := names[(i*7+w*3)%len(names)]
				tags := semfs.Tags{Groups: []string{"finance"}, Public: (i+w)%3 == 0}
				// Another writer may have moved p away for a moment.
				if err := s.m.SetTags(ctx, p, tags); err != nil && !errors.Is(err, semfs.ErrNotExist) {
					t.Error(err)
					return
				}
				if i%10 == w {
					dst := p + ".moved"
					if err := s.m.Rename(ctx, p, dst); err == nil {
						if err := s.m.Rename(ctx, dst, p); err != nil {
							t.Error(err)
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	bob := semfs.Principal{ID: "bob", Groups: []string{"eng"}}
	for _, s := range []struct {
		name string
		st   peerStack
	}{{"A", a}, {"B", b}} {
		waitFor(t, s.name+"'s restricted set does not match the store", func() bool {
			for _, p := range names {
				r, err := a.ix.File(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				want := len(r.Groups) == 0 || r.Public
				if ok, err := s.st.m.VisibleTo(ctx, bob, p); err != nil || ok != want {
					return false
				}
			}
			return true
		})
	}
}

// gatedStore holds the poller's read of rows, once armed: it reads them,
// then waits for release before returning what it read, as a poll whose
// rows are read before a write of this process and applied after it.
type gatedStore struct {
	*sqlite.Index
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	release chan struct{}
	polls   int // PeerChanges calls
	// With stop set, the next PeerChanges call closes stopped and waits
	// for resume (the poll before it has applied what it read).
	stop            bool
	stopped, resume chan struct{}
}

func (g *gatedStore) Files(ctx context.Context, paths []string) (map[string]index.File, error) {
	rows, err := g.Index.Files(ctx, paths)
	g.mu.Lock()
	hold := g.armed
	g.armed = false
	g.mu.Unlock()
	if hold {
		close(g.entered)
		<-g.release
	}
	return rows, err
}

func (g *gatedStore) PeerChanges(ctx context.Context, since index.Cursor) (index.Changes, error) {
	g.mu.Lock()
	g.polls++
	stop := g.stop
	g.stop = false
	g.mu.Unlock()
	if stop {
		close(g.stopped)
		<-g.resume
	}
	return g.Index.PeerChanges(ctx, since)
}

// A restriction this process sets holds from the moment SetTags
// returns, even when its poller then applies a row it read before.
func TestOwnRestrictionNotUndoneByPoll(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, db := filepath.Join(dir, "data"), filepath.Join(dir, "index.db")
	peer := openPeerStack(t, data, db, meta.Options{PeerPoll: -1})
	host, err := hostfs.Open(data, hostfs.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	ix, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	g := &gatedStore{Index: ix, entered: make(chan struct{}), release: make(chan struct{}),
		stopped: make(chan struct{}), resume: make(chan struct{})}
	m, err := meta.New(host, g, meta.Options{PeerPoll: time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.WriteFile(as("app"), "/x.txt", []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	bob := semfs.Principal{ID: "bob", Groups: []string{"eng"}}
	// Let the poller settle, then have another process touch /x.txt's
	// row (still public) so that the next poll reads it.
	waitFor(t, "the poller does not poll", func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.polls > 2 })
	g.mu.Lock()
	g.armed = true
	g.mu.Unlock()
	if err := peer.m.SetTags(ctx, "/x.txt", semfs.Tags{Task: "review"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("after 20 s the poller has not read /x.txt's row")
	}
	// The poll holds the public row; this process restricts the file.
	if err := m.SetTags(ctx, "/x.txt", semfs.Tags{Groups: []string{"finance"}}); err != nil {
		t.Fatal(err)
	}
	// The next PeerChanges call starts once that poll applied its rows;
	// it waits there while bob looks.
	g.mu.Lock()
	g.stop = true
	g.mu.Unlock()
	close(g.release)
	select {
	case <-g.stopped:
	case <-time.After(20 * time.Second):
		t.Fatal("after 20 s the poller has not polled again")
	}
	ok, err := m.VisibleTo(ctx, bob, "/x.txt")
	close(g.resume)
	if err != nil || ok {
		t.Fatalf("after a poll applied the row it read before this process's SetTags: bob sees /x.txt (%v, %v)", ok, err)
	}
}
