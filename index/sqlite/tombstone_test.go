package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// A tombstone row moved to another document of its segment keeps every
// count, but the live documents are no longer the rows: Open and Check
// must find it (postings_dead rows carry no checksum; review R1 finding
// 5), not lose /b.txt from search.
func TestMovedTombstoneDetected(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	ix := open(t, path)
	if err := ix.Put(ctx, item("/a.txt", "apple\n", semfs.Tags{}), item("/b.txt", "banana\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	if err := ix.Remove(ctx, "/a.txt", false); err != nil {
		t.Fatal(err)
	}
	moveTombstones := func() {
		t.Helper()
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		res, err := db.Exec(`UPDATE postings_dead SET doc = 1 WHERE doc = 0`)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			t.Fatal("no tombstone moved: the test no longer damages anything")
		}
	}
	moveTombstones()
	r, err := ix.Check(ctx, false)
	if err != nil || len(r.Problems) == 0 {
		t.Errorf("Check after a tombstone moved: problems %v, %v; want some", r.Problems, err)
	}
	ix.Close()
	ix = open(t, path)
	if len(ix.Repaired) == 0 {
		t.Fatal("Open after a tombstone moved: nothing repaired")
	}
	f, err := ix.File(ctx, "/b.txt")
	if err != nil || f.State != index.StatePending {
		t.Errorf("/b.txt after repair: state %q, %v; want pending (re-indexed from its bytes)", f.State, err)
	}
}
