package semfstest

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/semfs/semfs"
)

// pattern returns n deterministic bytes covering every byte value, NULs and
// invalid UTF-8 included, without a short period.
func pattern(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251 + i/65536)
	}
	return string(b)
}

// fixture is the tree the read cases run on.
func fixture() map[string]string {
	return map[string]string{
		"/empty":               "",
		"/one":                 "x",
		"/big.bin":             pattern(1<<20 + 4097),
		"/bin/nul":             "a\x00b\x00\x00c\x00",
		"/bin/invalid-utf8":    "\xff\xfe\xc3\x28 ok \xed\xa0\x80",
		"/docs/a.md":           "# a\n",
		"/docs/b.md":           "# b\n\nbody\n",
		"/docs/sub/deep/c.txt": "c",
		"/a.txt":               "a dot",
		"/a-b/x":               "dash",
		"/a/b":                 "a slash b",
		"/ünï/码.txt":           "unicode",
	}
}

func testReadSeeded(e *env) {
	files := fixture()
	fsys := e.seeded(files)
	for _, p := range slices.Sorted(maps.Keys(files)) {
		want := files[p]
		e.wantContent(fsys, p, want)
		if info := e.stat(fsys, p); info.Size() != int64(len(want)) {
			e.Errorf("Stat(%q).Size() = %d; want %d", p, info.Size(), len(want))
		}
	}
	big := files["/big.bin"]
	f, err := fsys.Open(e.ctx, "/big.bin")
	if err != nil {
		e.Fatalf("Open(/big.bin): %v", err)
	}
	defer f.Close()
	if ra, ok := f.(io.ReaderAt); ok {
		for _, off := range []int{0, 1, 65535, 65536, 131071, 1 << 20, len(big) - 10} {
			buf := make([]byte, 100)
			n, err := ra.ReadAt(buf, int64(off))
			want := big[off:min(off+100, len(big))]
			if string(buf[:n]) != want || (n < 100 && err == nil) || (n == 100 && err != nil && err != io.EOF) {
				e.Errorf("ReadAt(100 bytes at %d) = %d, %v; contents match %v", off, n, err, string(buf[:n]) == want)
			}
		}
		if n, err := ra.ReadAt(make([]byte, 10), int64(len(big)+5)); n != 0 || err != io.EOF {
			e.Errorf("ReadAt past EOF = %d, %v; want 0, io.EOF", n, err)
		}
	}
	if s, ok := f.(io.Seeker); ok {
		off, err := s.Seek(-4097, io.SeekEnd)
		if err != nil || off != 1<<20 {
			e.Errorf("Seek(-4097, SeekEnd) = %d, %v; want %d", off, err, 1<<20)
		}
		rest, err := io.ReadAll(f)
		if err != nil || string(rest) != big[1<<20:] {
			e.Errorf("read after Seek: %d bytes, %v; want the last 4097 bytes", len(rest), err)
		}
	}
}

func testImplicitDirs(e *env) {
	fsys := e.seeded(map[string]string{"/deep/a/b/c.txt": "c", "/top.txt": "t"})
	if got := e.names(fsys, "/"); !slices.Equal(got, []string{"deep", "top.txt"}) {
		e.Errorf("ReadDir(/) = %q; want [deep top.txt]", got)
	}
	entries, err := semfs.ReadDir(e.ctx, fsys, "/")
	if err != nil {
		e.Fatalf("ReadDir(/): %v", err)
	}
	for _, d := range entries {
		if d.Name() == "deep" && (!d.IsDir() || !d.Type().IsDir()) {
			e.Errorf("ReadDir(/): entry deep is not a directory (type %v)", d.Type())
		}
	}
	for _, p := range []string{"/deep", "/deep/a", "/deep/a/b"} {
		e.wantDir(fsys, p)
		_, err := fsys.Open(e.ctx, p)
		e.wantErr(err, semfs.ErrIsDir, "Open of implicit directory "+p, p)
	}
	if got := e.names(fsys, "/deep/a"); !slices.Equal(got, []string{"b"}) {
		e.Errorf("ReadDir(/deep/a) = %q; want [b]", got)
	}
	if got := e.names(fsys, "/deep/a/b"); !slices.Equal(got, []string{"c.txt"}) {
		e.Errorf("ReadDir(/deep/a/b) = %q; want [c.txt]", got)
	}
	if got := e.files(fsys, "/deep"); !slices.Equal(got, []string{"/deep/a/b/c.txt"}) {
		e.Errorf("Files(/deep) = %q", got)
	}
	if ok, err := semfs.Exists(e.ctx, fsys, "/deep/a"); !ok || err != nil {
		e.Errorf("Exists(/deep/a) = %v, %v; want true", ok, err)
	}
}

// readDirNames are chosen so that byte order differs from other orders
// (case, digits, punctuation, non-ASCII); names differing only in case
// are distinct.
var readDirNames = []string{"B", "b", "a", "A", "a.txt", "a-b", "ä", "Z", "10", "9", "_u", "~t"}

