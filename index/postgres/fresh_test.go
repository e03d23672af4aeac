package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/internal/testserver"
	"github.com/semfs/semfs/meta"
)

// testNextLookupSeesOtherDaemon: B's first lookup after A's write
// returns shows it — no polling — and so do A's own lookups.
func testNextLookupSeesOtherDaemon(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a := openStore(t, dsn)
	b := openStore(t, dsn)
	for round := range 20 { // notifications race the lookup: try often
		f := index.File{}
		f.Path, f.Task = "/shared/x.md", "deploy pipeline"
		if err := a.Put(ctx, index.Item{File: f, TagText: "deploy pipeline /shared/x.md"}); err != nil {
			t.Fatal(err)
		}
		if err := a.SetEmbedding(ctx, embedding.SpaceTags, "/shared/x.md", "deploy pipeline /shared/x.md", []float32{0, 1}); err != nil {
			t.Fatal(err)
		}
		for name, ix := range map[string]*Index{"A": a, "B": b} {
			if _, ok := ix.Vector(ctx, embedding.SpaceTags, "/shared/x.md"); !ok {
				t.Fatalf("round %d: %s: no vector right after A's SetEmbedding returned", round, name)
			}
			if got, _ := ix.TagKeywordCandidates(ctx, "pi"); !slices.Equal(got, []string{"/shared/x.md"}) {
				t.Fatalf("round %d: %s: candidates for pi = %v right after A's Put returned", round, name, got)
			}
		}
		if err := b.Remove(ctx, "/shared", true); err != nil {
			t.Fatal(err)
		}
		for name, ix := range map[string]*Index{"A": a, "B": b} {
			hits, err := ix.Nearest(ctx, embedding.SpaceTags, []float32{0, 1}, 5, 0.5)
			if err != nil || len(hits) != 0 {
				t.Fatalf("round %d: %s: nearest = %v, %v right after B's Remove returned; want none", round, name, hits, err)
			}
		}
	}
}

// BenchmarkFreshVector measures a vector lookup from memory with the
// freshness check (a listening store: one SELECT of semfs_gen) and
// without (NoListen: no check, as every lookup was before).
//
//	go test -run '^$' -bench FreshVector ./index/postgres
func BenchmarkFreshVector(b *testing.B) {
	pg := testserver.StartPostgres(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.DSN)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE freshbench"); err != nil {
		b.Fatal(err)
	}
	conn.Close(ctx)
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/freshbench?sslmode=disable", pg.Port)
	for _, c := range []struct {
		name string
		opts Options
	}{{"checked", Options{}}, {"unchecked", Options{NoListen: true}}} {
		ix, err := Open(ctx, dsn, c.opts)
		if err != nil {
			b.Fatal(err)
		}
		f := index.File{}
		f.Path = "/x.md"
		if err := ix.Put(ctx, index.Item{File: f, TagText: "x"}); err != nil {
			b.Fatal(err)
		}
		if err := ix.SetEmbedding(ctx, embedding.SpaceTags, "/x.md", "x", []float32{0, 1}); err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, ok := ix.Vector(ctx, embedding.SpaceTags, "/x.md"); !ok {
					b.Fatal("no vector")
				}
			}
		})
		ix.Close()
	}
}

