package hostfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/semfs/semfs"
)

// writeLinkTree builds a root whose links lead out of it in every way a
// write open could follow (absolute, relative through "..", a directory on
// the way, a dangling final link), next to a victim directory outside.
func writeLinkTree(t *testing.T) (dir, outside string) {
	t.Helper()
	outside = t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "victim"), []byte("victim"), 0o644))
	dir = seedDir(t, map[string]string{"/real/f.txt": "inside", "/top.txt": "top"})
	relOut, err := filepath.Rel(dir, outside)
	must(t, err)
	links := map[string]string{
		"vic":       filepath.Join(outside, "victim"),
		"vicdir":    outside,
		"vicrel":    filepath.Join(relOut, "victim"),
		"vicreldir": relOut,
		"newabs":    filepath.Join(outside, "new"), // dangling, outside
		"newrel":    filepath.Join(relOut, "new"),
		"up":        "../..",
		"real/out":  "../../..",
		"abs":       filepath.Join(dir, "top.txt"), // inside, but absolute
		"rel.txt":   "real/f.txt",
		"reldir":    "real",
		"dangling":  "real/made-through-link",
		"loop1":     "loop2",
		"loop2":     "loop1",
	}
	for name, target := range links {
		must(t, os.Symlink(target, filepath.Join(dir, name)))
	}
	return dir, outside
}

var writeFlags = []int{
	os.O_WRONLY | os.O_CREATE | os.O_TRUNC,
	os.O_RDWR | os.O_CREATE,
	os.O_WRONLY | os.O_CREATE | os.O_EXCL,
	os.O_WRONLY | os.O_TRUNC,
	os.O_RDWR,
}

func flagName(flag int) string {
	s := [...]string{"O_RDONLY", "O_WRONLY", "O_RDWR"}[flag&3]
	for _, b := range []struct {
		bit  int
		name string
	}{{os.O_CREATE, "O_CREATE"}, {os.O_EXCL, "O_EXCL"}, {os.O_TRUNC, "O_TRUNC"}} {
		if flag&b.bit != 0 {
			s += "|" + b.name
		}
	}
	return s
}

// TestWriteOpenEscapes: an open for writing (create, truncate, exclusive
// create) through a link that leaves the root is refused and changes
// nothing outside, with the openat2 fast path and with os.Root alone.
func TestWriteOpenEscapes(t *testing.T) {
	escapes := []string{"/vic", "/vicdir/victim", "/vicdir/new", "/vicrel", "/vicreldir/victim",
		"/vicreldir/new", "/newabs", "/newrel", "/up/x", "/real/out/x", "/abs"}
	for _, mode := range []Mode{ReadWrite, rootOnly, ReadOnly} {
		t.Run(mode.String(), func(t *testing.T) {
			dir, outside := writeLinkTree(t)
			f := openMode(t, dir, mode)
			for _, p := range escapes {
				for _, flag := range writeFlags {
					h, err := f.OpenFile(ctx, p, flag, 0o644)
					if err == nil {
						h.Write([]byte("escaped"))
						h.Close()
						t.Errorf("OpenFile(%s, %s) succeeded", p, flagName(flag))
						continue
					}
					switch {
					case mode == ReadOnly:
						wantErr(t, err, semfs.ErrReadOnly, p, dir)
					case flag&os.O_EXCL != 0 && errors.Is(err, semfs.ErrExist):
						// os.Root never follows a final link with
						// O_CREATE|O_EXCL: the link itself exists.
					default:
						wantErr(t, err, semfs.ErrPermission, p, dir)
					}
				}
			}
			if data, err := os.ReadFile(filepath.Join(outside, "victim")); err != nil || string(data) != "victim" {
				t.Fatalf("the victim outside holds %q, %v", data, err)
			}
			ents, err := os.ReadDir(outside)
			must(t, err)
			if len(ents) != 1 {
				t.Fatalf("a write open created a file outside the root: %v", ents)
			}
			if data, _ := os.ReadFile(filepath.Join(dir, "top.txt")); string(data) != "top" {
				t.Fatalf("/top.txt (the target of an absolute link) holds %q", data)
			}
		})
	}
}

