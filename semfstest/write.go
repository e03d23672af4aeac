package semfstest

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/semfs/semfs"
)

func testRoundTrip(e *env) {
	fsys := e.empty()
	cases := map[string]string{
		"/empty":        "",
		"/one":          "x",
		"/chunky.bin":   pattern(1<<20 + 65537),
		"/exact64k.bin": pattern(65536),
		"/nul":          "\x00\x00a\x00",
		"/invalid-utf8": "\xff\xfe\xfd\xc3\x28\xed\xa0\x80",
		"/dir/inner":    "inner",
	}
	for _, p := range slices.Sorted(maps.Keys(cases)) {
		data := []byte(cases[p])
		if err := semfs.WriteFile(e.ctx, fsys, p, data, 0o644); err != nil {
			e.Fatalf("WriteFile(%q): %v", p, err)
		}
		// The FS must have copied data: scribbling over it changes nothing.
		for i := range data {
			data[i] = '!'
		}
	}
	for p, want := range cases {
		e.wantContent(fsys, p, want)
		if info := e.stat(fsys, p); info.Size() != int64(len(want)) || !info.Mode().IsRegular() {
			e.Errorf("Stat(%q) = size %d mode %v; want %d, regular", p, info.Size(), info.Mode(), len(want))
		}
	}
	// The reading side must not share its buffer with the tree either.
	got, err := semfs.ReadFile(e.ctx, fsys, "/one")
	if err != nil {
		e.Fatalf("ReadFile: %v", err)
	}
	got[0] = 'Z'
	e.wantContent(fsys, "/one", "x")
}

func testOverwrite(e *env) {
	fsys := e.empty()
	long, short := pattern(200000), "short"
	e.write(fsys, "/f", long)
	e.write(fsys, "/f", short)
	e.wantContent(fsys, "/f", short)
	if info := e.stat(fsys, "/f"); info.Size() != int64(len(short)) {
		e.Errorf("size after overwrite = %d; want %d", info.Size(), len(short))
	}
	e.write(fsys, "/f", long)
	e.wantContent(fsys, "/f", long)
	e.write(fsys, "/f", "")
	e.wantContent(fsys, "/f", "")
	if got := e.files(fsys, "/"); !slices.Equal(got, []string{"/f"}) {
		e.Errorf("Files after overwrites = %q; want [/f]", got)
	}
	e.mkdirAll(fsys, "/d")
	err := semfs.WriteFile(e.ctx, fsys, "/d", []byte("x"), 0o644)
	e.wantErr(err, semfs.ErrIsDir, "WriteFile onto a directory", "/d")
	err = semfs.WriteFile(e.ctx, fsys, "/", []byte("x"), 0o644)
	e.wantErr(err, semfs.ErrIsDir, "WriteFile onto the root", "/")
	e.wantDir(fsys, "/d")
}

func testWriteCreatesParents(e *env) {
	fsys := e.empty()
	e.write(fsys, "/a/b/c/d.txt", "d")
	for _, p := range []string{"/a", "/a/b", "/a/b/c"} {
		e.wantDir(fsys, p)
	}
	if got := e.names(fsys, "/a"); !slices.Equal(got, []string{"b"}) {
		e.Errorf("ReadDir(/a) = %q; want [b]", got)
	}
	e.write(fsys, "a/b/rel.txt", "relative paths are rooted")
	e.wantContent(fsys, "/a/b/rel.txt", "relative paths are rooted")
	if got := e.names(fsys, "/a/b"); !slices.Equal(got, []string{"c", "rel.txt"}) {
		e.Errorf("ReadDir(/a/b) = %q; want [c rel.txt]", got)
	}
}

