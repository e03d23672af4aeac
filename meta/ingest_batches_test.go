package meta

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/memfs"
)

// Reconcile writes batch N while the store prepares batch N+1: with
// batches of seven files, an import, a reconcile of changes and a
// reindex each go through many batches, and every file ends up indexed
// once, with its latest bytes.
func TestReconcileManyBatches(t *testing.T) {
	defer func(n int) { batchItems = n }(batchItems)
	batchItems = 7
	ctx := context.Background()
	base := memfs.New()
	note := func(i int, word string) {
		p := fmt.Sprintf("/d%d/f%02d.md", i%3, i)
		if err := semfs.WriteFile(ctx, base, p, fmt.Appendf(nil, "note %d about %s\n", i, code(word, i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 60 {
		note(i, "kestrel")
	}
	if code("osprey", 65) != "cnosprey" {
		t.Fatal(code("osprey", 65))
	}
	ix, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "i.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	f, err := New(base, ix, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	find := func(word string) []string {
		t.Helper()
		hits, err := ix.SearchChunks(ctx, index.QueryTokens(word), index.Filter{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range hits {
			out = append(out, h.Path)
		}
		return out
	}
	check := func(files int) {
		t.Helper()
		r, err := ix.Check(ctx, false)
		if err != nil || r.Files != files || r.Chunks != files || r.Pending != 0 || len(r.Problems) > 0 {
			t.Fatalf("check: %+v %v, want %d files", r, err, files)
		}
	}
	rep, err := f.Reconcile(ctx, ReconcileOptions{})
	if err != nil || rep.Added != 60 {
		t.Fatalf("import: %+v %v", rep, err)
	}
	check(60)
	for i := range 60 {
		if got, want := find(code("kestrel", i)), []string{fmt.Sprintf("/d%d/f%02d.md", i%3, i)}; !slices.Equal(got, want) {
			t.Fatalf("%s: %v, want %v", code("kestrel", i), got, want)
		}
	}
	for i := range 9 {
		note(i*5, "osprey")
	}
	for i := 60; i < 66; i++ {
		note(i, "osprey")
	}
	for _, i := range []int{1, 2, 3, 4} {
		if err := semfs.Remove(ctx, base, fmt.Sprintf("/d%d/f%02d.md", i%3, i)); err != nil {
			t.Fatal(err)
		}
	}
	rep, err = f.Reconcile(ctx, ReconcileOptions{})
	if err != nil || rep.Added != 6 || rep.Updated != 9 || rep.Removed != 4 || rep.Unchanged != 47 {
		t.Fatalf("reconcile: %+v %v", rep, err)
	}
	check(62)
	if got := find(code("kestrel", 10)); len(got) != 0 {
		t.Errorf("replaced text still found: %v", got)
	}
	if got := find(code("osprey", 10)); !slices.Equal(got, []string{"/d1/f10.md"}) {
		t.Errorf("osprey10: %v", got)
	}
	if got := find(code("kestrel", 3)); len(got) != 0 {
		t.Errorf("removed file still found: %v", got)
	}
	if got := find(code("osprey", 65)); !slices.Equal(got, []string{"/d2/f65.md"}) {
		t.Errorf("osprey65: %v", got)
	}
	rep, err = f.Reindex(ctx, ReconcileOptions{})
	if err != nil || rep.Updated != 62 {
		t.Fatalf("reindex: %+v %v", rep, err)
	}
	check(62)
	for i := range 66 {
		word, want := "kestrel", []string{fmt.Sprintf("/d%d/f%02d.md", i%3, i)}
		switch {
		case i >= 1 && i <= 4:
			want = nil
		case i%5 == 0 && i < 45 || i >= 60:
			word = "osprey"
		}
		if got := find(code(word, i)); !slices.Equal(got, want) {
			t.Errorf("after reindex, %s: %v, want %v", code(word, i), got, want)
		}
	}
}

// code is two letters for i followed by word: one word to the tokenizer
// (which splits a number off) that stemming leaves distinct.
func code(word string, i int) string {
	return fmt.Sprintf("%c%c%s", 'a'+i/26, 'a'+i%26, word)
}

// batchSizes is a store that records the size of each batch Reconcile
// prepares and writes.
type batchSizes struct {
	*sqlite.Index
	prepared, put []int
}

func (s *batchSizes) PrepareUpdate(items []index.Item) func(context.Context, []string, func(map[string]index.File) ([]index.Item, error)) error {
	s.prepared = append(s.prepared, len(items))
	update := s.Index.PrepareUpdate(items)
	return func(ctx context.Context, paths []string, build func(map[string]index.File) ([]index.Item, error)) error {
		return update(ctx, paths, func(stored map[string]index.File) ([]index.Item, error) {
			items, err := build(stored)
			s.put = append(s.put, len(items))
			return items, err
		})
	}
}

// Reconcile's batches start small and double up to batchItems, so that
// the writer starts early; every file is written once.
func TestReconcileBatchesRamp(t *testing.T) {
	defer func(n, m int) { batchItems, firstBatch = n, m }(batchItems, firstBatch)
	batchItems, firstBatch = 16, 2
	ctx := context.Background()
	base := memfs.New()
	for i := range 70 {
		if err := semfs.WriteFile(ctx, base, fmt.Sprintf("/n/f%02d.md", i), fmt.Appendf(nil, "note %s\n", code("wren", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "i.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	store := &batchSizes{Index: ix}
	f, err := New(base, store, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := f.Reconcile(ctx, ReconcileOptions{})
	if err != nil || rep.Added != 70 {
		t.Fatalf("import: %+v %v", rep, err)
	}
	want := []int{2, 4, 8, 16, 16, 16, 8}
	if !slices.Equal(store.prepared, want) || !slices.Equal(store.put, want) {
		t.Fatalf("batches prepared %v, written %v, want %v", store.prepared, store.put, want)
	}
	hits, err := ix.SearchChunks(ctx, index.QueryTokens(code("wren", 69)), index.Filter{}, 10)
	if err != nil || len(hits) != 1 || hits[0].Path != "/n/f69.md" {
		t.Fatalf("last file: %v %v", hits, err)
	}
}

// A Reconcile cancelled midway returns the context's error and releases
// every ticket it took (files handed to its readers a run at a time); the
// next Reconcile indexes what the first did not.
func TestReconcileCancelledReleasesTickets(t *testing.T) {
	ctx := context.Background()
	base := memfs.New()
	const n = 3000
	for i := range n {
		if err := semfs.WriteFile(ctx, base, fmt.Sprintf("/c/f%04d.md", i), fmt.Appendf(nil, "note %d\n", i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "i.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	f, err := New(base, ix, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	first, err := f.Reconcile(cctx, ReconcileOptions{Progress: func(done, total int) {
		if done == 700 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled reconcile: %+v %v", first, err)
	}
	f.tickets.mu.Lock()
	held := len(f.tickets.paths)
	f.tickets.mu.Unlock()
	if held != 0 {
		t.Fatalf("%d paths still hold tickets", held)
	}
	second, err := f.Reconcile(ctx, ReconcileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ix.Check(ctx, false)
	if err != nil || r.Files != n || len(r.Problems) > 0 {
		t.Fatalf("check: %+v %v, want %d files", r, err, n)
	}
	if second.Added+second.Unchanged != n || second.Added == 0 {
		t.Fatalf("second reconcile: %+v", second)
	}
}
