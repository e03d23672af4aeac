package memfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
)

// model is a plain map-based tree with the semantics memfs must have; the
// fuzz test below runs random operations on both and compares.
type model struct {
	files map[string]string
	dirs  map[string]bool
}

func newModel() *model {
	return &model{files: map[string]string{}, dirs: map[string]bool{"/": true}}
}

func (m *model) exists(p string) bool { _, f := m.files[p]; return f || m.dirs[p] }

// find resolves p like a lookup from the root: ErrNotDir if an element
// before the last is a file, ErrNotExist if one is missing.
func (m *model) find(p string) error {
	if p == "/" {
		return nil
	}
	cur := "/"
	for elem := range strings.SplitSeq(p[1:], "/") {
		if _, isFile := m.files[cur]; isFile {
			return semfs.ErrNotDir
		}
		cur = semfs.Join(cur, elem)
		if !m.exists(cur) {
			return semfs.ErrNotExist
		}
	}
	return nil
}

// parent resolves the directory holding p.
func (m *model) parent(p string) error {
	d := semfs.Dir(p)
	if err := m.find(d); err != nil {
		return err
	}
	if !m.dirs[d] {
		return semfs.ErrNotDir
	}
	return nil
}

func (m *model) empty(d string) bool {
	for p := range m.files {
		if semfs.Dir(p) == d {
			return false
		}
	}
	for p := range m.dirs {
		if p != "/" && semfs.Dir(p) == d {
			return false
		}
	}
	return true
}

func (m *model) mkdirAll(p string) error {
	var out error
	semfs.Ancestors(p, func(d string) bool {
		if _, f := m.files[d]; f {
			out = semfs.ErrNotDir
			return false
		}
		return true
	})
	if _, f := m.files[p]; f {
		out = semfs.ErrNotDir
	}
	if out != nil {
		return out
	}
	semfs.Ancestors(p, func(d string) bool { m.dirs[d] = true; return true })
	m.dirs[p] = true
	return nil
}

func (m *model) writeFile(p, data string) error {
	if p == "/" || m.dirs[p] {
		return semfs.ErrIsDir
	}
	if err := m.mkdirAll(semfs.Dir(p)); err != nil {
		return err
	}
	m.files[p] = data
	return nil
}

func (m *model) mkdir(p string) error {
	if p == "/" {
		return semfs.ErrExist
	}
	if err := m.parent(p); err != nil {
		return err
	}
	if m.exists(p) {
		return semfs.ErrExist
	}
	m.dirs[p] = true
	return nil
}

func (m *model) removeTree(p string) {
	for q := range m.files {
		if semfs.HasPrefix(q, p) {
			delete(m.files, q)
		}
	}
	for q := range m.dirs {
		if q != "/" && semfs.HasPrefix(q, p) {
			delete(m.dirs, q)
		}
	}
}

func (m *model) remove(p string) error {
	if p == "/" {
		return semfs.ErrInvalid
	}
	if err := m.parent(p); err != nil {
		return err
	}
	if !m.exists(p) {
		return semfs.ErrNotExist
	}
	if m.dirs[p] && !m.empty(p) {
		return semfs.ErrNotEmpty
	}
	m.removeTree(p)
	return nil
}

func (m *model) removeAll(p string) error {
	if p == "/" {
		m.removeTree("/")
		return nil
	}
	switch err := m.parent(p); err {
	case nil:
	case semfs.ErrNotExist:
		return nil
	default:
		return err
	}
	m.removeTree(p)
	return nil
}

func (m *model) rename(o, n string) error {
	if o == "/" || n == "/" {
		return semfs.ErrInvalid
	}
	if err := m.parent(o); err != nil {
		return err
	}
	if !m.exists(o) {
		return semfs.ErrNotExist
	}
	if o == n {
		return nil
	}
	srcDir := m.dirs[o]
	if srcDir && semfs.HasPrefix(n, o) {
		return semfs.ErrInvalid
	}
	if err := m.parent(n); err != nil {
		return err
	}
	if m.exists(n) {
		dstDir := m.dirs[n]
		switch {
		case srcDir && !dstDir:
			return semfs.ErrNotDir
		case !srcDir && dstDir:
			return semfs.ErrIsDir
		case dstDir && !m.empty(n):
			return semfs.ErrNotEmpty
		}
		m.removeTree(n)
	}
	moved := map[string]string{}
	for q, v := range m.files {
		if semfs.HasPrefix(q, o) {
			moved[n+strings.TrimPrefix(q, o)] = v
			delete(m.files, q)
		}
	}
	maps.Copy(m.files, moved)
	for q := range m.dirs {
		if q != "/" && semfs.HasPrefix(q, o) {
			delete(m.dirs, q)
			m.dirs[n+strings.TrimPrefix(q, o)] = true
		}
	}
	return nil
}

