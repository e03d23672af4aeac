package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs"
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
