package meta_test

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/meta"
)

var (
	visBob = semfs.Principal{ID: "bob", Groups: []string{"eng"}}
	visAnn = semfs.Principal{ID: "ann", Groups: []string{"finance"}}
	finOps = semfs.Tags{Groups: []string{"finance"}}
)

// modelVisible answers visibility from first principles: a file by its
// tags (Meta), a directory by whether it holds a visible file or none.
func modelVisible(t *testing.T, f *meta.FS, p semfs.Principal, name string) bool {
	t.Helper()
	ctx := context.Background()
	info, err := f.Stat(ctx, name)
	if err != nil {
		return false
	}
	if !info.IsDir() {
		m, err := f.Meta(ctx, name)
		if err != nil {
			t.Fatalf("Meta(%s): %v", name, err)
		}
		return m.Tags.VisibleTo(p)
	}
	files, err := semfs.FileList(ctx, f, name)
	if err != nil {
		t.Fatalf("Files(%s): %v", name, err)
	}
	for _, q := range files {
		if modelVisible(t, f, p, q) {
			return true
		}
	}
	return len(files) == 0
}

// checkVisibility compares VisibleTo and HiddenIn with the model for every
// file and directory of f, for each principal.
func checkVisibility(t *testing.T, f *meta.FS, step string) {
	t.Helper()
	ctx := context.Background()
	for _, p := range []semfs.Principal{visBob, visAnn, {ID: "none"}} {
		err := semfs.WalkDir(ctx, f, "/", func(name string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			want := name == "/" || modelVisible(t, f, p, name)
			if got, err := f.VisibleTo(ctx, p, name); err != nil || got != want {
				t.Errorf("%s: VisibleTo(%s, %s) = %v, %v; want %v", step, p.ID, name, got, err, want)
			}
			if !d.IsDir() {
				return nil
			}
			entries, err := f.ReadDir(ctx, name)
			if err != nil {
				return err
			}
			var wantHidden map[string]bool
			for _, e := range entries {
				if !modelVisible(t, f, p, semfs.Join(name, e.Name())) {
					if wantHidden == nil {
						wantHidden = map[string]bool{}
					}
					wantHidden[e.Name()] = true
				}
			}
			got, err := f.HiddenIn(ctx, p, name)
			if err != nil || !maps.Equal(got, wantHidden) {
				t.Errorf("%s: HiddenIn(%s, %s) = %v, %v; want %v", step, p.ID, name, got, err, wantHidden)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: walk: %v", step, err)
		}
	}
}

// TestVisibilityNeighbours: restricted paths whose names sort between the
// paths below a directory ("a.txt" and "a-b" sort around "a/…") are each
// reported once and only for their own entry.
func TestVisibilityNeighbours(t *testing.T) {
	f, _ := newFS(t, nil)
	ctx := context.Background()
	for _, p := range []string{"/d/a/s.txt", "/d/a/t.txt", "/d/a.txt", "/d/a-b/u.txt", "/d/a/z/v.txt", "/d/b.txt", "/d/a0"} {
		write(t, f, ctx, p, "x")
	}
	for _, p := range []string{"/d/a/s.txt", "/d/a/t.txt", "/d/a.txt", "/d/a-b/u.txt", "/d/a/z/v.txt"} {
		if err := f.SetTags(ctx, p, finOps); err != nil {
			t.Fatal(err)
		}
	}
	got, err := f.HiddenIn(ctx, visBob, "/d")
	if want := map[string]bool{"a": true, "a.txt": true, "a-b": true}; err != nil || !maps.Equal(got, want) {
		t.Fatalf("HiddenIn(/d) = %v, %v; want %v", got, err, want)
	}
	if got, err := f.HiddenIn(ctx, visAnn, "/d"); err != nil || got != nil {
		t.Fatalf("HiddenIn(ann, /d) = %v, %v; want nil", got, err)
	}
	// A path that only shares a prefix with restricted ones ("/d/a0") is
	// visible, and so is "/d" (it holds b.txt).
	for _, name := range []string{"/d/a0", "/d", "/d/b.txt"} {
		if ok, err := f.VisibleTo(ctx, visBob, name); err != nil || !ok {
			t.Errorf("VisibleTo(bob, %s) = %v, %v; want true", name, ok, err)
		}
	}
	checkVisibility(t, f, "neighbours")
}

// TestVisibilityFollowsChanges: tag changes, renames into and out of a
// restricted directory, and removes each change what is visible, and the
// answers follow at once.
func TestVisibilityFollowsChanges(t *testing.T) {
	f, _ := newFS(t, nil)
	ctx := context.Background()
	write(t, f, ctx, "/open/x.txt", "x")
	write(t, f, ctx, "/open/deep/y.txt", "y")
	write(t, f, ctx, "/vault/s.txt", "s")
	checkVisibility(t, f, "untagged")
	mustVisible := func(step, name string, want bool) {
		t.Helper()
		if ok, err := f.VisibleTo(ctx, visBob, name); err != nil || ok != want {
			t.Fatalf("%s: VisibleTo(bob, %s) = %v, %v; want %v", step, name, ok, err, want)
		}
	}
	// A tag change restricts, then unrestricts.
	if err := f.SetTags(ctx, "/vault/s.txt", finOps); err != nil {
		t.Fatal(err)
	}
	mustVisible("restricted", "/vault", false)
	mustVisible("restricted", "/vault/s.txt", false)
	checkVisibility(t, f, "restricted")
	if err := f.SetTags(ctx, "/vault/s.txt", semfs.Tags{Groups: []string{"finance"}, Public: true}); err != nil {
		t.Fatal(err)
	}
	mustVisible("public", "/vault", true)
	checkVisibility(t, f, "public")
	if err := f.SetTags(ctx, "/open/deep/y.txt", finOps); err != nil {
		t.Fatal(err)
	}
	if err := f.SetTags(ctx, "/vault/s.txt", finOps); err != nil {
		t.Fatal(err)
	}
	mustVisible("deep", "/open/deep", false)
	mustVisible("deep", "/open", true)
	checkVisibility(t, f, "deep")
	// Out of the restricted directory into an open one.
	if err := f.Rename(ctx, "/vault/s.txt", "/open/s.txt"); err != nil {
		t.Fatal(err)
	}
	mustVisible("moved out", "/open/s.txt", false)
	mustVisible("moved out", "/vault", true) // no file at all
	checkVisibility(t, f, "moved out")
	// A whole directory moves; its restricted files move with it.
	if err := f.Rename(ctx, "/open/deep", "/vault/deep"); err != nil {
		t.Fatal(err)
	}
	mustVisible("dir moved", "/vault", false)
	mustVisible("dir moved", "/vault/deep/y.txt", false)
	checkVisibility(t, f, "dir moved")
	// A file without groups moves over a restricted one (an atomic save):
	// the name keeps the restriction it had.
	write(t, f, ctx, "/pub.txt", "p")
	if err := f.Rename(ctx, "/pub.txt", "/open/s.txt"); err != nil {
		t.Fatal(err)
	}
	mustVisible("replaced", "/open/s.txt", false)
	checkVisibility(t, f, "replaced")
	// Removing the last restricted file shows its directory again.
	if err := f.Remove(ctx, "/vault/deep/y.txt"); err != nil {
		t.Fatal(err)
	}
	mustVisible("removed", "/vault", true)
	checkVisibility(t, f, "removed")
}

// TestVisibilityRandom runs random writes, tag changes, renames and
// removes and compares every answer with the model after each step.
func TestVisibilityRandom(t *testing.T) {
	f, _ := newFS(t, nil)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))
	names := []string{"a", "a.txt", "a-b", "b", "b0"}
	randPath := func() string {
		p := ""
		for range 1 + rng.IntN(3) {
			p += "/" + names[rng.IntN(len(names))]
		}
		return p
	}
	tagsets := []semfs.Tags{{}, finOps, {Groups: []string{"eng"}}, {Groups: []string{"finance"}, Public: true}}
	for step := range 60 {
		files, err := semfs.FileList(ctx, f, "/")
		if err != nil {
			t.Fatal(err)
		}
		var what string
		switch op := rng.IntN(5); {
		case op == 0 || len(files) == 0:
			p := randPath()
			what = "write " + p
			semfs.WriteFile(ctx, f, p, []byte("x"), 0o644) // may fail: a parent is a file
		case op == 1 || op == 2:
			p := files[rng.IntN(len(files))]
			ts := tagsets[rng.IntN(len(tagsets))]
			what = fmt.Sprintf("tag %s %v", p, ts.Groups)
			if err := f.SetTags(ctx, p, ts); err != nil {
				t.Fatal(err)
			}
		case op == 3:
			p := files[rng.IntN(len(files))]
			if rng.IntN(2) == 0 {
				p = semfs.Dir(p)
			}
			to := randPath()
			what = "rename " + p + " " + to
			f.Rename(ctx, p, to) // may fail: into itself, over a directory
		default:
			p := files[rng.IntN(len(files))]
			if rng.IntN(3) == 0 {
				p = semfs.Dir(p)
			}
			what = "removeall " + p
			if p != "/" {
				if err := f.RemoveAll(ctx, p); err != nil {
					t.Fatal(err)
				}
			}
		}
		checkVisibility(t, f, fmt.Sprintf("step %d (%s)", step, what))
		if t.Failed() {
			return
		}
	}
}