func testParentIsFile(e *env) {
	fsys := e.empty()
	e.write(fsys, "/f", "file")
	e.write(fsys, "/d/g", "file in dir")
	before := e.state(fsys)
	err := semfs.WriteFile(e.ctx, fsys, "/f/x", []byte("x"), 0o644)
	e.wantErr(err, semfs.ErrNotDir, "WriteFile through a file", "/f/x")
	err = semfs.WriteFile(e.ctx, fsys, "/d/g/x/y", []byte("x"), 0o644)
	e.wantErr(err, semfs.ErrNotDir, "WriteFile two levels through a file", "/d/g/x/y")
	err = semfs.MkdirAll(e.ctx, fsys, "/f/x/y", 0o755)
	e.wantErr(err, semfs.ErrNotDir, "MkdirAll through a file", "/f/x/y")
	err = semfs.MkdirAll(e.ctx, fsys, "/f", 0o755)
	e.wantErr(err, semfs.ErrNotDir, "MkdirAll onto a file", "/f")
	err = semfs.Mkdir(e.ctx, fsys, "/f/x", 0o755)
	e.wantErr(err, semfs.ErrNotDir, "Mkdir under a file", "/f/x")
	_, err = semfs.ReadDir(e.ctx, fsys, "/f")
	e.wantErr(err, semfs.ErrNotDir, "ReadDir of a file", "/f")
	if !e.cfg.noOpenFile {
		_, err = semfs.OpenFile(e.ctx, fsys, "/f/x", osCreate, 0o644)
		e.wantErr(err, semfs.ErrNotDir, "OpenFile(O_CREATE) under a file", "/f/x")
	}
	if !e.cfg.noRename {
		err = semfs.Rename(e.ctx, fsys, "/d/g", "/f/g")
		e.wantErr(err, semfs.ErrNotDir, "Rename to below a file", "/f/g", "/d/g")
	}
	err = semfs.Remove(e.ctx, fsys, "/f/x")
	e.wantAbsence(err, "Remove below a file", "/f/x")
	err = semfs.RemoveAll(e.ctx, fsys, "/f/x")
	e.wantErr(err, semfs.ErrNotDir, "RemoveAll below a file", "/f/x")
	e.sameState(fsys, before, "writes through a file")
}

func testModTimeUpdated(e *env) {
	fsys := e.empty()
	start := time.Now()
	e.write(fsys, "/m", "one")
	t1 := e.stat(fsys, "/m").ModTime()
	if t1.Before(start.Add(-2*time.Second)) || t1.After(time.Now().Add(2*time.Second)) {
		e.Errorf("ModTime after a write = %v; want about now (%v)", t1, start)
	}
	deadline := time.Now().Add(2500 * time.Millisecond)
	var t2 time.Time
	for {
		time.Sleep(10 * time.Millisecond)
		e.write(fsys, "/m", "two")
		t2 = e.stat(fsys, "/m").ModTime()
		if t2.After(t1) || time.Now().After(deadline) {
			break
		}
	}
	if !t2.After(t1) {
		e.Errorf("ModTime not updated by a later write: %v then %v", t1, t2)
	}
	if e.cfg.noOpenFile {
		return
	}
	// Writes through an open file update it too.
	deadline = time.Now().Add(2500 * time.Millisecond)
	var t3 time.Time
	for {
		time.Sleep(10 * time.Millisecond)
		f := e.openFile(fsys, "/m", osWRONLY)
		if _, err := f.WriteAt([]byte("T"), 0); err != nil {
			e.Fatalf("WriteAt: %v", err)
		}
		if err := f.Close(); err != nil {
			e.Fatalf("Close: %v", err)
		}
		t3 = e.stat(fsys, "/m").ModTime()
		if t3.After(t2) || time.Now().After(deadline) {
			break
		}
	}
	if !t3.After(t2) {
		e.Errorf("ModTime not updated by a write through OpenFile: %v then %v", t2, t3)
	}
}

