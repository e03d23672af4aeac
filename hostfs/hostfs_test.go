package hostfs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/semfstest"
)

var ctx = context.Background()

// seedDir writes files (tree path → contents) under a new temp dir.
func seedDir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, data := range files {
		host := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(p, "/")))
		if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(host, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func open(t testing.TB, dir string, mode Mode, opts ...Option) *FS {
	t.Helper()
	f, err := Open(dir, mode, opts...)
	if err != nil {
		t.Fatalf("Open(%v): %v", mode, err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// wantErr asserts err is a *fs.PathError for path wrapping sentinel, and
// that its text never shows the host directory.
func wantErr(t *testing.T, err, sentinel error, path, hostDir string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got nil error, want %v at %s", sentinel, path)
	}
	if !errors.Is(err, sentinel) {
		t.Errorf("error %q does not wrap %q", err, sentinel)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		t.Errorf("error %q (%T) is not a *fs.PathError", err, err)
	} else if pe.Path != path {
		t.Errorf("error path %q, want %q (%v)", pe.Path, path, err)
	}
	noHost(t, err, hostDir)
}

func noHost(t *testing.T, err error, hostDir string) {
	t.Helper()
	if err != nil && (strings.Contains(err.Error(), hostDir) || strings.Contains(err.Error(), os.TempDir()+"/")) {
		t.Errorf("error leaks a host path: %q", err)
	}
}

// hashDir hashes every entry under dir (names, types, modes, contents,
// link targets), to prove a tree unchanged.
func hashDir(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		io.WriteString(h, r+"\x00"+info.Mode().String()+"\x00")
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			io.WriteString(h, target)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(data)
		}
		h.Write([]byte{0})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// hostFiles returns the regular files under dir as tree path → contents.
func hostFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		r, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		out["/"+filepath.ToSlash(r)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func names(t *testing.T, fsys semfs.FS, dir string) []string {
	t.Helper()
	return semfstest.Names(t, ctx, fsys, dir)
}

func read(t *testing.T, fsys semfs.FS, p string) string {
	t.Helper()
	return semfstest.ReadString(t, ctx, fsys, p)
}

var fixture = map[string]string{
	"/a.txt":         "alpha",
	"/docs/b.md":     "# bravo\n",
	"/docs/sub/c.go": "package c\n",
	"/e/f/g.txt":     strings.Repeat("golf ", 1000),
}

func TestIOFSAllModes(t *testing.T) {
	for _, mode := range []Mode{ReadOnly, ReadWrite, Overlay} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := seedDir(t, fixture)
			f := open(t, dir, mode)
			if err := fstest.TestFS(semfs.IOFS(ctx, f.Tree()), "a.txt", "docs/b.md", "docs/sub/c.go", "e/f/g.txt"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestIOFSOverlayWithPendingChanges(t *testing.T) {
	dir := seedDir(t, fixture)
	f := open(t, dir, Overlay)
	must(t, f.WriteFile(ctx, "/new/n.txt", []byte("november"), 0o644))
	must(t, f.Remove(ctx, "/a.txt"))
	must(t, f.Rename(ctx, "/docs", "/moved"))
	must(t, f.WriteFile(ctx, "/moved/b.md", []byte("changed"), 0o644))
	if err := fstest.TestFS(semfs.IOFS(ctx, f), "new/n.txt", "moved/b.md", "moved/sub/c.go", "e/f/g.txt"); err != nil {
		t.Fatal(err)
	}
	if got := names(t, f, "/"); !slices.Equal(got, []string{"e/", "moved/", "new/"}) {
		t.Errorf("root listing %v", got)
	}
}

// rootOnly is a test-only mode: ReadWrite with the openat2 fast path off,
// so the os.Root path is tested on its own.
const rootOnly Mode = 100

func openMode(t *testing.T, dir string, mode Mode) *FS {
	t.Helper()
	if mode == rootOnly {
		f := open(t, dir, ReadWrite)
		noFastPath(f, true)
		return f
	}
	return open(t, dir, mode)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(filepath.Join(dir, "missing"), ReadOnly)
	wantErr(t, err, semfs.ErrNotExist, "/", dir)
	must(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o644))
	_, err = Open(filepath.Join(dir, "file"), ReadWrite)
	wantErr(t, err, semfs.ErrNotDir, "/", dir)
	_, err = Open(dir, Mode(9))
	wantErr(t, err, semfs.ErrInvalid, "/", dir)
	_, err = Open(dir, ReadOnly, Hide("/"))
	wantErr(t, err, semfs.ErrInvalid, "/", dir)
	_, err = Open(dir, ReadOnly, Hide("a/../b"))
	if !errors.Is(err, semfs.ErrInvalid) {
		t.Errorf("Hide with '..': %v", err)
	}
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	dir := seedDir(t, fixture)
	before := hashDir(t, dir)
	f := open(t, dir, ReadOnly)
	tree := f.Tree()
	if _, ok := tree.(semfs.WriteFileFS); ok {
		t.Error("ReadOnly Tree() implements WriteFileFS")
	}
	if _, ok := tree.(semfs.RemoveFS); ok {
		t.Error("ReadOnly Tree() implements RemoveFS")
	}
	for _, fsys := range []semfs.FS{f, tree} {
		wantErr(t, semfs.WriteFile(ctx, fsys, "/a.txt", []byte("x"), 0o644), semfs.ErrReadOnly, "/a.txt", dir)
		wantErr(t, semfs.Mkdir(ctx, fsys, "/d", 0o755), semfs.ErrReadOnly, "/d", dir)
		wantErr(t, semfs.MkdirAll(ctx, fsys, "/d/e", 0o755), semfs.ErrReadOnly, "/d/e", dir)
		wantErr(t, semfs.Remove(ctx, fsys, "/a.txt"), semfs.ErrReadOnly, "/a.txt", dir)
		wantErr(t, semfs.RemoveAll(ctx, fsys, "/docs"), semfs.ErrReadOnly, "/docs", dir)
		wantErr(t, semfs.Rename(ctx, fsys, "/a.txt", "/z.txt"), semfs.ErrReadOnly, "/a.txt", dir)
		_, err := semfs.OpenFile(ctx, fsys, "/a.txt", os.O_RDWR, 0)
		wantErr(t, err, semfs.ErrReadOnly, "/a.txt", dir)
	}
	// A read-only OpenFile is allowed on *FS and cannot write.
	rf, err := f.OpenFile(ctx, "/a.txt", os.O_RDONLY, 0)
	must(t, err)
	_, err = rf.Write([]byte("x"))
	wantErr(t, err, semfs.ErrInvalid, "/a.txt", dir)
	rf.Close()
	if read(t, tree, "/docs/b.md") != fixture["/docs/b.md"] {
		t.Error("read through ReadOnly tree differs")
	}
	if hashDir(t, dir) != before {
		t.Error("host changed under a ReadOnly tree")
	}
	if err := f.Commit(ctx); !errors.Is(err, semfs.ErrInvalid) {
		t.Errorf("Commit outside Overlay: %v", err)
	}
}

func TestFilesAndTotalSize(t *testing.T) {
	for _, mode := range []Mode{ReadOnly, ReadWrite, Overlay} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := seedDir(t, fixture)
			f := open(t, dir, mode)
			got, err := semfs.FileList(ctx, f, "/")
			must(t, err)
			want := []string{"/a.txt", "/docs/b.md", "/docs/sub/c.go", "/e/f/g.txt"}
			if !slices.Equal(got, want) {
				t.Errorf("Files = %v, want %v", got, want)
			}
			got, err = semfs.FileList(ctx, f, "/docs")
			must(t, err)
			if !slices.Equal(got, want[1:3]) {
				t.Errorf("Files(/docs) = %v", got)
			}
			var wantSize int64
			for _, v := range fixture {
				wantSize += int64(len(v))
			}
			size, err := f.TotalSize(ctx)
			must(t, err)
			if size != wantSize {
				t.Errorf("TotalSize = %d, want %d", size, wantSize)
			}
			_, err = semfs.FileList(ctx, f, "/nope")
			wantErr(t, err, semfs.ErrNotExist, "/nope", dir)
		})
	}
}

// TestFilesSortOrder checks full-path byte order ("/a.b" before "/a/b").
func TestFilesSortOrder(t *testing.T) {
	dir := seedDir(t, map[string]string{"/a/b": "1", "/a.b": "2", "/a-c": "3"})
	f := open(t, dir, ReadOnly)
	got, err := semfs.FileList(ctx, f, "/")
	must(t, err)
	if want := []string{"/a-c", "/a.b", "/a/b"}; !slices.Equal(got, want) {
		t.Errorf("Files = %v, want %v", got, want)
	}
}

func TestHidden(t *testing.T) {
	dir := seedDir(t, map[string]string{"/.semfs/index.db": "0123456789", "/keep.txt": "k", "/private/p.txt": "pp"})
	f := open(t, dir, ReadWrite)
	if got := names(t, f, "/"); !slices.Equal(got, []string{"keep.txt", "private/"}) {
		t.Errorf("root listing %v", got)
	}
	files, err := semfs.FileList(ctx, f, "/")
	must(t, err)
	if slices.Contains(files, "/.semfs/index.db") {
		t.Error("Files lists hidden bookkeeping")
	}
	if size, _ := f.TotalSize(ctx); size != 3 {
		t.Errorf("TotalSize = %d, want 3 (hidden bytes excluded)", size)
	}
	_, err = f.Stat(ctx, "/.semfs")
	wantErr(t, err, semfs.ErrPermission, "/.semfs", dir)
	_, err = f.ReadFile(ctx, "/.semfs/index.db")
	wantErr(t, err, semfs.ErrPermission, "/.semfs/index.db", dir)
	wantErr(t, f.WriteFile(ctx, "/.semfs/x", []byte("x"), 0o644), semfs.ErrPermission, "/.semfs/x", dir)
	wantErr(t, f.RemoveAll(ctx, "/.semfs"), semfs.ErrPermission, "/.semfs", dir)
	wantErr(t, f.Rename(ctx, "/keep.txt", "/.semfs/k"), semfs.ErrPermission, "/.semfs/k", dir)
	if ok, _ := semfs.Exists(ctx, f, "/.semfs/index.db"); ok {
		t.Error("Exists reports a hidden file")
	}
	// RemoveAll("/") empties the tree but keeps the bookkeeping.
	must(t, f.RemoveAll(ctx, "/"))
	if got := hostFiles(t, dir); len(got) != 1 || got["/.semfs/index.db"] != "0123456789" {
		t.Errorf("after RemoveAll(/), host holds %v", got)
	}

	// A directory holding hidden bookkeeping is neither removed, moved
	// nor replaced, in any writable mode.
	for _, mode := range []Mode{ReadWrite, Overlay} {
		d := seedDir(t, map[string]string{"/w/.semfs/db": "db"})
		g := open(t, d, mode, Hide("/w/.semfs"))
		if got := names(t, g, "/w"); len(got) != 0 {
			t.Errorf("%v: /w lists %v", mode, got)
		}
		must(t, g.Mkdir(ctx, "/empty", 0o755))
		wantErr(t, g.Remove(ctx, "/w"), semfs.ErrPermission, "/w", d)
		wantErr(t, g.RemoveAll(ctx, "/w"), semfs.ErrPermission, "/w", d)
		wantErr(t, g.Rename(ctx, "/w", "/v"), semfs.ErrPermission, "/w", d)
		wantErr(t, g.Rename(ctx, "/empty", "/w"), semfs.ErrPermission, "/w", d)
		if mode == Overlay {
			must(t, g.Commit(ctx))
		}
		if data, err := os.ReadFile(filepath.Join(d, "w/.semfs/db")); err != nil || string(data) != "db" {
			t.Errorf("%v: bookkeeping lost: %q %v", mode, data, err)
		}
	}

	// Hide replaces the default list.
	dir2 := seedDir(t, map[string]string{"/.semfs/i": "1", "/private/p.txt": "pp", "/pub.txt": "x"})
	g := open(t, dir2, ReadOnly, Hide("/private"))
	if got := names(t, g, "/"); !slices.Equal(got, []string{".semfs/", "pub.txt"}) {
		t.Errorf("listing with Hide(/private): %v", got)
	}
	_, err = g.Open(ctx, "/private/p.txt")
	wantErr(t, err, semfs.ErrPermission, "/private/p.txt", dir2)
}

func TestTempFilesHidden(t *testing.T) {
	dir := seedDir(t, map[string]string{"/d/" + tmpPrefix + "abc": "partial", "/d/real": "r"})
	f := open(t, dir, ReadWrite)
	if got := names(t, f, "/d"); !slices.Equal(got, []string{"real"}) {
		t.Errorf("listing shows temp files: %v", got)
	}
	_, err := f.Stat(ctx, "/d/"+tmpPrefix+"abc")
	wantErr(t, err, semfs.ErrPermission, "/d/"+tmpPrefix+"abc", dir)
}

func TestReadWriteAtomicWrite(t *testing.T) {
	dir := seedDir(t, fixture)
	f := open(t, dir, ReadWrite)
	must(t, os.Chmod(filepath.Join(dir, "a.txt"), 0o600))
	must(t, f.WriteFile(ctx, "/a.txt", []byte("replaced"), 0o644))
	must(t, f.WriteFile(ctx, "/x/y/z.txt", []byte("deep"), 0o640))
	got := hostFiles(t, dir)
	if got["/a.txt"] != "replaced" || got["/x/y/z.txt"] != "deep" {
		t.Errorf("host after writes: %v", got)
	}
	if info, _ := os.Stat(filepath.Join(dir, "a.txt")); info.Mode().Perm() != 0o600 {
		t.Errorf("replaced file mode %v, want 0600 kept", info.Mode().Perm())
	}
	if info, _ := os.Stat(filepath.Join(dir, "x/y/z.txt")); info.Mode().Perm() != 0o640 {
		t.Errorf("new file mode %v, want 0640", info.Mode().Perm())
	}
	for p := range got {
		if strings.Contains(p, tmpPrefix) {
			t.Errorf("temporary file left behind: %s", p)
		}
	}
	wantErr(t, f.WriteFile(ctx, "/a.txt/under", []byte("x"), 0o644), semfs.ErrNotDir, "/a.txt/under", dir)
	wantErr(t, f.WriteFile(ctx, "/docs", []byte("x"), 0o644), semfs.ErrIsDir, "/docs", dir)
	wantErr(t, f.WriteFile(ctx, "/", []byte("x"), 0o644), semfs.ErrIsDir, "/", dir)
	// A reader holding the old file keeps reading the old bytes.
	r, err := f.Open(ctx, "/docs/b.md")
	must(t, err)
	must(t, f.WriteFile(ctx, "/docs/b.md", []byte("new contents"), 0o644))
	old, err := io.ReadAll(r)
	must(t, err)
	r.Close()
	if string(old) != fixture["/docs/b.md"] {
		t.Errorf("open reader saw %q, want the old bytes", old)
	}
}

func TestReadWriteOps(t *testing.T) {
	dir := seedDir(t, fixture)
	f := open(t, dir, ReadWrite)
	must(t, f.Mkdir(ctx, "/m", 0o755))
	wantErr(t, f.Mkdir(ctx, "/m", 0o755), semfs.ErrExist, "/m", dir)
	wantErr(t, f.Mkdir(ctx, "/no/such", 0o755), semfs.ErrNotExist, "/no/such", dir)
	wantErr(t, f.Mkdir(ctx, "/a.txt/x", 0o755), semfs.ErrNotDir, "/a.txt/x", dir)
	must(t, f.MkdirAll(ctx, "/m/n/o", 0o755))
	must(t, f.MkdirAll(ctx, "/m/n/o", 0o755))
	wantErr(t, f.MkdirAll(ctx, "/a.txt", 0o755), semfs.ErrNotDir, "/a.txt", dir)
	wantErr(t, f.MkdirAll(ctx, "/a.txt/q", 0o755), semfs.ErrNotDir, "/a.txt/q", dir)
	wantErr(t, f.Remove(ctx, "/docs"), semfs.ErrNotEmpty, "/docs", dir)
	wantErr(t, f.Remove(ctx, "/nope"), semfs.ErrNotExist, "/nope", dir)
	wantErr(t, f.Remove(ctx, "/"), semfs.ErrInvalid, "/", dir)
	must(t, f.Remove(ctx, "/m/n/o"))
	must(t, f.RemoveAll(ctx, "/docs"))
	must(t, f.RemoveAll(ctx, "/docs"))
	// rename(2): a directory replaces an empty directory.
	must(t, f.MkdirAll(ctx, "/src/inner", 0o755))
	must(t, f.WriteFile(ctx, "/src/inner/f", []byte("F"), 0o644))
	must(t, f.Mkdir(ctx, "/dst", 0o755))
	must(t, f.Rename(ctx, "/src", "/dst"))
	if read(t, f, "/dst/inner/f") != "F" {
		t.Error("rename over empty dir lost the contents")
	}
	wantErr(t, f.Rename(ctx, "/dst", "/e"), semfs.ErrNotEmpty, "/e", dir)
	wantErr(t, f.Rename(ctx, "/a.txt", "/e"), semfs.ErrIsDir, "/e", dir)
	wantErr(t, f.Rename(ctx, "/dst", "/a.txt"), semfs.ErrNotDir, "/a.txt", dir)
	wantErr(t, f.Rename(ctx, "/dst", "/dst/inner/x"), semfs.ErrInvalid, "/dst", dir)
	wantErr(t, f.Rename(ctx, "/nope", "/x"), semfs.ErrNotExist, "/nope", dir)
	wantErr(t, f.Rename(ctx, "/a.txt", "/no/dir/a"), semfs.ErrNotExist, "/no/dir/a", dir)
	wantErr(t, f.Rename(ctx, "/", "/x"), semfs.ErrInvalid, "/", dir)
	must(t, f.Rename(ctx, "/a.txt", "/a.txt"))
	must(t, f.Rename(ctx, "/a.txt", "/dst/a.txt"))
	if got := hostFiles(t, dir); got["/dst/a.txt"] != "alpha" || got["/a.txt"] != "" {
		t.Errorf("host after rename: %v", got)
	}
	wantErr(t, f.Rename(ctx, "/e/f/g.txt", "/dst/a.txt/x"), semfs.ErrNotDir, "/dst/a.txt/x", dir)
	wantErr(t, f.Rename(ctx, "/dst/a.txt/x", "/y"), semfs.ErrNotDir, "/dst/a.txt/x", dir)
}

func TestOpenFileReadWrite(t *testing.T) {
	for _, mode := range []Mode{ReadWrite, Overlay} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := seedDir(t, fixture)
			f := open(t, dir, mode)
			_, err := f.OpenFile(ctx, "/no/parent", os.O_WRONLY|os.O_CREATE, 0o644)
			wantErr(t, err, semfs.ErrNotExist, "/no/parent", dir)
			_, err = f.OpenFile(ctx, "/a.txt", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			wantErr(t, err, semfs.ErrExist, "/a.txt", dir)
			_, err = f.OpenFile(ctx, "/docs", os.O_RDWR, 0)
			wantErr(t, err, semfs.ErrIsDir, "/docs", dir)
			_, err = f.OpenFile(ctx, "/missing", os.O_RDWR, 0)
			wantErr(t, err, semfs.ErrNotExist, "/missing", dir)

			w, err := f.OpenFile(ctx, "/a.txt", os.O_RDWR, 0)
			must(t, err)
			if _, err := w.WriteAt([]byte("ALP"), 0); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Seek(0, io.SeekEnd); err != nil {
				t.Fatal(err)
			}
			w.Write([]byte("!"))
			buf := make([]byte, 6)
			n, err := w.ReadAt(buf, 0)
			if n != 6 || string(buf) != "ALPha!" {
				t.Errorf("ReadAt = %d %q %v", n, buf, err)
			}
			must(t, w.Truncate(3))
			must(t, w.Sync())
			must(t, w.Close())
			if got := read(t, f, "/a.txt"); got != "ALP" {
				t.Errorf("after OpenFile writes: %q", got)
			}
			if err := w.Close(); err == nil {
				t.Error("second Close succeeded")
			} else {
				noHost(t, err, dir)
			}
			a, err := f.OpenFile(ctx, "/log", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			must(t, err)
			a.Write([]byte("one\n"))
			a.Write([]byte("two\n"))
			must(t, a.Close())
			if got := read(t, f, "/log"); got != "one\ntwo\n" {
				t.Errorf("append: %q", got)
			}
			tr, err := f.OpenFile(ctx, "/e/f/g.txt", os.O_WRONLY|os.O_TRUNC, 0)
			must(t, err)
			must(t, tr.Close())
			if info, err := f.Stat(ctx, "/e/f/g.txt"); err != nil || info.Size() != 0 {
				t.Errorf("O_TRUNC left %v %v", info, err)
			}
		})
	}
}

func TestOverlay(t *testing.T) {
	dir := seedDir(t, map[string]string{
		"/keep.txt":       "keep",
		"/edit.txt":       "before",
		"/gone.txt":       "gone",
		"/olddir/x.txt":   "x",
		"/olddir/sub/y":   "y",
		"/replace/z.txt":  "z",
		"/tree/deep/w.md": "w",
	})
	before := hashDir(t, dir)
	f := open(t, dir, Overlay)

	must(t, f.WriteFile(ctx, "/edit.txt", []byte("after"), 0o644))
	must(t, f.WriteFile(ctx, "/new/dir/n.txt", []byte("new"), 0o644))
	must(t, f.Remove(ctx, "/gone.txt"))
	must(t, f.Rename(ctx, "/olddir", "/newdir"))
	must(t, f.RemoveAll(ctx, "/replace"))
	must(t, f.Mkdir(ctx, "/replace", 0o755)) // opaque: z.txt must not come back
	must(t, f.WriteFile(ctx, "/replace/fresh.txt", []byte("fresh"), 0o644))
	must(t, f.Mkdir(ctx, "/empty", 0o755))

	view := map[string]string{
		"/keep.txt":          "keep",
		"/edit.txt":          "after",
		"/new/dir/n.txt":     "new",
		"/newdir/x.txt":      "x",
		"/newdir/sub/y":      "y",
		"/replace/fresh.txt": "fresh",
		"/tree/deep/w.md":    "w",
	}
	checkView := func(stage string) {
		t.Helper()
		files, err := semfs.FileList(ctx, f, "/")
		must(t, err)
		var want []string
		for p := range view {
			want = append(want, p)
		}
		sort.Strings(want)
		if !slices.Equal(files, want) {
			t.Fatalf("%s: Files = %v, want %v", stage, files, want)
		}
		for p, data := range view {
			if got := read(t, f, p); got != data {
				t.Errorf("%s: %s = %q, want %q", stage, p, got, data)
			}
		}
	}
	checkView("pending")
	if got := names(t, f, "/replace"); !slices.Equal(got, []string{"fresh.txt"}) {
		t.Errorf("re-created dir shows host entries: %v", got)
	}
	_, err := f.Stat(ctx, "/gone.txt")
	wantErr(t, err, semfs.ErrNotExist, "/gone.txt", dir)
	_, err = f.Stat(ctx, "/olddir/x.txt")
	wantErr(t, err, semfs.ErrNotExist, "/olddir/x.txt", dir)
	if hashDir(t, dir) != before {
		t.Fatal("host changed before Commit")
	}
	wantChanges := []Change{
		{Kind: "remove", Path: "/gone.txt"},
		{Kind: "remove", Path: "/olddir"},
		{Kind: "remove", Path: "/replace"},
		{Kind: "mkdir", Path: "/empty"},
		{Kind: "mkdir", Path: "/new"},
		{Kind: "mkdir", Path: "/new/dir"},
		{Kind: "mkdir", Path: "/newdir"},
		{Kind: "mkdir", Path: "/newdir/sub"},
		{Kind: "mkdir", Path: "/replace"},
		{Kind: "write", Path: "/edit.txt", Size: 5},
		{Kind: "write", Path: "/new/dir/n.txt", Size: 3},
		{Kind: "write", Path: "/newdir/sub/y", Size: 1},
		{Kind: "write", Path: "/newdir/x.txt", Size: 1},
		{Kind: "write", Path: "/replace/fresh.txt", Size: 5},
	}
	if got := f.Changes(); !slices.Equal(got, wantChanges) {
		t.Errorf("Changes =\n%v\nwant\n%v", got, wantChanges)
	}

	must(t, f.Commit(ctx))
	if got := hostFiles(t, dir); !mapsEqual(got, view) {
		t.Errorf("host after Commit = %v, want %v", got, view)
	}
	if info, err := os.Stat(filepath.Join(dir, "empty")); err != nil || !info.IsDir() {
		t.Errorf("empty dir not committed: %v", err)
	}
	if len(f.Changes()) != 0 {
		t.Errorf("Changes after Commit: %v", f.Changes())
	}
	checkView("committed")
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func TestOverlayDiscard(t *testing.T) {
	dir := seedDir(t, fixture)
	before := hashDir(t, dir)
	f := open(t, dir, Overlay)
	listing := names(t, f, "/")
	must(t, f.RemoveAll(ctx, "/"))
	must(t, f.WriteFile(ctx, "/only.txt", []byte("o"), 0o644))
	if got := names(t, f, "/"); !slices.Equal(got, []string{"only.txt"}) {
		t.Errorf("after RemoveAll(/) + write: %v", got)
	}
	must(t, f.Discard())
	if got := names(t, f, "/"); !slices.Equal(got, listing) {
		t.Errorf("after Discard: %v, want %v", got, listing)
	}
	for p, data := range fixture {
		if got := read(t, f, p); got != data {
			t.Errorf("after Discard %s = %q", p, got)
		}
	}
	if f.Changes() != nil {
		t.Errorf("Changes after Discard: %v", f.Changes())
	}
	if hashDir(t, dir) != before {
		t.Error("host changed by Discard")
	}
}

func TestOverlaySemantics(t *testing.T) {
	dir := seedDir(t, fixture)
	f := open(t, dir, Overlay)
	wantErr(t, f.Remove(ctx, "/docs"), semfs.ErrNotEmpty, "/docs", dir)
	wantErr(t, f.WriteFile(ctx, "/a.txt/x", []byte("x"), 0o644), semfs.ErrNotDir, "/a.txt/x", dir)
	wantErr(t, f.Mkdir(ctx, "/docs", 0o755), semfs.ErrExist, "/docs", dir)
	wantErr(t, f.Mkdir(ctx, "/q/r", 0o755), semfs.ErrNotExist, "/q/r", dir)
	wantErr(t, f.Rename(ctx, "/docs", "/docs/sub/x"), semfs.ErrInvalid, "/docs", dir)
	wantErr(t, f.Rename(ctx, "/docs", "/e"), semfs.ErrNotEmpty, "/e", dir)
	wantErr(t, f.Rename(ctx, "/a.txt", "/docs"), semfs.ErrIsDir, "/docs", dir)
	// A file written in the overlay blocks the host directory below it.
	must(t, f.RemoveAll(ctx, "/e"))
	must(t, f.WriteFile(ctx, "/e", []byte("now a file"), 0o644))
	_, err := f.Stat(ctx, "/e/f/g.txt")
	if !errors.Is(err, semfs.ErrNotDir) && !errors.Is(err, semfs.ErrNotExist) {
		t.Errorf("Stat below overlay file: %v", err)
	}
	// An open handle sees later writes through another handle.
	w, err := f.OpenFile(ctx, "/shared", os.O_RDWR|os.O_CREATE, 0o644)
	must(t, err)
	r, err := f.Open(ctx, "/shared")
	must(t, err)
	w.Write([]byte("hello"))
	got, _ := io.ReadAll(r)
	if string(got) != "hello" {
		t.Errorf("second handle read %q", got)
	}
	must(t, f.Commit(ctx))
	if data, _ := os.ReadFile(filepath.Join(dir, "e")); string(data) != "now a file" {
		t.Errorf("host /e = %q", data)
	}
}

// symlinkTree builds a directory with hostile and friendly links.
func symlinkTree(t *testing.T) string {
	dir := seedDir(t, map[string]string{"/real/f.txt": "inside", "/top.txt": "top"})
	links := map[string]string{
		"etc":        "/etc",
		"up":         "../..",
		"loop1":      "loop2",
		"loop2":      "loop1",
		"abs":        filepath.Join(dir, "top.txt"),
		"rel.txt":    "real/f.txt",
		"reldir":     "real",
		"dangling":   "nowhere",
		"real/back":  "..",
		"real/sibl":  "../top.txt",
		"real/outer": "../../..",
	}
	for name, target := range links {
		must(t, os.Symlink(target, filepath.Join(dir, name)))
	}
	return dir
}

func TestSymlinks(t *testing.T) {
	for _, mode := range []Mode{ReadOnly, ReadWrite, Overlay, rootOnly} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := symlinkTree(t)
			f := openMode(t, dir, mode)
			for _, p := range []string{"/etc/passwd", "/etc", "/up", "/abs", "/real/outer"} {
				_, err := f.Stat(ctx, p)
				wantErr(t, err, semfs.ErrPermission, p, dir)
				if err != nil && !strings.Contains(err.Error(), "symlink points outside the tree") {
					t.Errorf("escape error lacks the explanation: %v", err)
				}
				_, err = f.Open(ctx, p)
				wantErr(t, err, semfs.ErrPermission, p, dir)
				_, err = f.ReadFile(ctx, p)
				wantErr(t, err, semfs.ErrPermission, p, dir)
			}
			_, err := f.ReadDir(ctx, "/up")
			wantErr(t, err, semfs.ErrPermission, "/up", dir)
			_, err = f.Open(ctx, "/loop1")
			wantErr(t, err, semfs.ErrInvalid, "/loop1", dir)
			if err != nil && !strings.Contains(err.Error(), "loop") {
				t.Errorf("loop error lacks the explanation: %v", err)
			}
			_, err = f.Stat(ctx, "/dangling")
			wantErr(t, err, semfs.ErrNotExist, "/dangling", dir)

			if got := read(t, f, "/rel.txt"); got != "inside" {
				t.Errorf("relative link read %q", got)
			}
			if got := read(t, f, "/reldir/sibl"); got != "top" {
				t.Errorf("link through link read %q", got)
			}
			// Listings show links as what they point to, and leave out
			// those that escape, dangle, loop or point above themselves.
			if got := names(t, f, "/"); !slices.Equal(got, []string{"real/", "rel.txt", "reldir/", "top.txt"}) {
				t.Errorf("root listing %v", got)
			}
			if got := names(t, f, "/real"); !slices.Equal(got, []string{"f.txt", "sibl"}) {
				t.Errorf("/real listing %v", got)
			}
			files, err := semfs.FileList(ctx, f, "/")
			must(t, err)
			if want := []string{"/real/f.txt", "/real/sibl", "/rel.txt", "/reldir/f.txt", "/reldir/sibl", "/top.txt"}; !slices.Equal(files, want) {
				t.Errorf("Files = %v, want %v", files, want)
			}
			if mode != ReadOnly {
				// Writing through an escaping link is refused too.
				err := f.WriteFile(ctx, "/etc/semfs-test", []byte("x"), 0o644)
				wantErr(t, err, semfs.ErrPermission, "/etc/semfs-test", dir)
				if _, serr := os.Stat("/etc/semfs-test"); serr == nil {
					t.Fatal("a write escaped the root")
				}
			}
		})
	}
}

