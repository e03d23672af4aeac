package postgres

// A tag of a file whose first row another daemon is writing is kept
// (review 7, R6).

import (
	"context"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index/indextest"
	"github.com/semfs/semfs/internal/testserver"
)

// TestTagOfNewFileKeptOverFirstSave: Update locks only rows that exist.
// Daemon A writes a new file /x.md (no row yet); while A builds its row
// (read FOR UPDATE found nothing, so nothing is locked), daemon B, which
// sees the file in the shared tree, restricts it to finance: B's Update
// finds no row, inserts a pending row with the groups and commits. A then
// inserts its row, built from "no row", and ON CONFLICT overwrites B's
// groups: the file B restricted is public, although B's tag succeeded.
// This is the exposure c160281 says it removes, for a file's first save.
func TestTagOfNewFileKeptOverFirstSave(t *testing.T) {
	pg := testserver.StartPostgres(t)
	dsn := freshDB(t, pg)
	ctx := context.Background()
	dir := t.TempDir()
	g := indextest.Gate(openStore(t, dsn))
	a, b := indextest.Layer(t, dir, g), indextest.Layer(t, dir, openStore(t, dsn))
	done := make(chan error, 1)
	hook := func() {
		go func() {
			done <- b.SetTags(ctx, "/x.md", semfs.Tags{Task: "audit", Groups: []string{"finance"}})
		}()
		select {
		case err := <-done:
			done <- err
		case <-time.After(2 * time.Second):
		}
	}
	g.Hook(hook)
	if err := a.WriteFile(semfs.WithPrincipal(ctx, semfs.Principal{ID: "app"}), "/x.md", []byte("board numbers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if g.Pending() {
		t.Fatal("A did not read the row")
	}
	if err := <-done; err != nil {
		t.Fatalf("B's tag: %v", err)
	}
	row, err := openStore(t, dsn).File(ctx, "/x.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(row.Groups) == 0 {
		t.Errorf("B restricted /x.md to finance (its tag returned nil) while A stored the file's first row; the row now: groups=%v task=%q — the file is public", row.Groups, row.Task)
	}
}
