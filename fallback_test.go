package semfs_test

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/semfstest"
)

// minimal exposes only the smallest writing capabilities of memfs (OpenFile,
// Mkdir, Remove, Rename), so that every other helper takes its fallback
// path. It counts the calls it gets.
type minimal struct {
	m     *memfs.FS
	mu    sync.Mutex
	calls map[string]int
}

var (
	_ semfs.OpenFileFS = (*minimal)(nil)
	_ semfs.MkdirFS    = (*minimal)(nil)
	_ semfs.RemoveFS   = (*minimal)(nil)
	_ semfs.RenameFS   = (*minimal)(nil)
)

func newMinimal() *minimal { return &minimal{m: memfs.New(), calls: map[string]int{}} }

func (f *minimal) count(op string) {
	f.mu.Lock()
	f.calls[op]++
	f.mu.Unlock()
}

func (f *minimal) n(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func (f *minimal) reset() {
	f.mu.Lock()
	clear(f.calls)
	f.mu.Unlock()
}

func (f *minimal) Open(ctx context.Context, name string) (fs.File, error) {
	f.count("Open")
	return f.m.Open(ctx, name)
}

func (f *minimal) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	f.count("Stat")
	return f.m.Stat(ctx, name)
}

func (f *minimal) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	f.count("ReadDir")
	return f.m.ReadDir(ctx, name)
}

func (f *minimal) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	f.count("OpenFile")
	return f.m.OpenFile(ctx, name, flag, perm)
}

func (f *minimal) Mkdir(ctx context.Context, name string, perm fs.FileMode) error {
	f.count("Mkdir")
	return f.m.Mkdir(ctx, name, perm)
}

func (f *minimal) Remove(ctx context.Context, name string) error {
	f.count("Remove")
	return f.m.Remove(ctx, name)
}

func (f *minimal) Rename(ctx context.Context, oldname, newname string) error {
	f.count("Rename")
	return f.m.Rename(ctx, oldname, newname)
}

// TestFallbacksConform runs the whole suite through the helpers' fallback
// paths.
func TestFallbacksConform(t *testing.T) {
	semfstest.Run(t, func(t *testing.T) semfs.FS { return newMinimal() })
}

func TestFallbacksUseTheSmallInterfaces(t *testing.T) {
	ctx := context.Background()
	f := newMinimal()

	if err := semfs.WriteFile(ctx, f, "/a/b/c/file.txt", []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if f.n("OpenFile") != 1 || f.n("Mkdir") != 3 {
		t.Errorf("WriteFile fallback made %d OpenFile and %d Mkdir calls; want 1 and 3", f.n("OpenFile"), f.n("Mkdir"))
	}
	f.reset()
	if data, err := semfs.ReadFile(ctx, f, "/a/b/c/file.txt"); err != nil || string(data) != "hello" {
		t.Errorf("ReadFile fallback = %q, %v", data, err)
	}
	if f.n("Open") != 1 {
		t.Errorf("ReadFile fallback made %d Open calls; want 1", f.n("Open"))
	}
	f.reset()
	if err := semfs.MkdirAll(ctx, f, "/a/x/y", 0o755); err != nil {
		t.Fatal(err)
	}
	if f.n("Mkdir") != 2 {
		t.Errorf("MkdirAll fallback made %d Mkdir calls; want 2 (/a exists)", f.n("Mkdir"))
	}
	if err := semfs.MkdirAll(ctx, f, "/a/b/c/file.txt/z", 0o755); !errors.Is(err, semfs.ErrNotDir) {
		t.Errorf("MkdirAll fallback through a file = %v; want ErrNotDir", err)
	}
	semfs.WriteFile(ctx, f, "/a.txt", []byte("12"), 0o644)
	semfs.WriteFile(ctx, f, "/a/b/d", []byte("345"), 0o644)
	f.reset()
	files, err := semfs.FileList(ctx, f, "/")
	if err != nil {
		t.Fatal(err)
	}
	// "/a.txt" sorts before "/a/..." in full-path order though a walk
	// visits directory "a" first.
	if want := []string{"/a.txt", "/a/b/c/file.txt", "/a/b/d"}; !slices.Equal(files, want) {
		t.Errorf("Files fallback = %q; want %q", files, want)
	}
	if f.n("ReadDir") == 0 {
		t.Errorf("Files fallback did not walk")
	}
	if n, err := semfs.TotalSize(ctx, f); err != nil || n != 5+2+3 {
		t.Errorf("TotalSize fallback = %d, %v; want 10", n, err)
	}
	f.reset()
	if err := semfs.RemoveAll(ctx, f, "/a"); err != nil {
		t.Fatal(err)
	}
	// /a, /a/b, /a/b/c, /a/b/c/file.txt, /a/b/d, /a/x, /a/x/y
	if f.n("Remove") != 7 {
		t.Errorf("RemoveAll fallback made %d Remove calls; want 7", f.n("Remove"))
	}
	if files, _ := semfs.FileList(ctx, f, "/"); !slices.Equal(files, []string{"/a.txt"}) {
		t.Errorf("after RemoveAll(/a): %q", files)
	}
	if err := semfs.RemoveAll(ctx, f, "/"); err != nil {
		t.Fatal(err)
	}
	if entries, err := semfs.ReadDir(ctx, f, "/"); err != nil || len(entries) != 0 {
		t.Errorf("after RemoveAll(/): %v, %v", entries, err)
	}
}

// coreOnly has no writers at all.
type coreOnly struct{ fs semfs.FS }

func (c coreOnly) Open(ctx context.Context, name string) (fs.File, error) {
	return c.fs.Open(ctx, name)
}
func (c coreOnly) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	return c.fs.Stat(ctx, name)
}
func (c coreOnly) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	return c.fs.ReadDir(ctx, name)
}