func testReadDir(e *env) {
	files := map[string]string{"/d/sub/x": "x"}
	for i, n := range readDirNames {
		files["/d/"+n] = strings.Repeat("y", i)
	}
	fsys := e.seeded(files)
	entries, err := semfs.ReadDir(e.ctx, fsys, "/d")
	if err != nil {
		e.Fatalf("ReadDir(/d): %v", err)
	}
	want := append(slices.Clone(readDirNames), "sub")
	slices.Sort(want)
	var got []string
	for _, d := range entries {
		got = append(got, d.Name())
	}
	if !slices.Equal(got, want) {
		e.Errorf("ReadDir(/d) names = %q; want %q (sorted by byte order)", got, want)
	}
	for _, d := range entries {
		p := "/d/" + d.Name()
		info, err := d.Info()
		if err != nil {
			e.Errorf("entry %s: Info: %v", p, err)
			continue
		}
		st := e.stat(fsys, p)
		if info.Name() != d.Name() || st.Name() != d.Name() {
			e.Errorf("entry %s: Info().Name() = %q, Stat().Name() = %q", p, info.Name(), st.Name())
		}
		if d.IsDir() != st.IsDir() || d.Type() != st.Mode().Type() || info.IsDir() != st.IsDir() {
			e.Errorf("entry %s: ReadDir says dir=%v type=%v, Stat says dir=%v type=%v", p, d.IsDir(), d.Type(), st.IsDir(), st.Mode().Type())
		}
		if !st.IsDir() && (info.Size() != st.Size() || st.Size() != int64(len(files[p]))) {
			e.Errorf("entry %s: sizes ReadDir %d, Stat %d, written %d", p, info.Size(), st.Size(), len(files[p]))
		}
	}
	_, err = semfs.ReadDir(e.ctx, fsys, "/d/a.txt")
	e.wantErr(err, semfs.ErrNotDir, "ReadDir of a file", "/d/a.txt")
	_, err = semfs.ReadDir(e.ctx, fsys, "/d/missing")
	e.wantErr(err, semfs.ErrNotExist, "ReadDir of a missing path", "/d/missing")
	_, err = semfs.ReadDir(e.ctx, fsys, "/d/a.txt/x")
	e.wantAbsence(err, "ReadDir below a file", "/d/a.txt/x")
	if got := e.names(fsys, "/"); !slices.Equal(got, []string{"d"}) {
		e.Errorf("ReadDir(/) = %q; want [d]", got)
	}
}

// wantAbsence accepts ErrNotDir or ErrNotExist (a lookup below a file).
func (e *env) wantAbsence(err error, what string, paths ...string) {
	e.Helper()
	if err == nil {
		e.Errorf("%s: succeeded; want ErrNotDir or ErrNotExist", what)
		return
	}
	e.checkShape(err, what, paths...)
	if !errorsIsAny(err, semfs.ErrNotDir, semfs.ErrNotExist) {
		e.Errorf("%s: error %q wraps neither ErrNotDir nor ErrNotExist", what, err)
	}
}

func errorsIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

func testOpenDirAndMissing(e *env) {
	fsys := e.seeded(map[string]string{"/dir/f": "f"})
	_, err := fsys.Open(e.ctx, "/dir")
	e.wantErr(err, semfs.ErrIsDir, "Open of a directory", "/dir")
	_, err = fsys.Open(e.ctx, "/")
	e.wantErr(err, semfs.ErrIsDir, "Open of the root", "/")
	_, err = fsys.Open(e.ctx, "/dir/missing")
	e.wantErr(err, semfs.ErrNotExist, "Open of a missing file", "/dir/missing")
	_, err = fsys.Open(e.ctx, "/dir/f/x")
	e.wantAbsence(err, "Open below a file", "/dir/f/x")
	_, err = semfs.ReadFile(e.ctx, fsys, "/dir")
	e.wantErr(err, semfs.ErrIsDir, "ReadFile of a directory", "/dir")
	_, err = semfs.ReadFile(e.ctx, fsys, "/nope")
	e.wantErr(err, semfs.ErrNotExist, "ReadFile of a missing file", "/nope")
	_, err = semfs.Stat(e.ctx, fsys, "/nope")
	e.wantErr(err, semfs.ErrNotExist, "Stat of a missing path", "/nope")
	_, err = semfs.Stat(e.ctx, fsys, "/dir/f/x")
	e.wantAbsence(err, "Stat below a file", "/dir/f/x")
	e.wantDir(fsys, "/")
	for p, want := range map[string]bool{"/": true, "/dir": true, "/dir/f": true, "/nope": false, "/dir/f/x": false, "../x": false} {
		if got, err := semfs.Exists(e.ctx, fsys, p); got != want || err != nil {
			e.Errorf("Exists(%q) = %v, %v; want %v, nil", p, got, err, want)
		}
	}
}

