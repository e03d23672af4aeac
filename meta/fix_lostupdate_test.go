package meta_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/indextest"
	"github.com/semfs/semfs/index/sqlite"
)

// sharedSQLite gives each process of a two-process scenario its own
// handle on one SQLite file.
func sharedSQLite(t *testing.T) func() index.Store {
	db := filepath.Join(t.TempDir(), "index.db")
	return func() index.Store {
		ix, err := sqlite.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
}

// TestNoLostUpdateBetweenProcesses: two processes' meta layers over one
// SQLite file and one tree (a daemon and `semfs tag` beside it); see
// indextest.NoLostUpdate.
func TestNoLostUpdateBetweenProcesses(t *testing.T) {
	indextest.NoLostUpdate(t, sharedSQLite)
}

// TestReconcileNoLostUpdateBetweenProcesses: a reconcile and a tag by two
// processes over one SQLite file and one tree (`semfs index` beside a
// daemon); see indextest.ReconcileNoLostUpdate.
func TestReconcileNoLostUpdateBetweenProcesses(t *testing.T) {
	indextest.ReconcileNoLostUpdate(t, sharedSQLite)
}