func TestSwapFileForSymlinkBeforeOpen(t *testing.T) {
	for _, mode := range []Mode{ReadOnly, rootOnly} {
		t.Run(mode.String(), func(t *testing.T) { testSwap(t, mode) })
	}
}

func testSwap(t *testing.T, mode Mode) {
	dir := seedDir(t, map[string]string{"/f": "harmless", "/d/e/f": "deep"})
	f := openMode(t, dir, mode)
	if _, err := f.Stat(ctx, "/d/e/f"); err != nil {
		t.Fatal(err)
	}
	must(t, os.Rename(filepath.Join(dir, "d/e"), filepath.Join(dir, "d/e.old")))
	must(t, os.Symlink("/etc", filepath.Join(dir, "d/e")))
	_, err := f.Stat(ctx, "/d/e/f")
	wantErr(t, err, semfs.ErrPermission, "/d/e/f", dir)
	_, err = f.ReadFile(ctx, "/d/e/passwd")
	wantErr(t, err, semfs.ErrPermission, "/d/e/passwd", dir)
	must(t, os.Remove(filepath.Join(dir, "d/e")))
	must(t, os.Rename(filepath.Join(dir, "d/e.old"), filepath.Join(dir, "d/e")))
	info, err := f.Stat(ctx, "/f")
	must(t, err)
	if !info.Mode().IsRegular() {
		t.Fatal("not regular")
	}
	host := filepath.Join(dir, "f")
	must(t, os.Remove(host))
	must(t, os.Symlink("/etc/passwd", host))
	_, err = f.Open(ctx, "/f")
	wantErr(t, err, semfs.ErrPermission, "/f", dir)
	_, err = f.ReadFile(ctx, "/f")
	wantErr(t, err, semfs.ErrPermission, "/f", dir)

	// Swapped for a named pipe: the open must neither block nor succeed.
	must(t, os.Remove(host))
	must(t, syscall.Mkfifo(host, 0o644))
	done := make(chan error, 1)
	go func() { _, err := f.Open(ctx, "/f"); done <- err }()
	select {
	case err := <-done:
		wantErr(t, err, semfs.ErrInvalid, "/f", dir)
	case <-time.After(5 * time.Second):
		t.Fatal("Open of a named pipe blocked")
	}
	if got := names(t, f, "/"); !slices.Equal(got, []string{"d/"}) {
		t.Errorf("listing shows a pipe: %v", got)
	}
}

