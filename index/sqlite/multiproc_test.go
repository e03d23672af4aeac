package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/postings"
)

// Two *Index values opened on one file stand for two processes (a CLI
// command beside `semfs index --watch`, or a daemon and a CLI): each
// must see the other's writes, and write tombstones against the
// postings as stored, not as its own memory last saw them.

// searchPaths returns "path:text" of the hits of query q.
func searchPaths(t *testing.T, ix *Index, q string) []string {
	t.Helper()
	hits, err := ix.SearchChunks(context.Background(), index.QueryTokens(q), index.Filter{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, h.Path+":"+h.Text)
	}
	return out
}

func grepPaths(t *testing.T, ix *Index, pattern string) []string {
	t.Helper()
	q, _, err := index.PlanGrep(pattern, false, false)
	if err != nil {
		t.Fatal(err)
	}
	paths, _, err := ix.GrepCandidates(context.Background(), "/", q)
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

func TestTwoHandlesSeeEachOthersWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	a := open(t, path)
	b := open(t, path)
	if err := a.Put(ctx, item("/a.txt", "hello world\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, item("/b.txt", "hello there\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	for _, ix := range []*Index{a, b} {
		if got, want := grepPaths(t, ix, "hello"), []string{"/a.txt", "/b.txt"}; !slices.Equal(got, want) {
			t.Errorf("grep candidates for hello = %v, want %v (a write of the other handle is missing)", got, want)
		}
		if got := searchPaths(t, ix, "hello"); len(got) != 2 {
			t.Errorf("search hello = %v, want both files", got)
		}
	}
	// A removal through one handle disappears from the other.
	if err := a.Remove(ctx, "/b.txt", false); err != nil {
		t.Fatal(err)
	}
	if got, want := grepPaths(t, b, "hello"), []string{"/a.txt"}; !slices.Equal(got, want) {
		t.Errorf("after the other handle removed /b.txt: grep candidates = %v, want %v", got, want)
	}
	if got, want := searchPaths(t, b, "there"), []string(nil); !slices.Equal(got, want) {
		t.Errorf("after the other handle removed /b.txt: search there = %v, want none", got)
	}
}

// A re-saves a file B re-saved since A loaded its memory: A's tombstone
// must hit B's segment, else the merge that follows brings B's version
// back and hides A's.
func TestTwoHandlesResaveThenMerge(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	a := open(t, path)
	if err := a.Put(ctx, item("/f.txt", "apple\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	b := open(t, path)
	if err := b.Put(ctx, item("/f.txt", "banana\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(ctx, item("/f.txt", "cherry\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	for i := range postings.MergeFactor { // enough segments for B to merge
		if err := b.Put(ctx, item(fmt.Sprintf("/g%d.txt", i), "filler\n", semfs.Tags{})); err != nil {
			t.Fatal(err)
		}
	}
	b.waitMerges()
	if n := b.text.Segments(); n >= postings.MergeFactor {
		t.Fatalf("B holds %d text segments: no merge ran, and this test is about one", n)
	}
	check := func(who string, ix *Index) {
		t.Helper()
		if got, want := searchPaths(t, ix, "cherry"), []string{"/f.txt:cherry\n"}; !slices.Equal(got, want) {
			t.Errorf("%s: search cherry = %q, want %q", who, got, want)
		}
		for _, old := range []string{"banana", "apple"} {
			if got := searchPaths(t, ix, old); len(got) != 0 {
				t.Errorf("%s: search %s = %q, want none (a replaced version came back)", who, old, got)
			}
		}
		r, err := ix.Check(ctx, false)
		if err != nil || len(r.Problems) > 0 {
			t.Errorf("%s: Check = %v, %v; want no problems", who, r.Problems, err)
		}
	}
	check("A", a)
	check("B", b)
	a.Close()
	b.Close()
	c := open(t, path)
	if len(c.Repaired) > 0 {
		t.Errorf("reopen repaired %v; want consistent postings", c.Repaired)
	}
	check("reopened", c)
}

// A removes a file B wrote after A loaded its memory: the tombstone must
// be written, else the next Open finds the postings and rows disagree and
// re-indexes everything.
func TestTwoHandlesRemoveUnseenFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	a := open(t, path)
	b := open(t, path)
	if err := a.Put(ctx, item("/keep.txt", "keep me\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, item("/b.txt", "from b\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	if err := a.Remove(ctx, "/b.txt", false); err != nil {
		t.Fatal(err)
	}
	a.Close()
	b.Close()
	c := open(t, path)
	if len(c.Repaired) > 0 {
		t.Errorf("reopen repaired %v; want consistent postings", c.Repaired)
	}
	f, err := c.File(ctx, "/keep.txt")
	if err != nil || f.State != index.StateIndexed {
		t.Errorf("/keep.txt after reopen: state %q, %v; want %q (not re-indexed)", f.State, err, index.StateIndexed)
	}
	if got := searchPaths(t, c, "from"); len(got) != 0 {
		t.Errorf("search from = %q, want none: /b.txt was removed", got)
	}
}

// A chunk id once given is never given again, even when the row holding
// the highest one is deleted: another process may still hold it in
// memory. (Segment ids count up the same way, see txState.)
func TestIDsNotReused(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "i.db"))
	maxID := func(table string) int64 {
		t.Helper()
		var id int64
		if err := ix.db.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM `+table).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	if err := ix.Put(ctx, item("/a.txt", "alpha\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	chunk := maxID("chunks")
	if err := ix.Remove(ctx, "/a.txt", false); err != nil {
		t.Fatal(err)
	}
	if err := ix.Put(ctx, item("/b.txt", "beta\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	if got := maxID("chunks"); got <= chunk {
		t.Errorf("new chunk id %d, want above the removed chunk's %d", got, chunk)
	}
}

// Two handles write, rename, remove and look up concurrently; afterwards
// both and a reopened third agree on every lookup, Check finds nothing,
// and the reopen repairs nothing.
func TestTwoHandlesConcurrentWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	a, b := open(t, path), open(t, path)
	words := []string{"apple", "banana", "cherry", "damson"}
	var wg sync.WaitGroup
	for w, ix := range []*Index{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range 150 {
				p := fmt.Sprintf("/d%d/f%d.txt", r.IntN(2), r.IntN(6))
				var err error
				switch r.IntN(5) {
				case 0:
					err = ix.Remove(ctx, p, false)
				case 1:
					err = ix.Rename(ctx, p, fmt.Sprintf("/d%d/f%d.txt", r.IntN(2), r.IntN(6)))
				default:
					err = ix.Put(ctx, item(p, fmt.Sprintf("%s %s %d\n", words[r.IntN(4)], words[r.IntN(4)], i), semfs.Tags{}))
				}
				if err != nil {
					t.Error(err)
					return
				}
				if i%5 == 0 {
					if _, err := ix.SearchChunks(ctx, []string{words[r.IntN(4)]}, index.Filter{PathPrefix: "/d1"}, 10); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	a.waitMerges()
	b.waitMerges()
	c := open(t, path)
	if len(c.Repaired) > 0 {
		t.Errorf("reopen repaired %v", c.Repaired)
	}
	for _, w := range words {
		want := searchPaths(t, c, w)
		slices.Sort(want)
		for name, ix := range map[string]*Index{"A": a, "B": b} {
			got := searchPaths(t, ix, w)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s: search %s = %q, reopened index finds %q", name, w, got, want)
			}
			if g, wg := grepPaths(t, ix, w), grepPaths(t, c, w); !slices.Equal(g, wg) {
				t.Errorf("%s: grep %s = %q, reopened index finds %q", name, w, g, wg)
			}
		}
	}
	for name, ix := range map[string]*Index{"A": a, "B": b, "reopened": c} {
		if r, err := ix.Check(ctx, false); err != nil || len(r.Problems) > 0 {
			t.Errorf("%s: Check = %v, %v", name, r.Problems, err)
		}
	}
}
