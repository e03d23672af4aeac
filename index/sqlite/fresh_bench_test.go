package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
)

// BenchmarkFreshLookup measures the lookups that check whether another
// process wrote (docs/bench/freshness.md) on an index nobody changes:
// 2000 small files with tag and chunk vectors of 64 dimensions.
//
//	go test -run '^$' -bench 'FreshLookup|Lookup$' -count 5 ./index/sqlite
func BenchmarkFreshLookup(b *testing.B) {
	ctx := context.Background()
	ix, err := Open(ctx, filepath.Join(b.TempDir(), "i.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	var items []index.Item
	for i := range 2000 {
		items = append(items, item(fmt.Sprintf("/d%d/f%d.txt", i%20, i), fmt.Sprintf("note %d about the quarterly budget review of team %d\n", i, i%50), semfs.Tags{Task: fmt.Sprintf("task%d", i%30)}))
	}
	if err := ix.Put(ctx, items...); err != nil {
		b.Fatal(err)
	}
	vec := func(i int) []float32 {
		v := make([]float32, 64)
		v[i%64], v[(i*7+1)%64] = 0.6, 0.8
		return v
	}
	for _, space := range []string{embedding.SpaceTags, embedding.SpaceContent} {
		rows, err := ix.NeedingEmbedding(ctx, space, "", 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		vecs := make([][]float32, len(rows))
		for i := range rows {
			vecs[i] = vec(i)
		}
		if err := ix.SetEmbeddings(ctx, space, rows, vecs); err != nil {
			b.Fatal(err)
		}
	}
	q := vec(3)
	b.Run("search", func(b *testing.B) {
		for b.Loop() {
			if _, err := ix.SearchChunks(ctx, []string{"budget", "team"}, index.Filter{}, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("nearest-content", func(b *testing.B) {
		for b.Loop() {
			if _, err := ix.Nearest(ctx, embedding.SpaceContent, q, 10, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tag-tiers", func(b *testing.B) {
		for b.Loop() {
			if _, err := ix.TagTiers(ctx, []string{"task7", "d3"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	keys := []string{"/d3/f3.txt", "/d4/f4.txt", "/d5/f5.txt"}
	b.Run("similarities", func(b *testing.B) {
		for b.Loop() {
			ix.Similarities(ctx, embedding.SpaceTags, q, keys)
		}
	})
}

// BenchmarkFreshPutBatch measures one Put of 4096 new small files into an
// empty index: each files row written also writes a fresh_log entry
// (insertFiles logs them, rowsPerInsert per statement).
func BenchmarkFreshPutBatch(b *testing.B) {
	ctx := context.Background()
	items := make([]index.Item, 4096)
	for i := range items {
		items[i] = item(fmt.Sprintf("/notes/%d/%d.md", i%64, i), fmt.Sprintf("note %d about the quarterly budget review of team %d\n", i, i%50), semfs.Tags{})
	}
	for b.Loop() {
		b.StopTimer()
		ix, err := Open(ctx, filepath.Join(b.TempDir(), "i.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := ix.Put(ctx, items...); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		ix.Close()
		b.StartTimer()
	}
}

// BenchmarkFreshSetEmbeddings measures one drain-worker batch: 256
// chunk vectors of 64 dimensions in one transaction (each logs a
// fresh_log entry).
func BenchmarkFreshSetEmbeddings(b *testing.B) {
	ctx := context.Background()
	ix, err := Open(ctx, filepath.Join(b.TempDir(), "i.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	var items []index.Item
	for i := range 2048 {
		items = append(items, item(fmt.Sprintf("/f%d.txt", i), fmt.Sprintf("text %d\n", i), semfs.Tags{}))
	}
	if err := ix.Put(ctx, items...); err != nil {
		b.Fatal(err)
	}
	rows, err := ix.NeedingEmbedding(ctx, embedding.SpaceContent, "", 1<<20)
	if err != nil {
		b.Fatal(err)
	}
	vecs := make([][]float32, len(rows))
	for i := range rows {
		vecs[i] = make([]float32, 64)
		vecs[i][i%64] = 1
	}
	i := 0
	for b.Loop() {
		lo := i % (len(rows) / 256) * 256
		if err := ix.SetEmbeddings(ctx, embedding.SpaceContent, rows[lo:lo+256], vecs[lo:lo+256]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
