package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/internal/testserver"
)

// testRenameOntoNewRowWaits: daemon B renames its finance file onto a path
// whose first row daemon A's Update is building (review 9, R9-2). B's
// Rename waits for A's commit and replaces A's row with the moved one;
// before, it committed in between and A's insert overwrote the moved
// row's groups (the file public). Both for a file's rename (the path
// locks of both paths) and a directory's (the lock of all paths).
func testRenameOntoNewRowWaits(t *testing.T, pg *testserver.Postgres) {
	for _, c := range []struct{ name, from, to, src, dst string }{
		{"file", "/a.md", "/x.md", "/a.md", "/x.md"},
		{"directory", "/d", "/e", "/d/a.md", "/e/a.md"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dsn := freshDB(t, pg)
			ctx := context.Background()
			a, b := openStore(t, dsn), openStore(t, dsn)
			now := time.Now().UTC().Truncate(time.Microsecond)
			if err := b.Put(ctx, index.Item{File: index.File{Meta: semfs.Meta{Path: c.src, CreatedBy: "peer", CreatedAt: now, UpdatedAt: now,
				Tags: semfs.Tags{Task: "audit", Groups: []string{"finance"}}}}}); err != nil {
				t.Fatal(err)
			}
			renamed := make(chan error, 1)
			err := a.Update(ctx, []string{c.dst}, func(stored map[string]index.File) ([]index.Item, error) {
				go func() { renamed <- b.Rename(ctx, c.from, c.to) }()
				select {
				case err := <-renamed:
					t.Errorf("B's rename committed (%v) while A's Update built %s's first row", err, c.dst)
					renamed <- err
				case <-time.After(300 * time.Millisecond):
				}
				f, ok := stored[c.dst]
				if !ok {
					f = index.File{Meta: semfs.Meta{Path: c.dst, CreatedBy: "app", CreatedAt: now, UpdatedAt: now}}
				}
				f.Size = 5
				return []index.Item{{File: f, TagText: index.TagText(f.Meta)}}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := <-renamed; err != nil {
				t.Fatalf("B's rename: %v", err)
			}
			row, err := openStore(t, dsn).File(ctx, c.dst)
			if err != nil {
				t.Fatal(err)
			}
			if len(row.Groups) == 0 || row.CreatedBy != "peer" {
				t.Errorf("B moved its finance file onto %s while A's Update built that path's first row; the row now: groups=%v task=%q created_by=%q, want B's moved row", c.dst, row.Groups, row.Task, row.CreatedBy)
			}
			if _, err := b.File(ctx, c.src); err == nil {
				t.Errorf("%s still has a row after the rename", c.src)
			}
		})
	}
}

// testPutOfNewRowWaits: daemon B's Put of a path (Reconcile's of a file
// written behind the layer) whose first row daemon A's Update is building
// waits for A's commit and writes over A's row; before, it committed in
// between and A's insert overwrote B's groups (review 9, R9-2).
func testPutOfNewRowWaits(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a, b := openStore(t, dsn), openStore(t, dsn)
	put := make(chan error, 1)
	err := a.Update(ctx, []string{"/x.md"}, func(stored map[string]index.File) ([]index.Item, error) {
		go func() {
			m := semfs.Meta{Path: "/x.md", CreatedBy: "peer", Tags: semfs.Tags{Groups: []string{"finance"}}}
			put <- b.Put(ctx, index.Item{File: index.File{Meta: m}, TagText: index.TagText(m)})
		}()
		select {
		case err := <-put:
			t.Errorf("B's Put committed (%v) while A's Update built /x.md's first row", err)
			put <- err
		case <-time.After(300 * time.Millisecond):
		}
		m := semfs.Meta{Path: "/x.md", CreatedBy: "app", Size: 5}
		return []index.Item{{File: index.File{Meta: m}, TagText: index.TagText(m)}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-put; err != nil {
		t.Fatalf("B's Put: %v", err)
	}
	row, err := openStore(t, dsn).File(ctx, "/x.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(row.Groups) == 0 || row.CreatedBy != "peer" {
		t.Errorf("after B's Put and A's Update of /x.md's first row: groups=%v created_by=%q, want B's row (it committed last)", row.Groups, row.CreatedBy)
	}
}

// testWritersOfOverlappingPathsCommit: two daemons run Put, Update,
// Rename (of files and directories) and Remove over overlapping paths,
// with links between them, at once: every write commits, none is aborted
// as a deadlock, since every writer takes its advisory locks before any
// row lock and its row locks in path order.
func testWritersOfOverlappingPathsCommit(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	stores := []*Index{openStore(t, dsn), openStore(t, dsn)}
	overlappingWrites(t, stores, 1)
	noRerun(t, stores...)
}

// testWritersOfOverlappingPathsCommitAgain runs the workload of
// testWritersOfOverlappingPathsCommit again on fresh databases with other
// seeds for a few seconds: a lock-order bug shows only in some
// interleavings (a subtree's Remove locking a row a Rename moved; review
// 1, §4).
func testWritersOfOverlappingPathsCommitAgain(t *testing.T, pg *testserver.Postgres) {
	start := time.Now()
	for round := 0; round < 20 && time.Since(start) < 6*time.Second; round++ {
		dsn := freshDB(t, pg)
		stores := []*Index{openStore(t, dsn), openStore(t, dsn)}
		overlappingWrites(t, stores, uint64(2+round))
		noRerun(t, stores...)
		for _, s := range stores {
			s.Close()
		}
		if t.Failed() {
			t.Fatalf("round %d (seed %d) failed", round, 2+round)
		}
	}
}

// overlappingWrites runs six writers over two stores, each 40 random
// Puts, Updates, Renames and Removes of files and directories over a few
// overlapping paths linking to each other, and fails t on any error.
func overlappingWrites(t *testing.T, stores []*Index, seed uint64) {
	ctx := context.Background()
	var paths []string
	for _, d := range []string{"/d", "/e", "/f"} {
		for i := range 4 {
			paths = append(paths, fmt.Sprintf("%s/%d.md", d, i))
		}
	}
	item := func(r *rand.Rand, p string) index.Item {
		m := semfs.Meta{Path: p, CreatedBy: "w", Tags: semfs.Tags{Task: "t", Links: []string{paths[r.IntN(len(paths))]}}}
		return index.Item{File: index.File{Meta: m}, TagText: index.TagText(m),
			Content: &index.Content{Chunks: []index.Chunk{{No: 0, Text: "alpha " + p}, {No: 1, Text: "beta " + p}}}}
	}
	pick := func(r *rand.Rand, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = paths[r.IntN(len(paths))]
		}
		return out
	}
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for w := range 6 {
		ix := stores[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), seed))
			for range 40 {
				var err error
				switch op := r.IntN(5); op {
				case 0:
					var items []index.Item
					for _, p := range pick(r, 3) {
						items = append(items, item(r, p))
					}
					err = ix.Put(ctx, items...)
				case 1:
					ps := pick(r, 3)
					err = ix.Update(ctx, ps, func(stored map[string]index.File) ([]index.Item, error) {
						var items []index.Item
						for _, p := range ps {
							f, ok := stored[p]
							if !ok {
								items = append(items, item(r, p))
								continue
							}
							f.Groups = []string{"g"}
							items = append(items, index.Item{File: f, TagText: index.TagText(f.Meta)})
						}
						return items, nil
					})
				case 2:
					p := pick(r, 2)
					err = ix.Rename(ctx, p[0], p[1])
				case 3:
					dirs := []string{"/d", "/e", "/f"}
					err = ix.Rename(ctx, dirs[r.IntN(3)], dirs[r.IntN(3)])
				case 4:
					if r.IntN(2) == 0 {
						err = ix.Remove(ctx, paths[r.IntN(len(paths))], false)
					} else {
						err = ix.Remove(ctx, []string{"/d", "/e", "/f"}[r.IntN(3)], true)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a concurrent write failed: %v", err)
	}
}
