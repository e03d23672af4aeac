package meta_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/meta"
)

// TestRenameOntoStaleRowKeepsOwnGroups: a restricted file removed behind
// the mount leaves its row until Reconcile; a file bob writes and renames
// to that (free) name must not take the stale row's groups (a restriction
// is kept only for a file the rename replaced, looked up before the base
// moves the file).
func TestRenameOntoStaleRowKeepsOwnGroups(t *testing.T) {
	ctx := context.Background()
	m, data := hostStack(t, nil)
	financeFile(t, m) // /q3.txt, groups finance
	if err := os.Remove(filepath.Join(data, "q3.txt")); err != nil {
		t.Fatal(err)
	}
	acc := access.New(m, access.Policy{})
	if err := acc.WriteFile(bob, "/draft.txt", []byte("bob's notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.Flush(ctx)
	if err := acc.Rename(bob, "/draft.txt", "/q3.txt"); err != nil {
		t.Fatal(err)
	}
	m.Flush(ctx)
	if b, err := acc.ReadFile(bob, "/q3.txt"); err != nil {
		t.Errorf("bob cannot read the file he just renamed to a free name: %q, %v", b, err)
	}
}

// hostStack opens the metadata layer over a host directory and a SQLite
// index in a new temporary directory, the store wrapped by wrap (nil: as
// it is); both close when the test ends. It returns the layer and the
// host directory's path.
func hostStack(t *testing.T, wrap func(*sqlite.Index) index.Store) (*meta.FS, string) {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	m, closeM := openLayer(t, hostDir(t, data), filepath.Join(dir, "index.db"), wrap, meta.Options{})
	t.Cleanup(closeM)
	return m, data
}
