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