func TestBadPaths(t *testing.T) {
	dir := seedDir(t, map[string]string{"/ok.txt": "ok"})
	f := open(t, dir, ReadWrite)
	long := strings.Repeat("n", 256)
	for _, p := range []string{"/../etc/passwd", "../x", "/a/../../x", "/ok.txt/..", "/a\x00b", "", "/a//b", "/x/", "/" + long, "/" + strings.Repeat("d/", 2100) + "f"} {
		_, err := f.Stat(ctx, p)
		if !errors.Is(err, semfs.ErrInvalid) {
			t.Errorf("Stat(%q) = %v, want ErrInvalid", p, err)
		}
		noHost(t, err, dir)
		if err := f.WriteFile(ctx, p, []byte("x"), 0o644); !errors.Is(err, semfs.ErrInvalid) {
			t.Errorf("WriteFile(%q) = %v, want ErrInvalid", p, err)
		}
	}
	// The longest valid element works end to end.
	name := "/" + strings.Repeat("n", 255)
	must(t, f.WriteFile(ctx, name, []byte("long"), 0o644))
	if got := read(t, f, name); got != "long" {
		t.Errorf("255-byte name read %q", got)
	}
	// A host name semfs cannot address is left out of listings.
	must(t, os.WriteFile(filepath.Join(dir, "bad\\name"), nil, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "ctl\x01"), nil, 0o644))
	if got := names(t, f, "/"); !slices.Equal(got, []string{name[1:], "ok.txt"}) {
		t.Errorf("listing %v", got)
	}
}

