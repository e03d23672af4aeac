package meta_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// TestCloseRacesRename: an editor's save — write a temp file, close it,
// rename it over the target — where the close is committed while the
// rename runs (FUSE sends RELEASE in the background). Afterwards the target
// has a row matching its bytes and no temp file has one.
func TestCloseRacesRename(t *testing.T) {
	f, ix := newFS(t, nil)
	ctx := as("editor")
	if err := f.MkdirAll(ctx, "/t", 0o755); err != nil {
		t.Fatal(err)
	}
	var last string
	for i := range 150 {
		tmp := fmt.Sprintf("/t/.target.%d.tmp", i)
		last = fmt.Sprintf("version %d of the target, %s\n", i, string(make([]byte, i%7)))
		w, err := f.OpenFile(ctx, tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(last)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := w.Close(); err != nil {
				t.Error(err)
			}
		})
		if err := f.Rename(ctx, tmp, "/t/target"); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
	}
	rec, err := ix.File(context.Background(), "/t/target")
	if err != nil || rec.Size != int64(len(last)) {
		t.Fatalf("target row %+v, %v; want size %d", rec, err, len(last))
	}
	var ghosts []string
	ix.WalkFiles(context.Background(), "/t", func(r index.File) error {
		if r.Path != "/t/target" {
			ghosts = append(ghosts, r.Path)
		}
		return nil
	})
	if len(ghosts) > 0 {
		t.Fatalf("rows of renamed-away temp files: %v", ghosts)
	}
	if data, _ := semfs.ReadFile(context.Background(), f, "/t/target"); string(data) != last {
		t.Fatalf("target holds %q", data)
	}
}
