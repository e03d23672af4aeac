package meta_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs/access"
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
	dir := t.TempDir()
	host := hostDir(t, filepath.Join(dir, "data"))
	ix, err := sqlite.Open(ctx, filepath.Join(dir, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	m, err := meta.New(host, ix, meta.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	financeFile(t, m) // /q3.txt, groups finance
	if err := os.Remove(filepath.Join(dir, "data", "q3.txt")); err != nil {
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