// testPeerChangesReportOtherDaemon: B's PeerChanges lists the rows A
// wrote (groups and public included), and nothing when nothing was
// written; a meta layer over B follows A's restriction within its poll.
func testPeerChangesReportOtherDaemon(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a, b := openStore(t, dsn), openStore(t, dsn)
	changes := func(since index.Cursor) index.Changes {
		t.Helper()
		ch, err := b.PeerChanges(ctx, since)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(ch.Paths)
		return ch
	}
	put := func(p string, tags semfs.Tags) {
		t.Helper()
		f := index.File{}
		f.Path, f.Tags = p, tags
		if err := a.Put(ctx, index.Item{File: f, TagText: p}); err != nil {
			t.Fatal(err)
		}
	}
	c0 := changes(0)
	if !c0.All {
		t.Errorf("PeerChanges(0) = %+v, want All", c0)
	}
	if ch := changes(c0.Next); ch.All || len(ch.Paths) != 0 || ch.Next != c0.Next {
		t.Errorf("nothing written: PeerChanges = %+v, want nothing and cursor %d", ch, c0.Next)
	}
	put("/q3.txt", semfs.Tags{Groups: []string{"finance"}})
	c1 := changes(c0.Next)
	if c1.All || !slices.Equal(c1.Paths, []string{"/q3.txt"}) || c1.Next == c0.Next {
		t.Errorf("after A restricted /q3.txt: PeerChanges = %+v, want [/q3.txt] and a new cursor", c1)
	}
	if err := a.Rename(ctx, "/q3.txt", "/q4.txt"); err != nil {
		t.Fatal(err)
	}
	c2 := changes(c1.Next)
	if !slices.Equal(c2.Paths, []string{"/q3.txt", "/q4.txt"}) {
		t.Errorf("after A renamed: PeerChanges = %+v, want both paths", c2)
	}
	// B's own writes are listed too (a caller mirrors the store).
	if err := b.Remove(ctx, "/q4.txt", false); err != nil {
		t.Fatal(err)
	}
	if ch := changes(c2.Next); !slices.Equal(ch.Paths, []string{"/q4.txt"}) {
		t.Errorf("after B removed: PeerChanges = %+v, want [/q4.txt]", ch)
	}
	// A cursor older than what the log keeps: All.
	b.peers.mu.Lock()
	b.peers.from = int64(c2.Next)
	b.peers.mu.Unlock()
	if ch := changes(c1.Next); !ch.All {
		t.Errorf("cursor older than the log: PeerChanges = %+v, want All", ch)
	}

	// The meta layer of a daemon over B hides what A restricts.
	dir := t.TempDir()
	host, err := hostfs.Open(dir, hostfs.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	m, err := meta.New(host, b, meta.Options{PeerPoll: 10 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.WriteFile(ctx, "/r.txt", []byte("revenue\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	bob := semfs.Principal{ID: "bob", Groups: []string{"eng"}}
	visible := func() bool {
		ok, err := m.VisibleTo(ctx, bob, "/r.txt")
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !visible() {
		t.Fatal("/r.txt hidden before any restriction")
	}
	row, err := a.File(ctx, "/r.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []bool{false, true} {
		row.Groups, row.Public = []string{"finance"}, want
		if err := a.Put(ctx, index.Item{File: row, TagText: "/r.txt"}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for visible() != want {
			if time.Now().After(deadline) {
				t.Fatalf("after 20 s the meta layer over B does not follow A's public=%v", want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// testListenerOrderedWithOwnWrites: rows the listener read for another
// daemon's change never land in memory after this daemon's own newer
// write of the same path (the generation check would then call memory
// caught up, and the older row would be served until the path changed
// again).
func testListenerOrderedWithOwnWrites(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a, b := openStore(t, dsn), openStore(t, dsn)
	put := func(s *Index, task string) {
		t.Helper()
		f := index.File{}
		f.Path, f.Task = "/p.md", task
		if err := s.Put(ctx, index.Item{File: f, TagText: task + " /p.md"}); err != nil {
			t.Error(err)
		}
	}
	put(a, "first")
	read, release := make(chan struct{}), make(chan struct{})
	var held atomic.Bool
	hold := func() { // the first caller only: the listener, with b's rows
		if held.CompareAndSwap(false, true) {
			close(read)
			<-release
		}
	}
	a.testHookReloadRead.Store(&hold)
	put(b, "zz") // a's listener reads this row, then waits
	select {
	case <-read:
	case <-time.After(20 * time.Second):
		t.Fatal("a's listener did not read b's change")
	}
	done := make(chan struct{})
	go func() { put(a, "qq"); close(done) }() // a's own, newer
	select {
	case <-done: // the old order: the own write applied while the listener held its rows
	case <-time.After(300 * time.Millisecond): // it waits for the listener
	}
	close(release)
	<-done
	hits, err := a.TagKeywordCandidates(ctx, "qq") // short words are answered from memory
	if err != nil {
		t.Fatal(err)
	}
	stale, err := a.TagKeywordCandidates(ctx, "zz")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(hits, "/p.md") || slices.Contains(stale, "/p.md") {
		t.Fatalf("after its own write of task qq, a's memory answers qq %v, zz %v: the listener's older row landed after the own write", hits, stale)
	}
}
