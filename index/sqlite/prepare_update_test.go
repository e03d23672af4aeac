package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// A prepared update builds its items from the rows as read in its write
// transaction: a tag another handle (another process) wrote after the
// preparation reaches build and is written back as it is, while the
// contents take the analysis prepared before. Items that differ from the
// prepared ones, or name a path build was not given, are written as
// Update writes them.
func TestPrepareUpdateReadsRowsInTheWrite(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "i.db")
	ix, other := open(t, db), open(t, db)
	for _, it := range []index.Item{
		item("/a.md", "apple orchard\n", semfs.Tags{}),
		item("/b.md", "birch forest\n", semfs.Tags{}),
		item("/c.md", "cedar grove\n", semfs.Tags{}),
	} {
		if err := ix.Put(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	// newBytes is what a reconcile writes of a file: its new content,
	// on the stored row.
	newBytes := func(stored map[string]index.File, it index.Item) index.Item {
		row := stored[it.File.Path]
		row.Size, row.Hash, row.State = it.File.Size, "h-"+it.File.Path, it.File.State
		return index.Item{File: row, TagText: index.TagText(row.Meta), Content: it.Content}
	}
	a2 := item("/a.md", "apricot jam\n", semfs.Tags{})
	b2 := item("/b.md", "beech hedge\n", semfs.Tags{})
	update := ix.PrepareUpdate([]index.Item{a2, b2})

	// Another process restricts /a.md after the preparation.
	restricted := item("/a.md", "apple orchard\n", semfs.Tags{Task: "audit", Groups: []string{"finance"}})
	restricted.Content = nil
	if err := other.Put(ctx, restricted); err != nil {
		t.Fatal(err)
	}
	calls := 0
	err := update(ctx, []string{"/a.md", "/b.md"}, func(stored map[string]index.File) ([]index.Item, error) {
		calls++
		if got := stored["/a.md"].Groups; !slices.Equal(got, []string{"finance"}) {
			t.Errorf("build got /a.md's groups %v, want the other handle's [finance]", got)
		}
		return []index.Item{newBytes(stored, a2), newBytes(stored, b2)}, nil
	})
	if err != nil || calls != 1 {
		t.Fatalf("update: %v, build called %d times", err, calls)
	}
	a, err := other.File(ctx, "/a.md")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Groups, []string{"finance"}) || a.Task != "audit" || a.Hash != "h-/a.md" || a.Size != a2.File.Size {
		t.Errorf("/a.md: groups=%v task=%q hash=%q size=%d; want the other's tags and the new bytes", a.Groups, a.Task, a.Hash, a.Size)
	}
	for word, want := range map[string][]string{"apricot": {"/a.md"}, "beech": {"/b.md"}, "apple": nil, "birch": nil} {
		if got := paths(t, other, word); !slices.Equal(got, want) {
			t.Errorf("%s in %v, want %v", word, got, want)
		}
	}

	// Prepared with /b.md and /c.md; build skips /b.md and names /a.md,
	// which it was not given: both are analysed again, and /a.md's row is
	// found, not inserted twice.
	b3 := item("/b.md", "bramble\n", semfs.Tags{})
	c3 := item("/c.md", "cypress swamp\n", semfs.Tags{})
	update = ix.PrepareUpdate([]index.Item{b3, c3})
	a3 := item("/a.md", "almond blossom\n", semfs.Tags{})
	err = update(ctx, []string{"/b.md", "/c.md"}, func(stored map[string]index.File) ([]index.Item, error) {
		if _, ok := stored["/a.md"]; ok {
			t.Error("build got the row of a path it did not name")
		}
		return []index.Item{newBytes(stored, c3), newBytes(map[string]index.File{"/a.md": a}, a3)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for word, want := range map[string][]string{"cypress": {"/c.md"}, "almond": {"/a.md"}, "beech": {"/b.md"}, "bramble": nil, "cedar": nil, "apricot": nil} {
		if got := paths(t, ix, word); !slices.Equal(got, want) {
			t.Errorf("after the changed batch, %s in %v, want %v", word, got, want)
		}
	}
	if rep, err := ix.Check(ctx, false); err != nil || rep.Files != 3 || len(rep.Problems) > 0 {
		t.Errorf("check: %+v, %v", rep, err)
	}
}

// paths returns the files whose chunks hold word.
func paths(t *testing.T, ix *Index, word string) []string {
	t.Helper()
	hits, err := ix.SearchChunks(context.Background(), index.QueryTokens(word), index.Filter{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, h.Path)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
