package meta

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A rename in the window between Rename's flush and the base rename moves
// the closes recorded meanwhile (closes.rename): a close of the source
// follows it, a close of the file the rename replaced is dropped, and the
// journal, read back, names the moved file's writer at its new path.
func TestClosesRenameMovesPending(t *testing.T) {
	j, left, err := openCloseJournal(filepath.Join(t.TempDir(), "closes.journal"))
	if err != nil || len(left) != 0 {
		t.Fatalf("new journal: %v, %v", left, err)
	}
	defer j.close()
	c := &closes{journal: j, wake: make(chan struct{}, 1)}
	now := time.Now()
	for _, d := range []closed{{"/src/a", "A", now}, {"/dst/a", "B", now}, {"/other", "C", now}, {"/src/a", "D", now}} {
		if !c.add(d.path, d.creator, d.at) {
			t.Fatal("add refused")
		}
	}
	if got := c.unflushed.Load(); got != 3 {
		t.Fatalf("unflushed %d after 4 closes of 3 paths; want 3", got)
	}
	c.rename("/src", "/dst")
	var got []string
	for _, d := range c.pending {
		got = append(got, d.path+"="+d.creator)
	}
	if want := []string{"/dst/a=A", "/other=C"}; !slices.Equal(got, want) {
		t.Fatalf("pending after the rename %v; want %v", got, want)
	}
	if got := c.unflushed.Load(); got != 2 {
		t.Fatalf("unflushed %d after the rename; want 2", got)
	}
	if _, ok := c.paths["/src/a"]; ok || len(c.paths) != 2 {
		t.Fatalf("path index %v after the rename", c.paths)
	}
	// The next process reads the journal back.
	_, left, err = openCloseJournal(j.f.Name())
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]string{}
	for _, d := range left {
		byPath[d.path] = d.creator
	}
	if byPath["/dst/a"] != "A" || byPath["/other"] != "C" {
		t.Fatalf("journal read back %v; want /dst/a by A and /other by C", byPath)
	}
}