func testMkdir(e *env) {
	fsys := e.empty()
	if err := semfs.Mkdir(e.ctx, fsys, "/d", 0o755); err != nil {
		e.Fatalf("Mkdir(/d): %v", err)
	}
	e.wantDir(fsys, "/d")
	if got := e.names(fsys, "/d"); len(got) != 0 {
		e.Errorf("new directory lists %q", got)
	}
	if got := e.names(fsys, "/"); !slices.Equal(got, []string{"d"}) {
		e.Errorf("ReadDir(/) = %q; want [d]", got)
	}
	err := semfs.Mkdir(e.ctx, fsys, "/d", 0o755)
	e.wantErr(err, semfs.ErrExist, "Mkdir of an existing directory", "/d")
	e.write(fsys, "/f", "x")
	err = semfs.Mkdir(e.ctx, fsys, "/f", 0o755)
	e.wantErr(err, semfs.ErrExist, "Mkdir of an existing file", "/f")
	err = semfs.Mkdir(e.ctx, fsys, "/", 0o755)
	e.wantErr(err, semfs.ErrExist, "Mkdir of the root", "/")
	err = semfs.Mkdir(e.ctx, fsys, "/no/such", 0o755)
	e.wantErr(err, semfs.ErrNotExist, "Mkdir with a missing parent", "/no/such")
	err = semfs.Mkdir(e.ctx, fsys, "/f/x", 0o755)
	e.wantErr(err, semfs.ErrNotDir, "Mkdir under a file", "/f/x")
	for range 2 {
		if err := semfs.MkdirAll(e.ctx, fsys, "/p/q/r", 0o755); err != nil {
			e.Fatalf("MkdirAll(/p/q/r): %v", err)
		}
	}
	for _, p := range []string{"/p", "/p/q", "/p/q/r"} {
		e.wantDir(fsys, p)
	}
	if err := semfs.MkdirAll(e.ctx, fsys, "/", 0o755); err != nil {
		e.Errorf("MkdirAll(/): %v", err)
	}
	if err := semfs.MkdirAll(e.ctx, fsys, "/d", 0o755); err != nil {
		e.Errorf("MkdirAll of an existing directory: %v", err)
	}
	if got := e.files(fsys, "/"); !slices.Equal(got, []string{"/f"}) {
		e.Errorf("Files = %q; directories must not be listed", got)
	}
	if got := e.names(fsys, "/"); !slices.Equal(got, []string{"d", "f", "p"}) {
		e.Errorf("ReadDir(/) = %q; want [d f p]", got)
	}
}

func testRemove(e *env) {
	fsys := e.empty()
	e.write(fsys, "/d/f", "f")
	e.write(fsys, "/d/g", "g")
	e.mkdirAll(fsys, "/empty")
	err := semfs.Remove(e.ctx, fsys, "/d")
	e.wantErr(err, semfs.ErrNotEmpty, "Remove of a non-empty directory", "/d")
	e.wantContent(fsys, "/d/f", "f")
	if err := semfs.Remove(e.ctx, fsys, "/d/f"); err != nil {
		e.Fatalf("Remove(/d/f): %v", err)
	}
	e.wantAbsent(fsys, "/d/f")
	e.wantContent(fsys, "/d/g", "g")
	err = semfs.Remove(e.ctx, fsys, "/d/f")
	e.wantErr(err, semfs.ErrNotExist, "Remove of a missing file", "/d/f")
	if err := semfs.Remove(e.ctx, fsys, "/empty"); err != nil {
		e.Fatalf("Remove of an empty directory: %v", err)
	}
	e.wantAbsent(fsys, "/empty")
	before := e.state(fsys)
	err = semfs.Remove(e.ctx, fsys, "/")
	e.wantErr(err, semfs.ErrInvalid, "Remove of the root", "/")
	if r, ok := fsys.(semfs.RemoveFS); ok {
		err = r.Remove(e.ctx, "/")
		e.wantErr(err, semfs.ErrInvalid, "RemoveFS.Remove of the root", "/")
	}
	e.sameState(fsys, before, "Remove(/)")
	e.wantDir(fsys, "/")
	if got := e.names(fsys, "/"); !slices.Equal(got, []string{"d"}) {
		e.Errorf("ReadDir(/) = %q; want [d]", got)
	}
}