func TestUnreadableFile(t *testing.T) {
	if os.Geteuid() == 0 {
		// Root reads through chmod 000, so run this test again as nobody.
		runAsNobody(t, "TestUnreadableFile")
		return
	}
	dir := seedDir(t, map[string]string{"/secret": "s"})
	must(t, os.Chmod(filepath.Join(dir, "secret"), 0))
	f := open(t, dir, ReadOnly)
	_, err := f.ReadFile(ctx, "/secret")
	wantErr(t, err, semfs.ErrPermission, "/secret", dir)
}

// runAsNobody re-runs the named test of this binary as user nobody and
// fails unless it ran and passed there.
func runAsNobody(t *testing.T, name string) {
	t.Helper()
	exe, err := os.Executable()
	must(t, err)
	dir, err := os.MkdirTemp("", "hostfs-nobody")
	must(t, err)
	defer os.RemoveAll(dir)
	must(t, os.Chmod(dir, 0o1777))
	data, err := os.ReadFile(exe)
	must(t, err)
	bin := filepath.Join(dir, "hostfs.test")
	must(t, os.WriteFile(bin, data, 0o755))
	cmd := exec.Command(bin, "-test.run", "^"+name+"$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("%s as nobody: %v\n%s", name, err, out)
	}
}

// TestEscapeErrorText pins the text of os.Root's escape error, which
// mapErr matches because the standard library does not export it.
func TestEscapeErrorText(t *testing.T) {
	r, err := os.OpenRoot(t.TempDir())
	must(t, err)
	defer r.Close()
	_, err = r.Open("..")
	if innermost(err).Error() != escapeText {
		t.Fatalf("os.Root escape error is now %q; update escapeText", innermost(err))
	}
}