// TestHiddenInNoRestrictedBelow: a directory with nothing restricted below
// costs no allocation.
func TestHiddenInNoRestrictedBelow(t *testing.T) {
	f, _ := newFS(t, nil)
	ctx := context.Background()
	write(t, f, ctx, "/open/x.txt", "x")
	write(t, f, ctx, "/open.txt", "x")
	write(t, f, ctx, "/secret/s.txt", "s")
	if err := f.SetTags(ctx, "/secret/s.txt", finOps); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if h, err := f.HiddenIn(ctx, visBob, "/open"); h != nil || err != nil {
			t.Fatal(h, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("HiddenIn with nothing restricted below: %v allocations", allocs)
	}
	if h, _ := f.HiddenIn(ctx, visBob, "/"); !h["secret"] || len(h) != 1 {
		t.Fatalf("HiddenIn(/) = %v", h)
	}
}

// TestVisibilityConcurrent: answers stay consistent while tags, renames
// and removes change the restricted set (run with -race).
func TestVisibilityConcurrent(t *testing.T) {
	f, _ := newFS(t, nil)
	ctx := context.Background()
	for i := range 20 {
		write(t, f, ctx, fmt.Sprintf("/d/f%02d.txt", i), "x")
	}
	write(t, f, ctx, "/keep/k.txt", "k")
	if err := f.SetTags(ctx, "/keep/k.txt", finOps); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := fmt.Sprintf("/d/f%02d.txt", (i*2+w)%20)
				f.SetTags(ctx, p, finOps)
				f.Rename(ctx, p, p+".moved")
				f.Rename(ctx, p+".moved", p)
				f.SetTags(ctx, p, semfs.Tags{})
			}
		}()
	}
	for range 300 {
		// /keep never changes: its answers must not waver.
		if ok, err := f.VisibleTo(ctx, visBob, "/keep"); err != nil || ok {
			t.Fatalf("VisibleTo(/keep) = %v, %v during changes", ok, err)
		}
		if h, err := f.HiddenIn(ctx, visBob, "/"); err != nil || !h["keep"] {
			t.Fatalf("HiddenIn(/) = %v, %v during changes", h, err)
		}
		if _, err := f.HiddenIn(ctx, visBob, "/d"); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	checkVisibility(t, f, "after concurrent changes")
	if h, _ := f.HiddenIn(ctx, visBob, "/d"); len(h) != 0 {
		t.Fatalf("HiddenIn(/d) after untagging all = %v", slices.Collect(maps.Keys(h)))
	}
}