func testRemoveAll(e *env) {
	fsys := e.empty()
	tree := map[string]string{
		"/a/x":       "1",
		"/a/b/c/d":   "22",
		"/a/b/e":     "333",
		"/a/z/y":     "4444",
		"/a.txt":     "sibling with a prefix",
		"/a-b/keep":  "keep",
		"/ab":        "keep too",
		"/other/a/x": "same name elsewhere",
	}
	for p, v := range tree {
		e.write(fsys, p, v)
	}
	e.mkdirAll(fsys, "/a/emptydir")
	if err := semfs.RemoveAll(e.ctx, fsys, "/a"); err != nil {
		e.Fatalf("RemoveAll(/a): %v", err)
	}
	for _, p := range []string{"/a", "/a/x", "/a/b", "/a/b/c/d", "/a/z/y", "/a/emptydir"} {
		e.wantAbsent(fsys, p)
	}
	for _, p := range []string{"/a.txt", "/a-b/keep", "/ab", "/other/a/x"} {
		e.wantContent(fsys, p, tree[p])
	}
	if got := e.files(fsys, "/"); !slices.Equal(got, []string{"/a-b/keep", "/a.txt", "/ab", "/other/a/x"}) {
		e.Errorf("Files after RemoveAll(/a) = %q", got)
	}
	if got, want := e.totalSize(fsys), int64(len(tree["/a.txt"])+len(tree["/a-b/keep"])+len(tree["/ab"])+len(tree["/other/a/x"])); got != want {
		e.Errorf("TotalSize after RemoveAll = %d; want %d", got, want)
	}
	if err := semfs.RemoveAll(e.ctx, fsys, "/a"); err != nil {
		e.Errorf("RemoveAll of a missing path = %v; want nil", err)
	}
	if err := semfs.RemoveAll(e.ctx, fsys, "/no/such/path"); err != nil {
		e.Errorf("RemoveAll of a missing deep path = %v; want nil", err)
	}
	if err := semfs.RemoveAll(e.ctx, fsys, "/ab"); err != nil {
		e.Errorf("RemoveAll of a file: %v", err)
	}
	e.wantAbsent(fsys, "/ab")
	if err := semfs.RemoveAll(e.ctx, fsys, "/"); err != nil {
		e.Fatalf("RemoveAll(/): %v", err)
	}
	e.wantDir(fsys, "/")
	if got := e.names(fsys, "/"); len(got) != 0 {
		e.Errorf("ReadDir(/) after RemoveAll(/) = %q; want nothing", got)
	}
	if n := e.totalSize(fsys); n != 0 {
		e.Errorf("TotalSize of an emptied tree = %d", n)
	}
	e.write(fsys, "/again", "usable after RemoveAll(/)")
	e.wantContent(fsys, "/again", "usable after RemoveAll(/)")
}

