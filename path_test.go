package semfs

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	good := map[string]string{
		"/": "/", ".": "/", "a": "/a", "/a": "/a", "a/b.md": "/a/b.md", "/a/b/c": "/a/b/c",
		"/ünï/码": "/ünï/码", "/.hidden": "/.hidden", "/a/..b": "/a/..b",
	}
	for in, want := range good {
		got, err := Clean("op", in)
		if err != nil || got != want {
			t.Errorf("Clean(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := []string{
		"", "..", "../x", "/../x", "a/../b", "a//b", "//", "/a/", "a/./b", "./a",
		"a\x00b", `a\b`, "a\nb", "\xff", strings.Repeat("x", 256), "/" + strings.Repeat("a/", 2100) + "a",
	}
	for _, in := range bad {
		_, err := Clean("op", in)
		var pe *fs.PathError
		if !errors.As(err, &pe) || !errors.Is(err, ErrInvalid) {
			t.Errorf("Clean(%q) = %v; want *fs.PathError wrapping ErrInvalid", in, err)
			continue
		}
		if strings.ContainsRune(pe.Path, 0) || len(pe.Path) > 210 {
			t.Errorf("Clean(%q): error path %q not sanitised", in, pe.Path)
		}
		if ValidPath(in) {
			t.Errorf("ValidPath(%q) = true", in)
		}
	}
}

func TestSplitJoin(t *testing.T) {
	cases := []struct{ p, dir, name string }{{"/", "/", ""}, {"/a", "/", "a"}, {"/a/b", "/a", "b"}}
	for _, c := range cases {
		d, n := Split(c.p)
		if d != c.dir || n != c.name {
			t.Errorf("Split(%q) = %q,%q", c.p, d, n)
		}
		if c.name != "" && Join(d, n) != c.p {
			t.Errorf("Join(%q,%q) != %q", d, n, c.p)
		}
	}
	if !HasPrefix("/a/b", "/a") || HasPrefix("/ab", "/a") || !HasPrefix("/x", "/") || !HasPrefix("/a", "/a") {
		t.Error("HasPrefix wrong")
	}
	if Rel("/a/b/c", "/a") != "/b/c" || Rel("/a", "/a") != "/" || Rel("/a", "/") != "/a" {
		t.Error("Rel wrong")
	}
	var got []string
	Ancestors("/a/b/c", func(d string) bool { got = append(got, d); return true })
	if strings.Join(got, ",") != "/,/a,/a/b" {
		t.Errorf("Ancestors = %v", got)
	}
}

func TestErrorShape(t *testing.T) {
	err := PathErr("open", "/x", ErrNotDir, "/a is a file")
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != "/x" || !errors.Is(err, ErrNotDir) || errors.Is(err, ErrNotExist) {
		t.Fatalf("bad shape: %#v", err)
	}
	if Sentinel(err) != ErrNotDir {
		t.Fatalf("Sentinel = %v", Sentinel(err))
	}
	if !strings.Contains(err.Error(), "/a is a file") {
		t.Fatalf("detail lost: %v", err)
	}
	re := RewritePath(err, "", "/mnt/x")
	if !errors.As(re, &pe) || pe.Path != "/mnt/x" || !errors.Is(re, ErrNotDir) {
		t.Fatalf("RewritePath: %v", re)
	}
}

// validBySpec is Clean's acceptance rule written plainly, element by
// element: the oracle for the one-pass check in invalidReason.
func validBySpec(name string) bool {
	if name == "/" || name == "." {
		return true
	}
	if name == "" || len(name) > MaxPathLen || !utf8.ValidString(name) {
		return false
	}
	for _, elem := range strings.Split(strings.TrimPrefix(name, "/"), "/") {
		if elem == "" || elem == "." || elem == ".." || len(elem) > MaxNameLen {
			return false
		}
		for _, c := range []byte(elem) {
			if c < 0x20 || c == 0x7f || c == '\\' {
				return false
			}
		}
	}
	return true
}

func FuzzValidPath(f *testing.F) {
	for _, s := range []string{"/", ".", "", "/a/b", "a//b", "/a/", "/ä/\xff", "/a/.", "/a/..", "/..b", "\x7f", "/a\\b",
		"/" + strings.Repeat("x", 255), "/" + strings.Repeat("x", 256), "/x/" + strings.Repeat("é", 128)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := ValidPath(name), validBySpec(name); got != want {
			t.Fatalf("ValidPath(%q) = %v, spec says %v (%s)", name, got, want, invalidReason(name))
		}
	})
}
