package meta_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/indextest"
	"github.com/semfs/semfs/index/sqlite"
)

// TestNoLostUpdateBetweenProcesses: two processes' meta layers over one
// SQLite file and one tree (a daemon and `semfs tag` beside it); see
// indextest.NoLostUpdate.
func TestNoLostUpdateBetweenProcesses(t *testing.T) {
	indextest.NoLostUpdate(t, func(t *testing.T) func() index.Store {
		db := filepath.Join(t.TempDir(), "index.db")
		return func() index.Store {
			ix, err := sqlite.Open(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ix.Close() })
			return ix
		}
	})
}