func testRename(e *env) {
	fsys := e.empty()
	if e.cfg.noRename {
		e.write(fsys, "/f", "f")
		before := e.state(fsys)
		err := semfs.Rename(e.ctx, fsys, "/f", "/g")
		e.wantErrAny(err, "Rename on a tree without renames", []error{semfs.ErrReadOnly, semfs.ErrPermission}, "/f", "/g")
		e.sameState(fsys, before, "a refused Rename")
		return
	}
	e.write(fsys, "/f", "f")
	if err := semfs.Rename(e.ctx, fsys, "/f", "/g"); err != nil {
		e.Fatalf("Rename(/f, /g): %v", err)
	}
	e.wantAbsent(fsys, "/f")
	e.wantContent(fsys, "/g", "f")

	// A directory moves with everything below it.
	e.write(fsys, "/src/a", "a")
	e.write(fsys, "/src/sub/b", "bb")
	e.mkdirAll(fsys, "/src/emptydir")
	e.mkdirAll(fsys, "/dst")
	if err := semfs.Rename(e.ctx, fsys, "/src", "/dst/moved"); err != nil {
		e.Fatalf("Rename of a directory: %v", err)
	}
	e.wantAbsent(fsys, "/src")
	e.wantContent(fsys, "/dst/moved/a", "a")
	e.wantContent(fsys, "/dst/moved/sub/b", "bb")
	e.wantDir(fsys, "/dst/moved/emptydir")
	if got := e.files(fsys, "/"); !slices.Equal(got, []string{"/dst/moved/a", "/dst/moved/sub/b", "/g"}) {
		e.Errorf("Files after moving a directory = %q", got)
	}

	// A file replaces a file.
	e.write(fsys, "/h", "hhhh")
	if err := semfs.Rename(e.ctx, fsys, "/g", "/h"); err != nil {
		e.Fatalf("Rename onto an existing file: %v", err)
	}
	e.wantAbsent(fsys, "/g")
	e.wantContent(fsys, "/h", "f")
	if got := e.totalSize(fsys); got != 1+1+2 {
		e.Errorf("TotalSize after a file replaced another = %d; want 4", got)
	}

	// A directory replaces an empty directory.
	e.mkdirAll(fsys, "/emptytarget")
	if err := semfs.Rename(e.ctx, fsys, "/dst/moved/sub", "/emptytarget"); err != nil {
		e.Fatalf("Rename of a directory onto an empty directory: %v", err)
	}
	e.wantContent(fsys, "/emptytarget/b", "bb")

	// Same path: nothing happens.
	before := e.state(fsys)
	if err := semfs.Rename(e.ctx, fsys, "/h", "/h"); err != nil {
		e.Errorf("Rename onto itself: %v", err)
	}
	if err := semfs.Rename(e.ctx, fsys, "/dst", "/dst"); err != nil {
		e.Errorf("Rename of a directory onto itself: %v", err)
	}
	e.sameState(fsys, before, "Rename onto itself")

	// Failures leave the tree as it was.
	e.write(fsys, "/full/x", "x")
	before = e.state(fsys)
	fails := []struct {
		old, new string
		want     error
		what     string
	}{
		{"/dst", "/full", semfs.ErrNotEmpty, "directory onto a non-empty directory"},
		{"/h", "/full", semfs.ErrIsDir, "file onto a directory"},
		{"/dst", "/h", semfs.ErrNotDir, "directory onto a file"},
		{"/dst", "/dst/moved/below", semfs.ErrInvalid, "directory below itself"},
		{"/dst", "/dst/x", semfs.ErrInvalid, "directory just below itself"},
		{"/h", "/nodir/h", semfs.ErrNotExist, "to a missing parent"},
		{"/missing", "/m2", semfs.ErrNotExist, "missing source"},
		{"/h", "/full/x/y", semfs.ErrNotDir, "to below a file"},
		{"/", "/r", semfs.ErrInvalid, "the root"},
		{"/h", "/", semfs.ErrInvalid, "onto the root"},
	}
	for _, c := range fails {
		err := semfs.Rename(e.ctx, fsys, c.old, c.new)
		e.wantErr(err, c.want, "Rename "+c.what+" ("+c.old+" → "+c.new+")", c.old, c.new)
	}
	e.sameState(fsys, before, "failed renames")
}

// wantErrAny is wantErr accepting any of several sentinels.
func (e *env) wantErrAny(err error, what string, sentinels []error, paths ...string) {
	e.Helper()
	if err == nil {
		e.Errorf("%s: succeeded; want an error", what)
		return
	}
	e.checkShape(err, what, paths...)
	if !errorsIsAny(err, sentinels...) {
		e.Errorf("%s: error %q wraps none of %q", what, err, sentinels)
	}
}

