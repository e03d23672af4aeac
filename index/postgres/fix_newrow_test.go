package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/internal/testserver"
)

// testUpdateOfNewRowWaits: while one daemon's Update builds the first row
// of a path (no row exists, so FOR UPDATE locks nothing), another
// daemon's Update of that path waits for its commit and builds on the row
// it wrote, instead of building from nothing and being overwritten (review
// 7, R6). Both for an Update of few paths (a lock per path) and of more
// than manyPaths (the lock of all paths).
func testUpdateOfNewRowWaits(t *testing.T, pg *testserver.Postgres) {
	for _, n := range []int{1, manyPaths + 1} {
		t.Run(fmt.Sprintf("%d-paths", n), func(t *testing.T) {
			dsn := freshDB(t, pg)
			ctx := context.Background()
			a, b := openStore(t, dsn), openStore(t, dsn)
			paths := []string{"/new.md"}
			for i := 1; i < n; i++ {
				paths = append(paths, fmt.Sprintf("/bulk/%04d.md", i))
			}
			entered, release := make(chan struct{}), make(chan struct{})
			errA := make(chan error, 1)
			go func() {
				errA <- a.Update(ctx, paths, func(stored map[string]index.File) ([]index.Item, error) {
					close(entered)
					<-release
					items := make([]index.Item, len(paths))
					for i, p := range paths {
						m := semfs.Meta{Path: p, CreatedBy: "a", Size: 3}
						items[i] = index.Item{File: index.File{Meta: m}, TagText: index.TagText(m)}
					}
					return items, nil
				})
			}()
			<-entered
			var seen index.File
			var found bool
			errB := make(chan error, 1)
			go func() {
				errB <- b.Update(ctx, []string{"/new.md"}, func(stored map[string]index.File) ([]index.Item, error) {
					seen, found = stored["/new.md"]
					f := seen
					if !found {
						f = index.File{Meta: semfs.Meta{Path: "/new.md"}}
					}
					f.Groups = []string{"finance"}
					return []index.Item{{File: f, TagText: index.TagText(f.Meta)}}, nil
				})
			}()
			select {
			case err := <-errB:
				t.Errorf("B's Update of /new.md committed (%v) while A's Update of its first row was open", err)
				errB <- err
			case <-time.After(300 * time.Millisecond):
			}
			close(release)
			if err := <-errA; err != nil {
				t.Fatal(err)
			}
			if err := <-errB; err != nil {
				t.Fatal(err)
			}
			if !found || seen.CreatedBy != "a" {
				t.Errorf("B's Update read /new.md as found=%v created_by=%q; want A's row", found, seen.CreatedBy)
			}
			row, err := openStore(t, dsn).File(ctx, "/new.md")
			if err != nil {
				t.Fatal(err)
			}
			if row.CreatedBy != "a" || !slices.Equal(row.Groups, []string{"finance"}) || row.Size != 3 {
				t.Errorf("/new.md after both Updates: created_by=%q groups=%v size=%d; want a, finance, 3", row.CreatedBy, row.Groups, row.Size)
			}
		})
	}
}

// testUpdatesOfOverlappingPaths: Updates of overlapping paths, small and
// large, named in any order, from two daemons at once, all commit (their
// locks are taken in one order, so none waits for another in a cycle and
// PostgreSQL reports no deadlock) and leave every row written.
func testUpdatesOfOverlappingPaths(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	stores := []*Index{openStore(t, dsn), openStore(t, dsn)}
	var all []string
	for i := range manyPaths + 10 {
		all = append(all, fmt.Sprintf("/o/%04d", i))
	}
	sets := [][]string{all[:8], all[4:12], slices.Clone(all[:12]), all}
	slices.Reverse(sets[2])
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(sets)*4)
	for s, store := range stores {
		for round := range 4 {
			for i, set := range sets {
				wg.Go(func() {
					errs <- store.Update(ctx, set, func(stored map[string]index.File) ([]index.Item, error) {
						time.Sleep(time.Millisecond)
						items := make([]index.Item, len(set))
						for j, p := range set {
							m := semfs.Meta{Path: p, Tags: semfs.Tags{Task: fmt.Sprintf("%d-%d-%d", s, round, i)}}
							items[j] = index.Item{File: index.File{Meta: m}, TagText: index.TagText(m)}
						}
						return items, nil
					})
				})
			}
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	rows, err := stores[0].Files(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(all) {
		t.Errorf("%d rows after the Updates, want %d", len(rows), len(all))
	}
}
