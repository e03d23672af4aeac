package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// A Put right after Files reuses the rows Files read; after a write in
// between (of this handle or of another process) it reads them again, so
// a row inserted meanwhile is updated, not inserted twice.
func TestPutReusesRowsFilesRead(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	a := open(t, path)
	b := open(t, path)
	if err := a.Put(ctx, item("/old.md", "old text\n", semfs.Tags{Task: "t"})); err != nil {
		t.Fatal(err)
	}
	gen := func(ix *Index) int64 {
		var g int64
		if err := ix.db.QueryRow(readGenSQL).Scan(&g); err != nil {
			t.Fatal(err)
		}
		return g
	}
	items := []index.Item{item("/old.md", "x\n", semfs.Tags{}), item("/new.md", "y\n", semfs.Tags{})}
	if _, err := a.Files(ctx, []string{"/old.md", "/new.md"}); err != nil {
		t.Fatal(err)
	}
	rows, ok := a.takeSeen(gen(a), items)
	if !ok || len(rows) != 1 || rows["/old.md"].id == 0 || rows["/old.md"].grep != 1 {
		t.Fatalf("rows Files read: %v %v", rows, ok)
	}
	if _, ok := a.takeSeen(gen(a), items); ok {
		t.Fatal("the rows Files read were given twice")
	}
	if _, err := a.Files(ctx, []string{"/old.md"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.takeSeen(gen(a), items); ok {
		t.Fatal("rows given for a path Files did not read")
	}

	// Another process inserts /new.md between Files and Put.
	if _, err := a.Files(ctx, []string{"/old.md", "/new.md"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, item("/new.md", "from b\n", semfs.Tags{Task: "b"})); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.takeSeen(gen(a), items); ok {
		t.Fatal("rows given after another process wrote")
	}
	if _, err := a.Files(ctx, []string{"/old.md", "/new.md"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, item("/new.md", "from b again\n", semfs.Tags{Task: "b"})); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(ctx, items...); err != nil {
		t.Fatalf("Put after another process inserted a row: %v", err)
	}
	for _, ix := range []*Index{a, b} {
		r, err := ix.Check(ctx, false)
		if err != nil || r.Files != 2 || len(r.Problems) != 0 {
			t.Fatalf("check: %+v %v", r, err)
		}
		if got := searchPaths(t, ix, "y"); len(got) != 1 || got[0] != "/new.md:y\n" {
			t.Fatalf("search after the Put: %v", got)
		}
		if got := searchPaths(t, ix, "again"); len(got) != 0 {
			t.Fatalf("b's content of /new.md still found: %v", got)
		}
	}
}
