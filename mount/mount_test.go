package mount_test

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/mount"
	"github.com/semfs/semfs/semfstest"
)

var ctx = context.Background()

// recorder is a backend that remembers every path it was called with.
type recorder struct {
	*memfs.FS
	mu    sync.Mutex
	paths []string
}

func newRecorder(files map[string]string) *recorder { return &recorder{FS: memfs.FromMap(files)} }

func (r *recorder) saw(p string) {
	r.mu.Lock()
	r.paths = append(r.paths, p)
	r.mu.Unlock()
}

func (r *recorder) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	r.saw(name)
	return r.FS.WriteFile(ctx, name, data, perm)
}

func (r *recorder) ReadFile(ctx context.Context, name string) ([]byte, error) {
	r.saw(name)
	return r.FS.ReadFile(ctx, name)
}

func (r *recorder) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	r.saw(name)
	return r.FS.Stat(ctx, name)
}

func mustNew(t *testing.T, mounts ...mount.Mount) *mount.FS {
	t.Helper()
	f, err := mount.New(mounts)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func names(t *testing.T, fsys semfs.FS, dir string) []string {
	t.Helper()
	return semfstest.Names(t, ctx, fsys, dir)
}

func read(t *testing.T, fsys semfs.FS, p string) string {
	t.Helper()
	return semfstest.ReadString(t, ctx, fsys, p)
}

// wantErr checks the error shape: outermost *fs.PathError at path wrapping
// sentinel.
func wantErr(t *testing.T, err, sentinel error, path string) *fs.PathError {
	t.Helper()
	pe, ok := err.(*fs.PathError)
	if !ok {
		t.Fatalf("error %v (%T) is not a *fs.PathError", err, err)
	}
	if !errors.Is(err, sentinel) {
		t.Fatalf("error %v does not wrap %v", err, sentinel)
	}
	if pe.Path != path {
		t.Fatalf("error %v has path %q, want %q", err, pe.Path, path)
	}
	return pe
}

func TestLongestPrefixWinsWhateverTheOrder(t *testing.T) {
	mounts := []string{"/", "/m", "/m/deep"}
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {2, 0, 1}} {
		backends := map[string]*memfs.FS{}
		var table []mount.Mount
		for _, i := range order {
			b := memfs.New()
			backends[mounts[i]] = b
			table = append(table, mount.Mount{At: mounts[i], FS: b})
		}
		f := mustNew(t, table...)
		for _, p := range []string{"/z.txt", "/m/y.txt", "/m/deep/x.txt", "/m/deeper.txt"} {
			if err := f.WriteFile(ctx, p, []byte(p), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want := map[string][]string{
			"/":       {"/z.txt"},
			"/m":      {"/deeper.txt", "/y.txt"},
			"/m/deep": {"/x.txt"},
		}
		for at, files := range want {
			got, err := semfs.FileList(ctx, backends[at], "/")
			if err != nil || !slices.Equal(got, files) {
				t.Errorf("order %v: backend %s holds %v, %v; want %v", order, at, got, err, files)
			}
		}
		if got := read(t, f, "/m/deep/x.txt"); got != "/m/deep/x.txt" {
			t.Errorf("read back %q", got)
		}
	}
}

func TestAncestorsListableNotWritable(t *testing.T) {
	f := mustNew(t,
		mount.Mount{At: "/work", FS: memfs.FromMap(map[string]string{"/f.txt": "f"})},
		mount.Mount{At: "/a/b/memory", FS: memfs.New()},
		mount.Mount{At: "/corpus", FS: memfs.New(), ReadOnly: true},
	)
	if got, want := names(t, f, "/"), []string{"a/", "corpus/", "work/"}; !slices.Equal(got, want) {
		t.Errorf("ls / = %v, want %v", got, want)
	}
	if got, want := names(t, f, "/a"), []string{"b/"}; !slices.Equal(got, want) {
		t.Errorf("ls /a = %v, want %v", got, want)
	}
	if got, want := names(t, f, "/a/b/memory"), []string(nil); !slices.Equal(got, want) {
		t.Errorf("ls /a/b/memory = %v, want empty", got)
	}
	for _, p := range []string{"/", "/a", "/a/b", "/a/b/memory"} {
		info, err := f.Stat(ctx, p)
		if err != nil || !info.IsDir() || info.Name() != semfs.BaseName(p) {
			t.Errorf("Stat(%s) = %v, %v; want a directory named %q", p, info, err, semfs.BaseName(p))
		}
		if ok, err := f.Exists(ctx, p); !ok || err != nil {
			t.Errorf("Exists(%s) = %v, %v", p, ok, err)
		}
	}
	const mountList = "writable mounts: /a/b/memory, /work"
	checks := []struct {
		what string
		err  error
		path string
	}{
		{"write", f.WriteFile(ctx, "/a/x.txt", []byte("x"), 0o644), "/a/x.txt"},
		{"write at root", f.WriteFile(ctx, "/x.txt", []byte("x"), 0o644), "/x.txt"},
		{"mkdir", f.Mkdir(ctx, "/a/new", 0o755), "/a/new"},
		{"mkdirall", f.MkdirAll(ctx, "/a/new/deeper", 0o755), "/a/new/deeper"},
		{"rename into", f.Rename(ctx, "/work/f.txt", "/a/f.txt"), "/a/f.txt"},
	}
	for _, c := range checks {
		pe := wantErr(t, c.err, semfs.ErrPermission, c.path)
		if !strings.Contains(pe.Error(), mountList) || !strings.Contains(pe.Error(), "not inside a mount") {
			t.Errorf("%s: error %q does not list the mounts (%q)", c.what, pe, mountList)
		}
	}
	if _, err := semfs.OpenFile(ctx, f, "/a/x.txt", os.O_CREATE|os.O_WRONLY, 0o644); !errors.Is(err, semfs.ErrPermission) {
		t.Errorf("OpenFile(O_CREATE) above mounts = %v, want ErrPermission", err)
	}
	wantErr(t, f.Mkdir(ctx, "/a", 0o755), semfs.ErrExist, "/a")
	if err := f.MkdirAll(ctx, "/a/b", 0o755); err != nil {
		t.Errorf("MkdirAll of an existing ancestor: %v", err)
	}
	wantErr(t, f.WriteFile(ctx, "/corpus/x", nil, 0o644), semfs.ErrReadOnly, "/corpus/x")
	wantErr(t, f.WriteFile(ctx, "/a/b", nil, 0o644), semfs.ErrIsDir, "/a/b")
	wantErr(t, f.Remove(ctx, "/nowhere"), semfs.ErrNotExist, "/nowhere")
	wantErr(t, f.Remove(ctx, "/"), semfs.ErrInvalid, "/")
	if _, err := f.Stat(ctx, "/nowhere"); !errors.Is(err, semfs.ErrNotExist) {
		t.Errorf("Stat outside mounts = %v", err)
	}
}

func TestRootBackendMergedWithMountPoints(t *testing.T) {
	root := memfs.FromMap(map[string]string{
		"/top.txt": "t", "/a/own.txt": "o", "/a/m": "a file the mount shadows", "/a/z/x": "z",
	})
	sub := memfs.FromMap(map[string]string{"/inner.txt": "i"})
	f := mustNew(t, mount.Mount{At: "/", FS: root}, mount.Mount{At: "/a/m", FS: sub})
	if got, want := names(t, f, "/a"), []string{"m/", "own.txt", "z/"}; !slices.Equal(got, want) {
		t.Errorf("ls /a = %v, want %v", got, want)
	}
	if got, want := names(t, f, "/"), []string{"a/", "top.txt"}; !slices.Equal(got, want) {
		t.Errorf("ls / = %v, want %v", got, want)
	}
	// Inside the root mount, ordinary writes work, also next to mount points.
	if err := f.WriteFile(ctx, "/a/new.txt", []byte("n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.Mkdir(ctx, "/a/newdir", 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := semfs.FileList(ctx, f, "/")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/a/m/inner.txt", "/a/new.txt", "/a/own.txt", "/a/z/x", "/top.txt"}; !slices.Equal(files, want) {
		t.Errorf("Files(/) = %v, want %v (shadowed /a/m left out)", files, want)
	}
	files, err = semfs.FileList(ctx, f, "/a/m")
	if err != nil || !slices.Equal(files, []string{"/a/m/inner.txt"}) {
		t.Errorf("Files(/a/m) = %v, %v", files, err)
	}
	// The shadowed file still counts: it is stored.
	total, err := f.TotalSize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := root.TotalSize(ctx)
	s, _ := sub.TotalSize(ctx)
	if total != r+s || total == 0 {
		t.Errorf("TotalSize = %d, want %d + %d", total, r, s)
	}
}

func TestMountPointNotRemovableOrRenamable(t *testing.T) {
	work := memfs.FromMap(map[string]string{"/keep.txt": "k"})
	f := mustNew(t,
		mount.Mount{At: "/", FS: memfs.FromMap(map[string]string{"/r.txt": "r"})},
		mount.Mount{At: "/work", FS: work},
		mount.Mount{At: "/x/y", FS: memfs.New()},
	)
	for _, c := range []struct {
		err  error
		path string
	}{
		{f.Remove(ctx, "/work"), "/work"},
		{f.RemoveAll(ctx, "/x"), "/x"},
		{f.RemoveAll(ctx, "/"), "/"},
		{f.Rename(ctx, "/work", "/w2"), "/work"},
		{f.Rename(ctx, "/x", "/x2"), "/x"},
		{f.Rename(ctx, "/r.txt", "/work"), "/work"},
	} {
		pe := wantErr(t, c.err, semfs.ErrPermission, c.path)
		if !strings.Contains(pe.Error(), "mount") {
			t.Errorf("error %q does not explain the mount", pe)
		}
	}
	if got := read(t, f, "/work/keep.txt"); got != "k" {
		t.Errorf("keep.txt = %q after refused removals", got)
	}
	if got := read(t, f, "/r.txt"); got != "r" {
		t.Errorf("r.txt = %q after refused removals", got)
	}
	// RemoveAll on a mount point empties the mount, which stays.
	if err := f.RemoveAll(ctx, "/work"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := f.Exists(ctx, "/work/keep.txt"); ok {
		t.Error("keep.txt still exists")
	}
	if ok, _ := f.Exists(ctx, "/work"); !ok {
		t.Error("the emptied mount point vanished")
	}
}

func TestTranslatedAndAbsolutePaths(t *testing.T) {
	tr, abs := newRecorder(nil), newRecorder(nil)
	f := mustNew(t,
		mount.Mount{At: "/memory", FS: tr},
		mount.Mount{At: "/abs", FS: abs, KeepAbsolute: true},
	)
	if err := f.WriteFile(ctx, "/memory/notes/x.md", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile(ctx, "/abs/notes/x.md", []byte("y"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(tr.paths, "/notes/x.md") || slices.Contains(tr.paths, "/memory/notes/x.md") {
		t.Errorf("translated backend saw %v, want /notes/x.md", tr.paths)
	}
	if !slices.Contains(abs.paths, "/abs/notes/x.md") {
		t.Errorf("absolute backend saw %v, want /abs/notes/x.md", abs.paths)
	}
	if got := read(t, f, "/abs/notes/x.md"); got != "y" {
		t.Errorf("read back %q", got)
	}
	files, err := semfs.FileList(ctx, f, "/")
	if err != nil || !slices.Equal(files, []string{"/abs/notes/x.md", "/memory/notes/x.md"}) {
		t.Errorf("Files = %v, %v", files, err)
	}
	// An absolute mount's own directory is created on demand.
	if err := f.Mkdir(ctx, "/abs/d", 0o755); err != nil {
		t.Fatal(err)
	}
	abs2 := memfs.New()
	f2 := mustNew(t, mount.Mount{At: "/abs", FS: abs2, KeepAbsolute: true})
	if err := f2.Mkdir(ctx, "/abs/d", 0o755); err != nil {
		t.Fatalf("Mkdir directly in an absolute mount whose directory is missing: %v", err)
	}
	if info, err := abs2.Stat(ctx, "/abs/d"); err != nil || !info.IsDir() {
		t.Errorf("backend has /abs/d: %v, %v", info, err)
	}
}

func TestErrorPathsRewritten(t *testing.T) {
	f := mustNew(t,
		mount.Mount{At: "/memory", FS: memfs.FromMap(map[string]string{"/notes/x.md": "x"})},
		mount.Mount{At: "/other", FS: memfs.New()},
	)
	_, err := f.ReadFile(ctx, "/memory/nope.md")
	wantErr(t, err, semfs.ErrNotExist, "/memory/nope.md")
	_, err = f.Stat(ctx, "/memory/notes/x.md/y")
	if pe := new(fs.PathError); !errors.As(err, &pe) || !strings.HasPrefix(pe.Path, "/memory/") {
		t.Errorf("Stat through a file: %v, want a /memory/ path", err)
	}
	err = f.WriteFile(ctx, "/memory/notes/x.md/y", nil, 0o644)
	if pe := new(fs.PathError); !errors.As(err, &pe) || !strings.HasPrefix(pe.Path, "/memory/notes/x.md") {
		t.Errorf("write through a file: %v, want a /memory/notes/x.md path", err)
	}
	err = f.Remove(ctx, "/memory/notes")
	wantErr(t, err, semfs.ErrNotEmpty, "/memory/notes")
	// Errors of an open file carry tree paths too.
	file, err := f.OpenFile(ctx, "/memory/notes/x.md", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	file.Close()
	_, err = file.Write([]byte("late"))
	if pe := new(fs.PathError); !errors.As(err, &pe) || pe.Path != "/memory/notes/x.md" {
		t.Errorf("write after close: %v, want path /memory/notes/x.md", err)
	}
	r, err := f.Open(ctx, "/memory/notes/x.md")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.(semfs.ReadAtFile); !ok {
		t.Errorf("opened file %T lost ReadAt", r)
	}
	r.Close()
	_, err = r.Read(make([]byte, 1))
	if pe := new(fs.PathError); !errors.As(err, &pe) || pe.Path != "/memory/notes/x.md" {
		t.Errorf("read after close: %v, want path /memory/notes/x.md", err)
	}
}

func TestRenameAcrossMountsRefused(t *testing.T) {
	a := memfs.FromMap(map[string]string{"/f.txt": "f"})
	f := mustNew(t, mount.Mount{At: "/a", FS: a}, mount.Mount{At: "/b", FS: memfs.New()})
	err := f.Rename(ctx, "/a/f.txt", "/b/f.txt")
	pe := wantErr(t, err, semfs.ErrPermission, "/a/f.txt")
	if !errors.Is(err, mount.ErrCrossMount) || !strings.Contains(pe.Error(), "/b") {
		t.Errorf("cross-mount rename error %q: want ErrCrossMount and both mounts named", pe)
	}
	if got := read(t, f, "/a/f.txt"); got != "f" {
		t.Errorf("source changed: %q", got)
	}
	if ok, _ := f.Exists(ctx, "/b/f.txt"); ok {
		t.Error("destination was created")
	}
	if err := f.Rename(ctx, "/a/f.txt", "/a/g.txt"); err != nil {
		t.Fatalf("rename within a mount: %v", err)
	}
	if got := read(t, f, "/a/g.txt"); got != "f" {
		t.Errorf("renamed file holds %q", got)
	}
}

func TestReadOnlyMount(t *testing.T) {
	f := mustNew(t,
		mount.Mount{At: "/corpus", FS: memfs.FromMap(map[string]string{"/doc.md": "d"}), ReadOnly: true},
		mount.Mount{At: "/work", FS: memfs.New()},
	)
	if got := read(t, f, "/corpus/doc.md"); got != "d" {
		t.Errorf("read %q", got)
	}
	r, err := f.OpenFile(ctx, "/corpus/doc.md", os.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("read-only open in a read-only mount: %v", err)
	}
	r.Close()
	for _, c := range []struct {
		err  error
		path string
	}{
		{f.WriteFile(ctx, "/corpus/doc.md", []byte("x"), 0o644), "/corpus/doc.md"},
		{f.Remove(ctx, "/corpus/doc.md"), "/corpus/doc.md"},
		{f.RemoveAll(ctx, "/corpus/doc.md"), "/corpus/doc.md"},
		{f.Mkdir(ctx, "/corpus/d", 0o755), "/corpus/d"},
		{f.Rename(ctx, "/corpus/doc.md", "/corpus/e.md"), "/corpus/doc.md"},
		{f.SetTags(ctx, "/corpus/doc.md", semfs.Tags{Task: "t"}), "/corpus/doc.md"},
	} {
		pe := wantErr(t, c.err, semfs.ErrReadOnly, c.path)
		if !strings.Contains(pe.Error(), "writable mounts: /work") {
			t.Errorf("%q does not name the writable mounts", pe)
		}
	}
	if _, err := f.OpenFile(ctx, "/corpus/doc.md", os.O_RDWR, 0); !errors.Is(err, semfs.ErrReadOnly) {
		t.Errorf("OpenFile(O_RDWR) = %v, want ErrReadOnly", err)
	}
	if got := read(t, f, "/corpus/doc.md"); got != "d" {
		t.Errorf("read-only file changed to %q", got)
	}
}

func TestNewValidates(t *testing.T) {
	b := memfs.New()
	for _, bad := range [][]mount.Mount{
		{{At: "/a", FS: b}, {At: "a", FS: b}},
		{{At: "/a/../b", FS: b}},
		{{At: "/a", FS: nil}},
		{{At: "", FS: b}},
	} {
		if _, err := mount.New(bad); !errors.Is(err, semfs.ErrInvalid) {
			t.Errorf("New(%v) = %v, want ErrInvalid", bad, err)
		}
	}
	empty := mustNew(t)
	if info, err := empty.Stat(ctx, "/"); err != nil || !info.IsDir() {
		t.Errorf("empty table: Stat(/) = %v, %v", info, err)
	}
	if got := names(t, empty, "/"); len(got) != 0 {
		t.Errorf("empty table lists %v", got)
	}
	pe := wantErr(t, empty.WriteFile(ctx, "/x", nil, 0o644), semfs.ErrPermission, "/x")
	if !strings.Contains(pe.Error(), "writable mounts: none") {
		t.Errorf("empty table write error %q", pe)
	}
	one := mustNew(t, mount.Mount{At: "/m", FS: b})
	if semfs.Base(one) != semfs.FS(b) {
		t.Error("Base of a one-mount table is not its backend")
	}
	two := mustNew(t, mount.Mount{At: "/m", FS: b}, mount.Mount{At: "/", FS: memfs.New()})
	if semfs.Base(two) != semfs.FS(two) {
		t.Error("Base of a two-mount table went below it")
	}
	ms := two.Mounts()
	if len(ms) != 2 || ms[0].At != "/m" || ms[1].At != "/" {
		t.Errorf("Mounts() = %v", ms)
	}
	// Two mounts of the same backend count once.
	if err := b.WriteFile(ctx, "/f", []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	same := mustNew(t, mount.Mount{At: "/x", FS: b, KeepAbsolute: true}, mount.Mount{At: "/y", FS: b, KeepAbsolute: true})
	if n, err := same.TotalSize(ctx); n != 5 || err != nil {
		t.Errorf("TotalSize of one backend mounted twice = %d, %v; want 5", n, err)
	}
}

// searchable is a backend that answers queries, searches and relatives
// over its file names, for the fan-out tests.
type searchable struct {
	*memfs.FS
	score float64
}

func (s *searchable) Query(ctx context.Context, text string, limit int) ([]semfs.QueryResult, error) {
	files, err := semfs.FileList(ctx, s.FS, "/")
	if err != nil {
		return nil, err
	}
	var out []semfs.QueryResult
	for i, p := range files {
		if strings.Contains(p, text) {
			out = append(out, semfs.QueryResult{Path: p, Score: s.score - float64(i)})
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Search returns one hit per page; the cursor is the next index.
func (s *searchable) Search(ctx context.Context, req semfs.SearchRequest, fn func(semfs.SearchHit) error) (string, error) {
	files, err := semfs.FileList(ctx, s.FS, cmp.Or(req.PathPrefix, "/"))
	if err != nil {
		return "", err
	}
	i := 0
	if req.Cursor != "" {
		i = int(req.Cursor[0] - '0')
	}
	if i >= len(files) {
		return "", nil
	}
	if err := fn(semfs.SearchHit{Path: files[i], Score: s.score - float64(i)}); err != nil {
		return "", err
	}
	if i+1 < len(files) {
		return string(rune('0' + i + 1)), nil
	}
	return "", nil
}

func (s *searchable) Related(ctx context.Context, name string, limit int) ([]semfs.Candidate, error) {
	files, err := semfs.FileList(ctx, s.FS, "/")
	if err != nil {
		return nil, err
	}
	var out []semfs.Candidate
	for _, p := range files {
		if p != name {
			out = append(out, semfs.Candidate{Path: p, Similarity: 0.5, Via: "lexical"})
		}
	}
	return out, nil
}

func TestQuerySearchRelatedFanOut(t *testing.T) {
	root := &searchable{FS: memfs.FromMap(map[string]string{"/notes.md": "r", "/mem/shadowed.md": "s"}), score: 10}
	mem := &searchable{FS: memfs.FromMap(map[string]string{"/a.md": "a", "/b.md": "b"}), score: 20}
	f := mustNew(t, mount.Mount{At: "/", FS: root}, mount.Mount{At: "/mem", FS: mem})

	res, err := f.Query(ctx, ".md", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res {
		got = append(got, r.Path)
	}
	if want := []string{"/mem/a.md", "/mem/b.md", "/notes.md"}; !slices.Equal(got, want) {
		t.Errorf("Query paths = %v, want %v (best first, shadowed dropped)", got, want)
	}
	if res, _ := f.Query(ctx, ".md", 1); len(res) != 1 || res[0].Path != "/mem/a.md" {
		t.Errorf("Query limit 1 = %v", res)
	}

	// Search pages through both mounts with one cursor.
	var pages [][]string
	cursor := ""
	for range 5 {
		var page []string
		next, err := f.Search(ctx, semfs.SearchRequest{Query: "x", Cursor: cursor}, func(h semfs.SearchHit) error {
			page = append(page, h.Path)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, page)
		if next == "" {
			break
		}
		cursor = next
	}
	var all []string
	for _, p := range pages {
		all = append(all, p...)
	}
	slices.Sort(all)
	if want := []string{"/mem/a.md", "/mem/b.md", "/notes.md"}; !slices.Equal(all, want) {
		t.Errorf("search pages %v, want every hit once: %v", pages, want)
	}
	if _, err := f.Search(ctx, semfs.SearchRequest{Cursor: "!!"}, func(semfs.SearchHit) error { return nil }); !errors.Is(err, semfs.ErrInvalid) {
		t.Errorf("bad cursor: %v", err)
	}
	// A path filter inside one mount asks that mount alone, translated.
	var hits []string
	if _, err := f.Search(ctx, semfs.SearchRequest{PathPrefix: "/mem"}, func(h semfs.SearchHit) error {
		hits = append(hits, h.Path)
		return nil
	}); err != nil || !slices.Equal(hits, []string{"/mem/a.md"}) {
		t.Errorf("search in /mem = %v, %v", hits, err)
	}

	rel, err := f.Related(ctx, "/mem/a.md", 0)
	if err != nil || len(rel) != 1 || rel[0].Path != "/mem/b.md" {
		t.Errorf("Related = %v, %v", rel, err)
	}
	m, err := f.Meta(ctx, "/mem/a.md")
	if err != nil || m.Path != "/mem/a.md" || m.Size != 1 {
		t.Errorf("Meta = %+v, %v", m, err)
	}
	if m, err := f.Meta(ctx, "/"); err != nil || m.Path != "/" {
		t.Errorf("Meta(/) = %+v, %v", m, err)
	}
}

// GrepCandidates: files whose contents hold pattern literally.
func (s *searchable) GrepCandidates(ctx context.Context, root, pattern string, opts semfs.GrepOptions) ([]string, bool, error) {
	files, err := semfs.FileList(ctx, s.FS, root)
	if err != nil {
		return nil, false, err
	}
	var out []string
	for _, p := range files {
		data, _ := s.FS.ReadFile(ctx, p)
		if strings.Contains(string(data), pattern) {
			out = append(out, p)
		}
	}
	return out, true, nil
}

func TestGrepCandidatesMerged(t *testing.T) {
	root := &searchable{FS: memfs.FromMap(map[string]string{"/z.md": "needle", "/mem/shadowed.md": "needle", "/a.md": "hay"})}
	mem := &searchable{FS: memfs.FromMap(map[string]string{"/n.md": "needle", "/h.md": "hay"})}
	f := mustNew(t, mount.Mount{At: "/", FS: root}, mount.Mount{At: "/mem", FS: mem})
	got, ok, err := f.GrepCandidates(ctx, "/", "needle", semfs.GrepOptions{})
	if err != nil || !ok || !slices.Equal(got, []string{"/mem/n.md", "/z.md"}) {
		t.Errorf("GrepCandidates(/) = %v, %v, %v", got, ok, err)
	}
	got, ok, err = f.GrepCandidates(ctx, "/mem", "needle", semfs.GrepOptions{})
	if err != nil || !ok || !slices.Equal(got, []string{"/mem/n.md"}) {
		t.Errorf("GrepCandidates(/mem) = %v, %v, %v", got, ok, err)
	}
	// A mount that cannot narrow the search makes the answer not ok.
	g := mustNew(t, mount.Mount{At: "/", FS: root}, mount.Mount{At: "/plain", FS: memfs.New()})
	if _, ok, err := g.GrepCandidates(ctx, "/", "needle", semfs.GrepOptions{}); ok || err != nil {
		t.Errorf("with a plain mount: ok=%v, err=%v; want not ok", ok, err)
	}
	if got, ok, _ := g.GrepCandidates(ctx, "/a.md", "hay", semfs.GrepOptions{}); !ok || !slices.Equal(got, []string{"/a.md"}) {
		t.Errorf("below the plain mount's reach: %v, %v", got, ok)
	}
}