func TestReadOnlyHelpers(t *testing.T) {
	semfstest.Run(t, nil, semfstest.ReadOnly(), semfstest.Seed(func(tb semfstest.TB, files map[string][]byte) semfs.FS {
		m := memfs.New()
		for p, data := range files {
			if err := m.WriteFile(context.Background(), p, data, 0o644); err != nil {
				tb.Fatalf("seed: %v", err)
			}
		}
		return coreOnly{m}
	}))
}

func TestIOFS(t *testing.T) {
	ctx := context.Background()
	m := memfs.FromMap(map[string]string{
		"/README.md":         "# semfs\n",
		"/notes/a.md":        "a",
		"/notes/deep/b.txt":  "b",
		"/notes.txt":         "sorted between notes and notes/ in full-path order",
		"/empty":             "",
		"/bin/\u00e9t\u00e9": "\x00\xff",
	})
	if err := semfs.MkdirAll(ctx, m, "/emptydir", 0o755); err != nil {
		t.Fatal(err)
	}
	iofs := semfs.IOFS(ctx, m)
	if err := fstest.TestFS(iofs, "README.md", "notes/a.md", "notes/deep/b.txt", "notes.txt", "empty", "bin/été", "emptydir"); err != nil {
		t.Fatal(err)
	}
	_, err := iofs.Open("notes/missing")
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != "notes/missing" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(missing) = %v; want an io/fs-style PathError for notes/missing wrapping ErrNotExist", err)
	}
	for _, bad := range []string{"/README.md", "notes/../README.md", "notes/"} {
		if _, err := iofs.Open(bad); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Open(%q) = %v; want ErrInvalid", bad, err)
		}
	}
	entries, err := fs.ReadDir(iofs, ".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"README.md", "bin", "empty", "emptydir", "notes", "notes.txt"}; !slices.Equal(names, want) {
		t.Errorf("ReadDir(.) = %q; want %q", names, want)
	}
}

// layer is a trivial layer, to check Base.
type layer struct{ semfs.FS }

func (l layer) Unwrap() semfs.FS { return l.FS }

func TestBase(t *testing.T) {
	m := memfs.New()
	if got := semfs.Base(layer{layer{m}}); got != semfs.FS(m) {
		t.Errorf("Base of two layers = %T; want the memfs below", got)
	}
	if got := semfs.Base(m); got != semfs.FS(m) {
		t.Errorf("Base of a backend = %T; want itself", got)
	}
}