// TestVisibleToAsksBackendOnlyNearRestricted: VisibleTo answers from the
// restricted set alone when nothing restricted is at or below the name (a
// missing name then answers true), and looks at the backend otherwise.
func TestVisibleToAsksBackendOnlyNearRestricted(t *testing.T) {
	base := &countingFS{FS: memfs.New()}
	f, _ := newFS(t, base)
	ctx := context.Background()
	write(t, f, ctx, "/open/x.txt", "x")
	write(t, f, ctx, "/secret/s.txt", "s")
	write(t, f, ctx, "/open0.txt", "s") // sorts after every path below /open
	for _, p := range []string{"/secret/s.txt", "/open0.txt"} {
		if err := f.SetTags(ctx, p, finOps); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		want bool
		asks bool // whether the backend is asked
	}{
		{"/open", true, false}, {"/open/x.txt", true, false}, {"/missing", true, false}, {"/secret.txt", true, false},
		{"/", true, false}, {"/secret", false, true}, {"/secret/s.txt", false, true},
	}
	for _, c := range cases {
		before := base.stats.Load()
		got, err := f.VisibleTo(ctx, visBob, c.name)
		if n := base.stats.Load() - before; err != nil || got != c.want || (n > 0) != c.asks {
			t.Errorf("VisibleTo(bob, %s) = %v, %v with %d stats; want %v, asking the backend: %v", c.name, got, err, n, c.want, c.asks)
		}
	}
}

// countingFS counts the Stat calls that reach a backend.
type countingFS struct {
	semfs.FS
	stats atomic.Int64
}

func (c *countingFS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	c.stats.Add(1)
	return c.FS.Stat(ctx, name)
}

func (c *countingFS) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	return semfs.WriteFile(ctx, c.FS, name, data, perm)
}

func (c *countingFS) Rename(ctx context.Context, oldname, newname string) error {
	return semfs.Rename(ctx, c.FS, oldname, newname)
}
