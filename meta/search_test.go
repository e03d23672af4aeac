package meta_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/semfs/semfs"
)

// TestSearchPagesCarryFileFields: file fields (created_by, task) are read
// only for the hits of the page shown; every page must still carry them,
// and a hit's signals must be the ones that found it.
func TestSearchPagesCarryFileFields(t *testing.T) {
	f, _ := newFS(t, nil)
	ctx := context.Background()
	want := map[string][2]string{}
	for i := range 6 {
		p := fmt.Sprintf("/n/note%d.md", i)
		app, task := fmt.Sprintf("app%d", i%3), fmt.Sprintf("task%d", i)
		write(t, f, as(app), p, fmt.Sprintf("# Note %d\n\nthe walrus migration plan, step %d\n", i, i))
		if err := f.SetTags(ctx, p, semfs.Tags{Task: task}); err != nil {
			t.Fatal(err)
		}
		want[p] = [2]string{app, task}
	}
	seen := 0
	cur := ""
	for range 10 {
		hits, next := search(t, f, semfs.SearchRequest{Query: "walrus migration", Limit: 2, Cursor: cur})
		for _, h := range hits {
			w, ok := want[h.Path]
			if !ok {
				t.Fatalf("unexpected hit %s", h.Path)
			}
			if h.CreatedBy != w[0] || h.Task != w[1] {
				t.Errorf("%s: created_by %q task %q, want %q %q", h.Path, h.CreatedBy, h.Task, w[0], w[1])
			}
			if h.Scores["bm25"] <= 0 {
				t.Errorf("%s: no bm25 score in %v", h.Path, h.Scores)
			}
			seen++
		}
		if next == "" {
			break
		}
		cur = next
	}
	if seen != len(want) {
		t.Fatalf("pages held %d hits, want %d", seen, len(want))
	}
}