// TestWriteOpenInsideLinks: links that stay inside the root are followed
// by write opens as os.Root follows them, with the fast path and without.
func TestWriteOpenInsideLinks(t *testing.T) {
	type step struct {
		path  string
		flag  int
		err   error  // nil: the open succeeds and writes "new"
		host  string // then the host file that must hold it
		other string // a host file whose contents must be unchanged ("" none)
	}
	steps := []step{
		{"/dangling", os.O_WRONLY | os.O_CREATE | os.O_EXCL, semfs.ErrExist, "", "real/f.txt"},
		{"/dangling", os.O_WRONLY | os.O_TRUNC, semfs.ErrNotExist, "", ""},
		{"/dangling", os.O_WRONLY | os.O_CREATE, nil, "real/made-through-link", ""},
		{"/rel.txt", os.O_WRONLY | os.O_TRUNC, nil, "real/f.txt", "top.txt"},
		{"/reldir/g.txt", os.O_WRONLY | os.O_CREATE | os.O_EXCL, nil, "real/g.txt", ""},
		{"/reldir/g.txt", os.O_WRONLY | os.O_CREATE | os.O_EXCL, semfs.ErrExist, "", ""},
		{"/top.txt", os.O_RDWR | os.O_CREATE | os.O_EXCL, semfs.ErrExist, "", "top.txt"},
		{"/loop1", os.O_WRONLY | os.O_CREATE, semfs.ErrInvalid, "", ""},
		{"/real", os.O_WRONLY | os.O_CREATE, semfs.ErrIsDir, "", ""},
		{"/real/f.txt/x", os.O_WRONLY | os.O_CREATE, semfs.ErrNotDir, "", ""},
		{"/nodir/x", os.O_WRONLY | os.O_CREATE, semfs.ErrNotExist, "", ""},
		{"/new.txt", os.O_RDWR | os.O_CREATE | os.O_TRUNC, nil, "new.txt", ""},
	}
	for _, mode := range []Mode{ReadWrite, rootOnly} {
		t.Run(mode.String(), func(t *testing.T) {
			dir, _ := writeLinkTree(t)
			f := openMode(t, dir, mode)
			for i, s := range steps {
				name := fmt.Sprintf("step %d: OpenFile(%s, %s)", i, s.path, flagName(s.flag))
				var before []byte
				if s.other != "" {
					before, _ = os.ReadFile(filepath.Join(dir, s.other))
				}
				h, err := f.OpenFile(ctx, s.path, s.flag, 0o640)
				if s.err != nil {
					if err == nil {
						h.Close()
						t.Fatalf("%s succeeded, want %v", name, s.err)
					}
					if !errors.Is(err, s.err) {
						t.Fatalf("%s: %v, want %v", name, err, s.err)
					}
				} else {
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if _, err := h.Write([]byte("new")); err != nil {
						t.Fatal(err)
					}
					must(t, h.Close())
					if data, err := os.ReadFile(filepath.Join(dir, s.host)); err != nil || string(data) != "new" {
						t.Fatalf("%s: host %s holds %q, %v", name, s.host, data, err)
					}
				}
				if s.other != "" {
					if after, _ := os.ReadFile(filepath.Join(dir, s.other)); !slices.Equal(before, after) {
						t.Fatalf("%s changed %s", name, s.other)
					}
				}
			}
			// A created file gets perm less the umask, as os.Root gives it.
			info, err := os.Stat(filepath.Join(dir, "new.txt"))
			must(t, err)
			if info.Mode().Perm()&^0o640 != 0 {
				t.Errorf("created with mode %v, want at most 0640", info.Mode())
			}
		})
	}
}
