package fusefs

import (
	"context"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
)

// askedFS counts the Stat and ReadDir calls of each path.
type askedFS struct {
	*memfs.FS
	mu    sync.Mutex
	stats map[string]int
	lists map[string]int
}

func (a *askedFS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	a.mu.Lock()
	a.stats[name]++
	a.mu.Unlock()
	return a.FS.Stat(ctx, name)
}

func (a *askedFS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	a.mu.Lock()
	a.lists[name]++
	a.mu.Unlock()
	return a.FS.ReadDir(ctx, name)
}

func (a *askedFS) counts(p string) (stats, lists int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats[p], a.lists[p]
}

// TestSharedCaching: names, attributes and listings that Options.Shared
// calls caller-dependent are asked of the tree on every use, while shared
// ones are cached; Retagged drops a shared name and its directory's
// listing.
func TestSharedCaching(t *testing.T) {
	ctx := context.Background()
	tree := &askedFS{FS: memfs.New(), stats: map[string]int{}, lists: map[string]int{}}
	for _, p := range []string{"/public/a.txt", "/private/b.txt"} {
		if err := semfs.WriteFile(ctx, tree, p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := mountServer(t, tree, Options{KeepCache: true, AttrTimeout: time.Minute, EntryTimeout: time.Minute,
		Shared: func(ctx context.Context, p string, listing bool) bool { return !strings.HasPrefix(p, "/private") }})
	mnt := srv.Dir()
	use := func(p string, times int) {
		t.Helper()
		for range times {
			if _, err := os.Stat(mnt + p); err != nil {
				t.Fatal(err)
			}
			if _, err := os.ReadDir(mnt + semfs.Dir(p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	use("/public/a.txt", 3)
	use("/private/b.txt", 3)
	if s, l := tree.counts("/public/a.txt"); s != 1 {
		t.Errorf("a shared file was asked %d times for 3 stats; want 1 (cached)", s)
	} else if _, l = tree.counts("/public"); l != 1 {
		t.Errorf("a shared listing was read %d times for 3 listings; want 1 (cached)", l)
	}
	if s, _ := tree.counts("/private/b.txt"); s < 3 {
		t.Errorf("a caller-dependent file was asked %d times for 3 stats; want every time", s)
	}
	if _, l := tree.counts("/private"); l != 3 {
		t.Errorf("a caller-dependent listing was read %d times for 3 listings; want 3", l)
	}
	srv.Retagged("/public/a.txt")
	use("/public/a.txt", 1)
	if s, _ := tree.counts("/public/a.txt"); s != 2 {
		t.Errorf("after Retagged the file was asked %d times in all; want 2 (its name dropped)", s)
	}
	if _, l := tree.counts("/public"); l != 2 {
		t.Errorf("after Retagged the listing was read %d times in all; want 2 (dropped)", l)
	}
}

// TestRelookupWhileForgotten: a name dropped from the kernel (Retagged)
// makes the kernel forget its inode while the next stat looks it up
// again, and the lookup may hand back the very inode the forget is
// dropping; the path must still resolve (it answered ENOENT about once in
// fifty rounds when the forget dropped the number at once).
func TestRelookupWhileForgotten(t *testing.T) {
	ctx := context.Background()
	tree := memfs.New()
	if err := semfs.WriteFile(ctx, tree, "/public/a.txt", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := mountServer(t, tree, Options{KeepCache: true, AttrTimeout: time.Minute, EntryTimeout: time.Minute})
	p := srv.Dir() + "/public/a.txt"
	for i := range 1000 {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		srv.Retagged("/public/a.txt")
	}
}