// openRW is OpenFile(p, O_RDWR) without O_CREATE.
func (m *model) openRW(p string) error {
	if p == "/" {
		return semfs.ErrIsDir
	}
	if err := m.parent(p); err != nil {
		return err
	}
	if !m.exists(p) {
		return semfs.ErrNotExist
	}
	if m.dirs[p] {
		return semfs.ErrIsDir
	}
	return nil
}

func (m *model) writeAt(p, data string, off int) {
	cur := m.files[p]
	if end := off + len(data); end > len(cur) {
		cur += strings.Repeat("\x00", end-len(cur))
	}
	m.files[p] = cur[:off] + data + cur[off+len(data):]
}

func (m *model) truncate(p string, size int) {
	cur := m.files[p]
	if size <= len(cur) {
		m.files[p] = cur[:size]
	} else {
		m.files[p] = cur + strings.Repeat("\x00", size-len(cur))
	}
}

// fuzzPaths is a small alphabet of paths, so that operations collide.
var fuzzPaths = func() []string {
	out := []string{"/"}
	for _, a := range []string{"a", "b", "a.x"} {
		out = append(out, "/"+a)
		for _, b := range []string{"a", "c"} {
			out = append(out, "/"+a+"/"+b)
			out = append(out, "/"+a+"/"+b+"/d")
		}
	}
	return out
}()

// sameError reports whether got carries the sentinel want (or both are nil).
func sameError(got, want error) bool {
	if want == nil || got == nil {
		return got == nil && want == nil
	}
	var pe *fs.PathError
	return errors.As(got, &pe) && errors.Is(got, want)
}

func compareTrees(t *testing.T, m *memfs.FS, md *model, step string) {
	t.Helper()
	files := map[string]string{}
	dirs := map[string]bool{}
	err := semfs.WalkDir(ctx, m, "/", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs[p] = true
			return nil
		}
		data, err := m.ReadFile(ctx, p)
		files[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatalf("%s: walk: %v", step, err)
	}
	if !maps.Equal(files, md.files) || !maps.Equal(dirs, md.dirs) {
		t.Fatalf("%s: tree differs from the model:\nfiles %q\nwant  %q\ndirs %q\nwant %q", step,
			slices.Sorted(maps.Keys(files)), slices.Sorted(maps.Keys(md.files)),
			slices.Sorted(maps.Keys(dirs)), slices.Sorted(maps.Keys(md.dirs)))
	}
	var sum int64
	for _, v := range md.files {
		sum += int64(len(v))
	}
	if n, _ := m.TotalSize(ctx); n != sum {
		t.Fatalf("%s: TotalSize = %d; model holds %d", step, n, sum)
	}
	list, _ := semfs.FileList(ctx, m, "/")
	if !slices.Equal(list, slices.Sorted(maps.Keys(md.files))) {
		t.Fatalf("%s: Files = %q", step, list)
	}
}

