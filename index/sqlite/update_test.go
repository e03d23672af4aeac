package sqlite

// Update refuses chunk numbers that repeat, go down or need six digits,
// as Put does: the chunks' index does not enforce unique keys (review 8,
// R8-3).

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

func TestUpdateChecksChunkNumbers(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "i.db"))
	for _, nos := range [][]int{{0, 0}, {1, 0}, {0, 100001}} {
		bad := item("/bad.md", "one\n\ntwo\n", semfs.Tags{})
		var chunks []index.Chunk
		for _, no := range nos {
			chunks = append(chunks, index.Chunk{No: no, StartLine: 1, EndLine: 1, Text: fmt.Sprint("chunk ", no)})
		}
		bad.Content.Chunks = chunks
		err := ix.Update(ctx, []string{"/bad.md"}, func(map[string]index.File) ([]index.Item, error) {
			return []index.Item{bad}, nil
		})
		if !errors.Is(err, semfs.ErrInvalid) || !strings.Contains(err.Error(), "chunk number") {
			t.Errorf("Update with chunk numbers %v: %v, want the invalid-argument error Put gives", nos, err)
		}
		var n, keys int
		if err := ix.db.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT key) FROM chunks`).Scan(&n, &keys); err != nil {
			t.Fatal(err)
		}
		if n != keys {
			t.Errorf("chunk numbers %v: %d chunks rows but %d distinct keys: duplicate chunk keys written through Update", nos, n, keys)
		}
	}
}
