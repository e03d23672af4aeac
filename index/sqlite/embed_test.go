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

// TestSimilaritiesSplit: a key list long enough to be split over the cores
// gives, in order, each key's own similarity (0 for a key without a
// vector), as one key at a time does.
func TestSimilaritiesSplit(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "i.db"))
	n := 3*parallelSimilarities + 7
	var rows []embedding.Pending
	var vecs [][]float32
	var items []index.Item
	for i := range n {
		p := fmt.Sprintf("/f%05d", i)
		items = append(items, index.Item{File: index.File{Meta: semfs.Meta{Path: p}}, TagText: p})
		rows = append(rows, embedding.Pending{Key: p, Text: p})
		vecs = append(vecs, []float32{float32(i%97) / 97, float32(i%13) / 13, 1})
	}
	if err := ix.Put(ctx, items...); err != nil {
		t.Fatal(err)
	}
	if err := ix.SetEmbeddings(ctx, embedding.SpaceTags, rows, vecs); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, n+1)
	for i := n - 1; i >= 0; i-- {
		keys = append(keys, fmt.Sprintf("/f%05d", i))
	}
	keys = append(keys[:n/2], append([]string{"/missing"}, keys[n/2:]...)...)
	q := []float32{0.5, -1, 2}
	got := ix.Similarities(ctx, embedding.SpaceTags, q, keys)
	if len(got) != len(keys) {
		t.Fatalf("%d similarities for %d keys", len(got), len(keys))
	}
	for i, k := range keys {
		want := ix.Similarities(ctx, embedding.SpaceTags, q, []string{k})[0]
		if got[i] != want {
			t.Fatalf("key %d (%s): %v, want %v", i, k, got[i], want)
		}
	}
	if got[n/2] != 0 {
		t.Fatalf("missing key: %v", got[n/2])
	}
}
