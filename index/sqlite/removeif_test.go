package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/indextest"
)

// TestRemoveIfSeesOtherWriters: RemoveIf decides on the rows as another
// handle on the same file (another process) committed them, and removes
// only the rows its decision names (see indextest.RemoveIfSeesOtherWriters).
func TestRemoveIfSeesOtherWriters(t *testing.T) {
	indextest.RemoveIfSeesOtherWriters(t, func(t *testing.T) func() index.Store {
		db := filepath.Join(t.TempDir(), "index.db")
		return func() index.Store {
			ix, err := Open(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ix.Close() })
			return ix
		}
	})
}