// FuzzModel runs random operations on memfs and on the model, comparing
// every error and, after each operation, the whole tree.
func FuzzModel(f *testing.F) {
	f.Add([]byte{0, 1, 5, 3, 2, 1, 4, 2, 6, 3, 7, 0, 8})
	f.Add([]byte{0, 3, 9, 0, 5, 200, 5, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add(bytes.Repeat([]byte{0, 6, 77, 2, 8, 1, 5, 6, 2, 7, 3, 4}, 8))
	f.Add([]byte{2, 6, 0, 1, 4, 2, 2, 7, 4, 1, 5, 2, 3, 1, 0, 6, 2, 1, 2, 5})
	// Copy on write: a big file, a reader, writes and truncates into the
	// shared chunks, snapshots in between, a rename.
	f.Add([]byte{0, 1, 200, 8, 1, 6, 1, 70, 10, 0, 9, 0, 7, 1, 0, 0, 3, 6, 1, 0, 5, 0, 8, 1, 9, 0, 5, 1, 2, 6, 2, 131, 200, 0, 9, 0, 4, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		m, md := memfs.New(), newModel()
		next := func() int {
			if len(ops) == 0 {
				return 0
			}
			b := ops[0]
			ops = ops[1:]
			return int(b)
		}
		pathArg := func() string { return fuzzPaths[next()%len(fuzzPaths)] }
		// Readers opened along the way must keep reading what the file
		// held when they were opened; snapshots must restore to the tree
		// they saw (both share chunks copy-on-write with the live tree).
		type openReader struct {
			r    io.ReaderAt
			want string
		}
		var readers []openReader
		type snap struct {
			stream []byte
			files  map[string]string
			dirs   map[string]bool
		}
		var snaps []snap
		for step := 0; len(ops) > 0 && step < 200; step++ {
			op := next() % 10
			p := pathArg()
			var got, want error
			var desc string
			switch op {
			case 0:
				data := strings.Repeat(string(rune('a'+step%26)), next()*700)
				desc = "WriteFile " + p
				got, want = m.WriteFile(ctx, p, []byte(data), 0o644), md.writeFile(p, data)
			case 1:
				desc = "Mkdir " + p
				got, want = m.Mkdir(ctx, p, 0o755), md.mkdir(p)
			case 2:
				desc = "MkdirAll " + p
				got, want = m.MkdirAll(ctx, p, 0o755), md.mkdirAll(p)
			case 3:
				desc = "Remove " + p
				got, want = m.Remove(ctx, p), md.remove(p)
			case 4:
				desc = "RemoveAll " + p
				got, want = m.RemoveAll(ctx, p), md.removeAll(p)
			case 5:
				n := pathArg()
				desc = "Rename " + p + " " + n
				got, want = m.Rename(ctx, p, n), md.rename(p, n)
			case 8:
				desc = "Open " + p
				r, err := m.Open(ctx, p)
				if err == nil {
					readers = append(readers, openReader{r.(io.ReaderAt), md.files[p]})
				}
				got, want = err, md.find(p)
				if want == nil && md.dirs[p] {
					want = semfs.ErrIsDir
				}
			case 9:
				desc = "Snapshot"
				var buf bytes.Buffer
				if err := m.Snapshot(ctx, &buf); err != nil {
					t.Fatalf("Snapshot: %v", err)
				}
				snaps = append(snaps, snap{buf.Bytes(), maps.Clone(md.files), maps.Clone(md.dirs)})
			case 6, 7:
				off := next() * 997
				data := strings.Repeat("Z", next()*131)
				size := next() * 1021
				desc = "OpenFile " + p
				h, err := m.OpenFile(ctx, p, os.O_RDWR, 0)
				got, want = err, md.openRW(p)
				if err == nil && want == nil {
					if op == 6 {
						if _, err := h.WriteAt([]byte(data), int64(off)); err != nil {
							t.Fatalf("WriteAt: %v", err)
						}
						md.writeAt(p, data, off)
					} else {
						if err := h.Truncate(int64(size)); err != nil {
							t.Fatalf("Truncate: %v", err)
						}
						md.truncate(p, size)
					}
					h.Close()
				}
			}
			if !sameError(got, want) {
				t.Fatalf("step %d %s: memfs %v; model %v", step, desc, got, want)
			}
			compareTrees(t, m, md, desc)
			for i, r := range readers {
				buf := make([]byte, len(r.want)+1)
				n, _ := r.r.ReadAt(buf, 0)
				if string(buf[:n]) != r.want {
					t.Fatalf("after %s: reader %d reads %d bytes, not the %d it was opened with", desc, i, n, len(r.want))
				}
			}
		}
		for i, sn := range snaps {
			r := memfs.New()
			if err := r.Restore(ctx, bytes.NewReader(sn.stream)); err != nil {
				t.Fatalf("Restore of snapshot %d: %v", i, err)
			}
			compareTrees(t, r, &model{files: sn.files, dirs: sn.dirs}, fmt.Sprintf("snapshot %d", i))
		}
	})
}

// FuzzRestore feeds Restore arbitrary streams: it must never panic, a
// refused stream must leave the tree as it was, and an accepted one must
// give a consistent tree whose snapshot restores to the same tree.
func FuzzRestore(f *testing.F) {
	var buf bytes.Buffer
	src := memfs.FromMap(map[string]string{"/a/b": "bb", "/c": strings.Repeat("c", 70000), "/empty": ""})
	src.Snapshot(ctx, &buf)
	f.Add(buf.Bytes())
	buf.Reset()
	memfs.New().Snapshot(ctx, &buf)
	f.Add(buf.Bytes())
	f.Add([]byte("semfsmem\x01"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		m := memfs.FromMap(map[string]string{"/keep": "k"})
		if err := m.Restore(ctx, bytes.NewReader(stream)); err != nil {
			var pe *fs.PathError
			if !errors.As(err, &pe) || !errors.Is(err, semfs.ErrInvalid) {
				t.Fatalf("Restore error %v is not a PathError wrapping ErrInvalid", err)
			}
			if got, err := m.ReadFile(ctx, "/keep"); err != nil || string(got) != "k" {
				t.Fatalf("a refused Restore changed the tree")
			}
			return
		}
		md := newModel()
		err := semfs.WalkDir(ctx, m, "/", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				md.dirs[p] = true
				return nil
			}
			data, err := m.ReadFile(ctx, p)
			md.files[p] = string(data)
			return err
		})
		if err != nil {
			t.Fatalf("walking a restored tree: %v", err)
		}
		compareTrees(t, m, md, "restored")
		var again bytes.Buffer
		if err := m.Snapshot(ctx, &again); err != nil {
			t.Fatal(err)
		}
		m2 := memfs.New()
		if err := m2.Restore(ctx, &again); err != nil {
			t.Fatalf("a snapshot of a restored tree does not restore: %v", err)
		}
		compareTrees(t, m2, md, "restored twice")
	})
}
