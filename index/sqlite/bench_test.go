package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// BenchmarkPutSmall measures one durable metadata + derived-data write of a
// small file (one transaction), with synchronous=FULL (the default) and
// NORMAL for comparison.
func BenchmarkPutSmall(b *testing.B) {
	for _, mode := range []string{"FULL", "NORMAL"} {
		b.Run(mode, func(b *testing.B) {
			old := syncMode
			syncMode = mode
			defer func() { syncMode = old }()
			ix, err := Open(context.Background(), filepath.Join(b.TempDir(), "i.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			ctx := context.Background()
			i := 0
			for b.Loop() {
				it := item(fmt.Sprintf("/f%d.txt", i%1000), "a small note about the quarterly budget review\n", semfs.Tags{Task: "notes"})
				if err := ix.Put(ctx, it); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkSetEmbedding measures one drain-worker vector write.
func BenchmarkSetEmbedding(b *testing.B) {
	ix, err := Open(context.Background(), filepath.Join(b.TempDir(), "i.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	const n = 1000
	for i := range n {
		if err := ix.Put(ctx, item(fmt.Sprintf("/f%d.txt", i), "some text\n", semfs.Tags{})); err != nil {
			b.Fatal(err)
		}
	}
	vec := make([]float32, 100)
	vec[0] = 1
	i := 0
	for b.Loop() {
		p := fmt.Sprintf("/f%d.txt", i%n)
		if err := ix.SetEmbedding(ctx, "content", p+"#00000", "some text\n", vec); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkLookup measures a search and a grep candidate lookup on 2000
// small files: the in-memory postings plus the rows read with them in one
// read transaction.
func BenchmarkLookup(b *testing.B) {
	ctx := context.Background()
	ix, err := Open(ctx, filepath.Join(b.TempDir(), "i.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	var items []index.Item
	for i := range 2000 {
		items = append(items, item(fmt.Sprintf("/d%d/f%d.txt", i%20, i), fmt.Sprintf("note %d about the quarterly budget review of team %d\n", i, i%50), semfs.Tags{}))
	}
	if err := ix.Put(ctx, items...); err != nil {
		b.Fatal(err)
	}
	b.Run("search", func(b *testing.B) {
		for b.Loop() {
			if _, err := ix.SearchChunks(ctx, []string{"budget", "team"}, index.Filter{}, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("search-filtered", func(b *testing.B) {
		for b.Loop() {
			if _, err := ix.SearchChunks(ctx, []string{"budget"}, index.Filter{PathPrefix: "/d3"}, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
	q, _, _ := index.PlanGrep("team 4", false, false)
	b.Run("grep", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := ix.GrepCandidates(ctx, "/", q); err != nil {
				b.Fatal(err)
			}
		}
	})
}
