package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/indextest"
)

// TestStoreSuite runs the suite every index store runs (the PostgreSQL
// store runs the same one).
func TestStoreSuite(t *testing.T) {
	indextest.Run(t, func(t *testing.T) index.Store {
		ix, err := Open(context.Background(), filepath.Join(t.TempDir(), "index.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	})
}
