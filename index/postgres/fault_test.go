package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/indextest"
	"github.com/semfs/semfs/internal/netproxy"
	"github.com/semfs/semfs/internal/testserver"
)

// streamItem is one file of a write stream: its chunk text names it, so a
// row without its chunk (a partial write) is detectable.
func streamItem(p string) index.Item {
	f := index.File{}
	f.Path, f.Task, f.CreatedBy, f.State = p, "stream", "faulttest", index.StateIndexed
	text := "stream chunk of " + p
	return index.Item{File: f, TagText: p, Content: &index.Content{
		Chunks: []index.Chunk{{No: 0, StartLine: 1, EndLine: 1, Text: text}},
		Grep:   text, GrepOK: true,
	}}
}

// TestRestartDuringWriteStream restarts PostgreSQL in the middle of a
// stream of batched Puts: every acknowledged batch is present afterwards
// with its derived rows; a failed batch is all there or all absent (one
// transaction, never partial rows); the other daemon's listener reconnects
// and its in-memory tag table converges on the database.
func testRestartDuringWriteStream(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a := openStore(t, dsn)
	b := openStore(t, dsn)

	type batch struct {
		paths []string
		err   error
	}
	var batches []batch
	var acked atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		deadline := time.Now().Add(40 * time.Second)
		sawFailure := false
		for i := 0; i < 400 && time.Now().Before(deadline); i++ {
			var items []index.Item
			var paths []string
			for j := range 1 + i%4 {
				p := fmt.Sprintf("/w/b%03d-%d", i, j)
				items = append(items, streamItem(p))
				paths = append(paths, p)
			}
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := a.Put(cctx, items...)
			cancel()
			batches = append(batches, batch{paths, err})
			if err != nil {
				sawFailure = true
			} else if acked.Add(1) > 60 && sawFailure {
				return // the stream ran on for a while after the restart
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	for acked.Load() < 10 {
		time.Sleep(5 * time.Millisecond)
	}
	pg.Stop()
	time.Sleep(time.Second)
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	<-done

	var failed, okAfter int
	for _, bt := range batches {
		if bt.err != nil {
			failed++
			if !strings.Contains(bt.err.Error(), "PostgreSQL") && !errors.Is(bt.err, context.DeadlineExceeded) {
				t.Errorf("unclear error: %v", bt.err)
			}
		} else if failed > 0 {
			okAfter++
		}
	}
	if failed == 0 || okAfter == 0 {
		t.Fatalf("%d batches failed, %d succeeded after a failure: the restart was not exercised", failed, okAfter)
	}
	present := 0
	for i, bt := range batches {
		rows, err := a.Files(ctx, bt.paths)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case bt.err == nil && len(rows) != len(bt.paths):
			t.Errorf("batch %d acknowledged, %d of %d rows present", i, len(rows), len(bt.paths))
		case bt.err != nil && len(rows) != 0 && len(rows) != len(bt.paths):
			t.Errorf("failed batch %d left %d of %d rows: a partial transaction", i, len(rows), len(bt.paths))
		}
		for p := range rows {
			present++
			h, err := a.Chunk(ctx, index.ChunkKey(p, 0))
			if err != nil || h.Text != "stream chunk of "+p {
				t.Errorf("%s: row present without its chunk: %q, %v", p, h.Text, err)
			}
		}
	}
	// The database's view (trigram query) and daemon B's in-memory tag
	// table (two-letter words are answered from memory) converge.
	want, err := a.TagKeywordCandidates(ctx, "/w/")
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != present {
		t.Fatalf("keyword candidates %d, rows %d", len(want), present)
	}
	sort.Strings(want)
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, _ := b.TagKeywordCandidates(ctx, "w/")
		sort.Strings(got)
		if slices.Equal(got, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon B's memory holds %d paths, the database %d: the listener did not recover", len(got), len(want))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("%d batches (%d rows), %d failed during the restart", len(batches), present, failed)
}

// viaProxy returns dsn with its host and port replaced by the proxy's.
func viaProxy(t *testing.T, dsn string, px *netproxy.Proxy) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = "127.0.0.1:" + strconv.Itoa(px.Port())
	return u.String()
}

// TestStoreSuiteOverDelayedLink runs the whole store suite with 2 ms of
// latency each way between the store and PostgreSQL.
func testStoreSuiteOverDelayedLink(t *testing.T, pg *testserver.Postgres) {
	px, err := netproxy.New("127.0.0.1:" + strconv.Itoa(pg.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	px.SetLatency(2*time.Millisecond, 2*time.Millisecond)
	indextest.Run(t, func(t *testing.T) index.Store {
		return openStore(t, viaProxy(t, freshDB(t, pg), px))
	})
}

// TestDelayedAndCutLink: a daemon behind a 20 ms link stays correct and
// sees the other daemon's changes; when every connection is cut, the next
// operations fail or succeed cleanly, the pool and the listener reconnect,
// and nothing acknowledged is lost.
func testDelayedAndCutLink(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	px, err := netproxy.New("127.0.0.1:" + strconv.Itoa(pg.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	px.SetLatency(20*time.Millisecond, 20*time.Millisecond)
	ctx := context.Background()
	far := openStore(t, viaProxy(t, dsn, px))
	near := openStore(t, dsn)

	start := time.Now()
	if err := far.Put(ctx, streamItem("/far/a.md")); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 40*time.Millisecond {
		t.Fatalf("a Put over a 40 ms round trip took %v: the proxy is not in the path", el)
	}
	hits, err := far.SearchChunks(ctx, []string{"stream"}, index.Filter{PathPrefix: "/far"}, 10)
	if err != nil || len(hits) != 1 || hits[0].Path != "/far/a.md" {
		t.Fatalf("search over the slow link = %v, %v", hits, err)
	}
	if err := near.Put(ctx, streamItem("/near/b.md")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the far daemon to see the near daemon's write", func() bool {
		c, _ := far.TagKeywordCandidates(ctx, "ne")
		return slices.Equal(c, []string{"/near/b.md"})
	})
	if err := far.Rename(ctx, "/far/a.md", "/far/c.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := near.File(ctx, "/far/a.md"); !errors.Is(err, semfs.ErrNotExist) {
		t.Fatalf("renamed-away row: %v", err)
	}

	// Cut every connection: the pool's and the listener's.
	px.Cut()
	var acked []string
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; len(acked) < 5; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("writes did not recover after the cut (%d acknowledged)", len(acked))
		}
		p := fmt.Sprintf("/far/after-%d", i)
		if err := far.Put(ctx, streamItem(p)); err == nil {
			acked = append(acked, p)
		} else if !strings.Contains(err.Error(), "PostgreSQL") {
			t.Fatalf("unclear error after a cut: %v", err)
		}
	}
	for _, p := range append(acked, "/far/c.md", "/near/b.md") {
		if _, err := near.File(ctx, p); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	// The far daemon's listener is back: it sees a new write by the near one.
	if err := near.Put(ctx, streamItem("/near/later.md")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the far daemon's listener to reconnect", func() bool {
		c, _ := far.TagKeywordCandidates(ctx, "la")
		return slices.Contains(c, "/near/later.md")
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
