package daemon_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs"
)

// TestConcurrentClosesIndexed closes many small files at once, as a FUSE
// mount does when a stream of files is written: the metadata layer commits
// their rows in groups. Every close must return only once its own row is
// stored, with its own writer as created_by; the path-only tag vectors
// left to the drain worker must be filled without waiting for the
// worker's 30 s tick.
func TestConcurrentClosesIndexed(t *testing.T) {
	_, d := headless(t)
	fsys := d.FS()
	mfs, ok := fsys.(semfs.MetaFS)
	if !ok {
		t.Fatalf("the daemon's tree %T has no metadata", fsys)
	}
	const files, writers = 120, 12
	start := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			ctx := semfs.WithPrincipal(context.Background(), semfs.Principal{App: fmt.Sprintf("app%d", w)})
			for i := w; i < files; i += writers {
				p := fmt.Sprintf("/d%d/f%03d.txt", i%3, i)
				if err := semfs.MkdirAll(ctx, fsys, fmt.Sprintf("/d%d", i%3), 0o755); err != nil {
					t.Error(err)
					return
				}
				f, err := semfs.OpenFile(ctx, fsys, p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := f.Write([]byte(fmt.Sprintf("file %d written by app%d\n", i, w))); err != nil {
					t.Error(err)
				}
				if err := f.Close(); err != nil {
					t.Error(err)
				}
				// The row is committed when Close returns.
				m, err := mfs.Meta(ctx, p)
				if err != nil {
					t.Errorf("Meta(%s) right after its close: %v", p, err)
				} else if want := fmt.Sprintf("app%d", w); m.CreatedBy != want {
					t.Errorf("Meta(%s) right after its close: created_by %q; want %q (its row was not stored, or another save's was)", p, m.CreatedBy, want)
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for {
		bl, err := d.Backlog(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if bl.Idle() {
			return
		}
		if time.Since(start) > 25*time.Second {
			t.Fatalf("25 s after the writes began the index still owes %+v; was the tags drain worker woken?", bl)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
