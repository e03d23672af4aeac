package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// A reader racing a writer sees the index before or after each write,
// never halfway (found in review R1).

// writeWhile runs write n times on a goroutine and read until it is done.
func writeWhile(t *testing.T, n int, write func() error, read func()) {
	t.Helper()
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer stop.Store(true)
		for range n {
			if err := write(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for !stop.Load() {
		read()
	}
	wg.Wait()
}

// A file re-saved with the same content stays a grep candidate and a
// search hit throughout: the delete and the add of its postings show
// together.
func TestResaveStaysVisible(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "i.db"))
	a := item("/a.txt", "hello world\n", semfs.Tags{})
	if err := ix.Put(ctx, a); err != nil {
		t.Fatal(err)
	}
	q, _, _ := index.PlanGrep("hello", false, false)
	var n, grepMiss, searchMiss int
	writeWhile(t, 200, func() error { return ix.Put(ctx, a) }, func() {
		n++
		c, _, err := ix.GrepCandidates(ctx, "/", q)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(c, "/a.txt") {
			grepMiss++
		}
		h, err := ix.SearchChunks(ctx, []string{"hello"}, index.Filter{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) == 0 {
			searchMiss++
		}
	})
	if grepMiss+searchMiss > 0 {
		t.Errorf("in %d lookups during re-saves of an unchanged file: grep missed it %d times, search %d times", n, grepMiss, searchMiss)
	}
}

// A search with a path filter returns no chunk outside it while renames
// move the file in and out.
func TestSearchFilterDuringRename(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "i.db"))
	if err := ix.Put(ctx, item("/x/a.txt", "hello world\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	var n, outside int
	i := 0
	writeWhile(t, 300, func() error {
		i++
		if i%2 == 1 {
			return ix.Rename(ctx, "/x/a.txt", "/y/a.txt")
		}
		return ix.Rename(ctx, "/y/a.txt", "/x/a.txt")
	}, func() {
		n++
		h, err := ix.SearchChunks(ctx, []string{"hello"}, index.Filter{PathPrefix: "/x"}, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range h {
			if !strings.HasPrefix(c.Path, "/x/") {
				outside++
			}
		}
	})
	if outside > 0 {
		t.Errorf("%d of %d searches under /x returned a chunk outside it", outside, n)
	}
}