func testAccounting(e *env) {
	fsys := e.empty()
	model := map[string]int64{}
	check := func(step string) {
		e.Helper()
		var want int64
		for _, n := range model {
			want += n
		}
		got := e.totalSize(fsys)
		if got != want {
			e.Errorf("after %s: TotalSize = %d; want %d", step, got, want)
		}
		var listed int64
		files := e.files(fsys, "/")
		for _, p := range files {
			listed += e.stat(fsys, p).Size()
		}
		if listed != got {
			e.Errorf("after %s: TotalSize = %d but Files lists %d bytes", step, got, listed)
		}
		if len(files) != len(model) {
			e.Errorf("after %s: Files lists %d files; want %d", step, len(files), len(model))
		}
	}
	write := func(p string, n int) {
		e.write(fsys, p, pattern(n))
		model[p] = int64(n)
	}
	check("nothing")
	write("/a", 10)
	write("/d/b", 70000)
	write("/d/e/c", 0)
	check("writes")
	write("/a", 3)
	check("a shrinking overwrite")
	write("/d/b", 200000)
	check("a growing overwrite")
	if !e.cfg.noOpenFile {
		f, err := semfs.OpenFile(e.ctx, fsys, "/d/b", osRDWR, 0)
		if err != nil {
			e.Fatalf("OpenFile: %v", err)
		}
		if err := f.Truncate(5); err != nil {
			e.Fatalf("Truncate: %v", err)
		}
		model["/d/b"] = 5
		check("Truncate shrink")
		if err := f.Truncate(100000); err != nil {
			e.Fatalf("Truncate: %v", err)
		}
		model["/d/b"] = 100000
		check("Truncate grow")
		if _, err := f.WriteAt([]byte("tail"), 150000); err != nil {
			e.Fatalf("WriteAt: %v", err)
		}
		model["/d/b"] = 150004
		check("WriteAt beyond EOF")
		if err := f.Close(); err != nil {
			e.Fatalf("Close: %v", err)
		}
		f, err = semfs.OpenFile(e.ctx, fsys, "/d/new", osCreate|osWRONLY|osAppend, 0o644)
		if err != nil {
			e.Fatalf("OpenFile: %v", err)
		}
		f.Write([]byte("12345"))
		f.Write([]byte("678"))
		f.Close()
		model["/d/new"] = 8
		check("appends")
		f, err = semfs.OpenFile(e.ctx, fsys, "/d/new", osWRONLY|osTrunc, 0)
		if err != nil {
			e.Fatalf("OpenFile(O_TRUNC): %v", err)
		}
		f.Close()
		model["/d/new"] = 0
		check("O_TRUNC")
	}
	if err := semfs.Remove(e.ctx, fsys, "/a"); err != nil {
		e.Fatalf("Remove: %v", err)
	}
	delete(model, "/a")
	check("Remove")
	if !e.cfg.noRename {
		write("/x", 1234)
		write("/y", 99)
		if err := semfs.Rename(e.ctx, fsys, "/x", "/y"); err != nil {
			e.Fatalf("Rename: %v", err)
		}
		model["/y"] = model["/x"]
		delete(model, "/x")
		check("Rename onto an existing file")
		if err := semfs.Rename(e.ctx, fsys, "/d", "/moved"); err != nil {
			e.Fatalf("Rename: %v", err)
		}
		for p, n := range model {
			if semfs.HasPrefix(p, "/d") {
				delete(model, p)
				model["/moved"+strings.TrimPrefix(p, "/d")] = n
			}
		}
		check("Rename of a directory")
	}
	write("/z/1", 500)
	write("/z/2/3", 600)
	if err := semfs.RemoveAll(e.ctx, fsys, "/z"); err != nil {
		e.Fatalf("RemoveAll: %v", err)
	}
	delete(model, "/z/1")
	delete(model, "/z/2/3")
	check("RemoveAll")
}
