package postgres

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/internal/testserver"
)

// testPeerChangesListOwnWriteOnceCommitted: a PeerChanges call made after
// this daemon's write committed and its listener received the write's
// notification, but before the writer went on, lists the write's path. It
// was logged after the commit, so that call moved the cursor past the
// write without it, and no later call reported it (review 6, R7).
func testPeerChangesListOwnWriteOnceCommitted(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a := openStore(t, dsn)
	put := func(p string) {
		t.Helper()
		f := index.File{}
		f.Path, f.Groups = p, []string{"finance"}
		if err := a.Put(ctx, index.Item{File: f, TagText: p}); err != nil {
			t.Fatal(err)
		}
	}
	put("/first.md")
	ch, err := a.PeerChanges(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	since := ch.Next
	var got index.Changes
	var gotErr error
	var advanced bool
	hook := func(gen int64) {
		// The listener receives the own notification on its own.
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			a.fresh.mu.Lock()
			advanced = a.fresh.applied >= gen
			a.fresh.mu.Unlock()
			if advanced {
				break
			}
			time.Sleep(time.Millisecond)
		}
		got, gotErr = a.PeerChanges(ctx, since)
	}
	a.testHookCommitted.Store(&hook)
	put("/own.md")
	a.testHookCommitted.Store(nil)
	if !advanced {
		t.Fatal("the listener did not receive the own write's notification within 10 s")
	}
	if gotErr != nil {
		t.Fatal(gotErr)
	}
	later, err := a.PeerChanges(ctx, got.Next)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got.Paths, "/own.md") && !got.All && !slices.Contains(later.Paths, "/own.md") && !later.All {
		t.Fatalf("PeerChanges right after the own write committed: %+v, then %+v: /own.md is never reported", got, later)
	}
}