func TestMapErr(t *testing.T) {
	cases := []struct {
		errno syscall.Errno
		want  error
	}{
		{syscall.ENOENT, semfs.ErrNotExist},
		{syscall.EEXIST, semfs.ErrExist},
		{syscall.ENOTDIR, semfs.ErrNotDir},
		{syscall.EISDIR, semfs.ErrIsDir},
		{syscall.ENOTEMPTY, semfs.ErrNotEmpty},
		{syscall.EACCES, semfs.ErrPermission},
		{syscall.EPERM, semfs.ErrPermission},
		{syscall.EROFS, semfs.ErrReadOnly},
		{syscall.EDQUOT, semfs.ErrQuota},
		{syscall.ENOSPC, semfs.ErrQuota},
		{syscall.ELOOP, semfs.ErrInvalid},
	}
	for _, c := range cases {
		host := &fs.PathError{Op: "openat", Path: "/tmp/secret/host/path", Err: c.errno}
		err := mapErr("open", "/tree/p", host)
		if !errors.Is(err, c.want) {
			t.Errorf("%v -> %v, want %v", c.errno, err, c.want)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%v leaks the host path: %v", c.errno, err)
		}
	}
	err := mapErr("open", "/p", &fs.PathError{Op: "x", Path: "/tmp/secret", Err: errors.New("odd failure at /tmp/secret")})
	if strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "/p") {
		t.Errorf("unknown error not scrubbed: %v", err)
	}
	if mapErr("read", "/p", io.EOF) != io.EOF {
		t.Error("io.EOF must pass through")
	}
}

