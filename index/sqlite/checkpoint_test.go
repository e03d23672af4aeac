package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// walSize is the size of the index's WAL file (0 when there is none).
func walSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path + "-wal")
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func countFiles(t *testing.T, ix *Index) int {
	t.Helper()
	var n int
	if err := ix.db.QueryRowContext(context.Background(), `SELECT count(*) FROM files`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// noteBatch is n items of about 2 KB each, their paths numbered from
// batch*n.
func noteBatch(batch, n int) []index.Item {
	items := make([]index.Item, n)
	for i := range items {
		no := batch*n + i
		text := strings.Repeat(fmt.Sprintf("note %d of batch %d about checkpoints and write ahead logs\n", no, batch), 32)
		items[i] = item(fmt.Sprintf("/notes/%06d.md", no), text, semfs.Tags{})
	}
	return items
}

// The writing handles do not checkpoint (their commits would copy the
// WAL on the writer's path): the checkpointer does, so the WAL stays
// short during a long ingest, is emptied when the index is idle, and is
// gone after Close; every row is in the database file then.
func TestCheckpointerBoundsWAL(t *testing.T) {
	ctx := context.Background()
	oldIdle, oldRestart := ckptIdle, walRestartFrames
	ckptIdle, walRestartFrames = 300*time.Millisecond, 512
	t.Cleanup(func() { ckptIdle, walRestartFrames = oldIdle, oldRestart })
	path := filepath.Join(t.TempDir(), "i.db")
	ix, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()

	for name, q := range map[string]func() (int, error){
		"db": func() (n int, err error) {
			err = ix.db.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&n)
			return n, err
		},
		"vdb": func() (n int, err error) {
			err = ix.vdb.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&n)
			return n, err
		},
	} {
		n, err := q()
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: wal_autocheckpoint = %d, want 0 (the checkpointer copies the WAL)", name, n)
		}
	}

	const batches, perBatch = 40, 200
	var most int64
	for b := range batches {
		if err := ix.Put(ctx, noteBatch(b, perBatch)...); err != nil {
			t.Fatal(err)
		}
		most = max(most, walSize(t, path))
	}
	dbFile, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// 40 batches of 200 notes of ~2 KB: some 16 MB of text alone went
	// through the WAL.
	if dbFile.Size() < 16<<20 {
		t.Errorf("database file is %d bytes after the ingest: the WAL was not copied into it", dbFile.Size())
	}
	// The WAL starts over when a checkpoint copied it all, or is
	// restarted above walRestartFrames (2 MiB here); a batch adds a few
	// MiB to it before the checkpointer can run. Without checkpoints it
	// would hold all the ingest.
	if limit := int64(10 << 20); most > limit {
		t.Errorf("the WAL reached %d bytes during the ingest, want at most %d", most, limit)
	}
	t.Logf("database %d bytes, WAL at most %d bytes", dbFile.Size(), most)

	// Idle: the checkpointer empties the WAL file.
	deadline := time.Now().Add(10 * time.Second)
	for walSize(t, path) != 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := walSize(t, path); n != 0 {
		t.Errorf("the WAL is %d bytes after the index was idle for %v, want 0", n, 10*time.Second)
	}

	// Another handle (another process) sees every row; after both close,
	// the WAL is gone and a new handle still sees every row.
	other := open(t, path)
	if n := countFiles(t, other); n != batches*perBatch {
		t.Errorf("another handle sees %d files, want %d", n, batches*perBatch)
	}
	if err := ix.Put(ctx, noteBatch(batches, perBatch)...); err != nil {
		t.Fatal(err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !os.IsNotExist(err) {
		t.Errorf("the WAL file is still there after Close (%v)", err)
	}
	again := open(t, path)
	if n := countFiles(t, again); n != (batches+1)*perBatch {
		t.Errorf("after reopening: %d files, want %d", n, (batches+1)*perBatch)
	}
	if got := grepPaths(t, again, "note 8100 of"); !slices.Equal(got, []string{"/notes/008100.md"}) {
		t.Errorf("grep for a note of the last batch: %q", got)
	}
}
