package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// PreparePut's write is Put's when the final items are the prepared ones,
// and falls back to analysing them again when they differ (a file skipped
// or rewritten between the preparation and the write).
func TestPreparePut(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "i.db"))
	found := func(word string) []string {
		t.Helper()
		hits, err := ix.SearchChunks(ctx, []string{word}, index.Filter{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, h := range hits {
			paths = append(paths, h.Path)
		}
		slices.Sort(paths)
		return slices.Compact(paths)
	}
	a := item("/a.md", "apple orchard notes\n", semfs.Tags{})
	b := item("/b.md", "banana plantation notes\n", semfs.Tags{})
	if err := ix.PreparePut([]index.Item{a, b})(ctx, []index.Item{a, b}); err != nil {
		t.Fatal(err)
	}
	if got := found("notes"); !slices.Equal(got, []string{"/a.md", "/b.md"}) {
		t.Fatalf("after a prepared write of both: notes in %v", got)
	}

	// Prepared with c and d; d is skipped and c rewritten before the write.
	c := item("/c.md", "cherry tree\n", semfs.Tags{})
	d := item("/d.md", "damson tree\n", semfs.Tags{})
	put := ix.PreparePut([]index.Item{c, d})
	c2 := item("/c.md", "cranberry bog\n", semfs.Tags{})
	if err := put(ctx, []index.Item{c2}); err != nil {
		t.Fatal(err)
	}
	if got := found("tree"); len(got) != 0 {
		t.Errorf("the prepared but not written contents are searchable: tree in %v", got)
	}
	if got := found("cranberry"); !slices.Equal(got, []string{"/c.md"}) {
		t.Errorf("the rewritten content: cranberry in %v, want [/c.md]", got)
	}
	if _, err := ix.File(ctx, "/d.md"); err == nil {
		t.Error("the skipped file has a row")
	}
	if rep, err := ix.Check(ctx, false); err != nil || len(rep.Problems) > 0 {
		t.Errorf("check: %v, %v", rep.Problems, err)
	}
}