// TestCloseWhileReading closes the tree under concurrent readers: each read
// either succeeds with the right bytes or fails with a PathError that shows
// no host path.
func TestCloseWhileReading(t *testing.T) {
	dir := seedDir(t, fixture)
	f, err := Open(dir, ReadOnly)
	must(t, err)
	done := make(chan struct{})
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			errs <- func() error {
				for {
					select {
					case <-done:
						return nil
					default:
					}
					data, err := f.ReadFile(ctx, "/e/f/g.txt")
					if err == nil && string(data) != fixture["/e/f/g.txt"] {
						return errors.New("wrong bytes")
					}
					var pe *fs.PathError
					if err != nil && (!errors.As(err, &pe) || strings.Contains(err.Error(), dir)) {
						return err
					}
				}
			}()
		}()
	}
	time.Sleep(20 * time.Millisecond)
	must(t, f.Close())
	time.Sleep(20 * time.Millisecond)
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	_, err = f.ReadFile(ctx, "/a.txt")
	if err == nil {
		t.Error("ReadFile after Close succeeded")
	}
	noHost(t, err, dir)
}

// TestOverlayCommitUnderLoad commits while other goroutines write and
// read: the race detector watches the locking, and after the last Commit
// the host holds exactly what the view showed.
func TestOverlayCommitUnderLoad(t *testing.T) {
	dir := seedDir(t, fixture)
	f := open(t, dir, Overlay)
	done := make(chan struct{})
	errs := make(chan error, 3)
	for w := range 3 {
		go func() {
			errs <- func() error {
				for i := 0; ; i++ {
					select {
					case <-done:
						return nil
					default:
					}
					p := fmt.Sprintf("/w%d/f%d", w, i%5)
					if err := f.WriteFile(ctx, p, []byte(p), 0o644); err != nil {
						return err
					}
					if data, err := f.ReadFile(ctx, p); err != nil || string(data) != p {
						return fmt.Errorf("read back %s: %q %v", p, data, err)
					}
					if _, err := semfs.FileList(ctx, f, "/"); err != nil {
						return err
					}
				}
			}()
		}()
	}
	for range 5 {
		must(t, f.Commit(ctx))
		time.Sleep(5 * time.Millisecond)
	}
	close(done)
	for range 3 {
		must(t, <-errs)
	}
	must(t, f.Commit(ctx))
	view := map[string]string{}
	files, err := semfs.FileList(ctx, f, "/")
	must(t, err)
	for _, p := range files {
		view[p] = read(t, f, p)
	}
	if got := hostFiles(t, dir); !mapsEqual(got, view) {
		t.Errorf("host after the last Commit differs from the view:\nhost %v\nview %v", got, view)
	}
	if len(f.Changes()) != 0 {
		t.Errorf("changes left: %v", f.Changes())
	}
}