func testFileInfo(e *env) {
	fsys := e.seeded(map[string]string{"/docs/a.md": "# a\n"})
	info := e.stat(fsys, "/docs/a.md")
	if info.Name() != "a.md" || info.Size() != 4 || info.IsDir() || !info.Mode().IsRegular() || info.ModTime().IsZero() {
		e.Errorf("Stat(/docs/a.md) = name %q size %d dir %v mode %v mtime %v; want a.md, 4, regular, non-zero time",
			info.Name(), info.Size(), info.IsDir(), info.Mode(), info.ModTime())
	}
	dir := e.stat(fsys, "/docs")
	if dir.Name() != "docs" || !dir.IsDir() || !dir.Mode().IsDir() {
		e.Errorf("Stat(/docs) = name %q dir %v mode %v; want docs, a directory", dir.Name(), dir.IsDir(), dir.Mode())
	}
	f, err := fsys.Open(e.ctx, "/docs/a.md")
	if err != nil {
		e.Fatalf("Open: %v", err)
	}
	fi, err := f.Stat()
	if err != nil || fi.Name() != "a.md" || fi.Size() != 4 || !fi.Mode().IsRegular() {
		e.Errorf("open file Stat = %v, %v; want a.md, 4 bytes, regular", fi, err)
	}
	if err := f.Close(); err != nil {
		e.Errorf("Close: %v", err)
	}
	if _, err := f.Read(make([]byte, 1)); err == nil {
		e.Errorf("Read after Close succeeded")
	} else {
		e.checkShape(err, "Read after Close", "/docs/a.md")
	}
}

func testFiles(e *env) {
	files := fixture()
	fsys := e.seeded(files)
	if !e.cfg.readOnly {
		e.mkdirAll(fsys, "/emptydir/inner")
	}
	want := slices.Sorted(maps.Keys(files))
	got := e.files(fsys, "/")
	if !slices.Equal(got, want) {
		e.Errorf("Files(/) = %q;\nwant %q (every regular file, sorted by full path)", got, want)
	}
	if !slices.IsSorted(got) {
		e.Errorf("Files(/) not sorted: %q", got)
	}
	var sum int64
	for _, p := range got {
		sum += e.stat(fsys, p).Size()
	}
	if n := e.totalSize(fsys); n != sum {
		e.Errorf("TotalSize = %d; the files listed by Files hold %d", n, sum)
	}
	if got := e.files(fsys, "/docs"); !slices.Equal(got, []string{"/docs/a.md", "/docs/b.md", "/docs/sub/deep/c.txt"}) {
		e.Errorf("Files(/docs) = %q", got)
	}
	if got := e.files(fsys, "/docs/a.md"); !slices.Equal(got, []string{"/docs/a.md"}) {
		e.Errorf("Files(/docs/a.md) = %q; want the file itself", got)
	}
	// Stopping early must work.
	n := 0
	for _, err := range semfs.Files(e.ctx, fsys, "/") {
		if err != nil {
			e.Fatalf("Files: %v", err)
		}
		n++
		if n == 2 {
			break
		}
	}
	var ferr error
	for _, err := range semfs.Files(e.ctx, fsys, "/missing") {
		if err != nil {
			ferr = err
		}
	}
	e.wantErr(ferr, semfs.ErrNotExist, "Files of a missing directory", "/missing")
}

func testTotalSizeSeeded(e *env) {
	files := fixture()
	fsys := e.seeded(files)
	var want int64
	for _, v := range files {
		want += int64(len(v))
	}
	if got := e.totalSize(fsys); got != want {
		e.Errorf("TotalSize = %d; the tree holds %d bytes", got, want)
	}
}

func testIOFS(e *env) {
	files := fixture()
	// fstest reads every file many ways; a big file costs seconds under -race.
	files["/big.bin"] = pattern(70000)
	fsys := e.seeded(files)
	var want []string
	for p := range files {
		want = append(want, strings.TrimPrefix(p, "/"))
	}
	slices.Sort(want)
	iofs := semfs.IOFS(e.ctx, fsys)
	if err := fstest.TestFS(iofs, want...); err != nil {
		e.Errorf("fstest.TestFS: %v", err)
	}
	data, err := fs.ReadFile(iofs, "docs/b.md")
	if err != nil || !bytes.Equal(data, []byte(files["/docs/b.md"])) {
		e.Errorf("fs.ReadFile(docs/b.md) = %q, %v", data, err)
	}
	var walked []string
	err = fs.WalkDir(iofs, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			walked = append(walked, p)
		}
		return nil
	})
	if err != nil || !slices.Equal(walked, walkOrder(want)) {
		e.Errorf("fs.WalkDir = %q, %v; want %q", walked, err, walkOrder(want))
	}
}

// walkOrder sorts relative file paths in the order fs.WalkDir visits them
// (per directory, by name).
func walkOrder(paths []string) []string {
	out := slices.Clone(paths)
	slices.SortFunc(out, func(a, b string) int {
		return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/"))
	})
	return out
}
