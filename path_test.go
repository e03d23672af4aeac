package semfs

import (
	"errors"
	"io/fs"
	"math/rand/v2"
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

// cleanBefore is Clean as it was before the byte table (commit f2a5f9f),
// kept as the oracle the differential tests hold Clean to: same result,
// same error text, for every input.
func cleanBefore(op, name string) (string, error) {
	if reason := invalidReasonBefore(name); reason != "" {
		return "", PathErr(op, printable(name), ErrInvalid, reason)
	}
	switch name {
	case "/", ".":
		return "/", nil
	}
	if name[0] != '/' {
		return "/" + name, nil
	}
	return name, nil
}

func invalidReasonBefore(name string) string {
	switch name {
	case "":
		return `empty path; use "/" for the root of the tree`
	case "/", ".":
		return ""
	}
	if len(name) > MaxPathLen {
		return "path longer than 4096 bytes"
	}
	rel := name
	if rel[0] == '/' {
		rel = rel[1:]
	}
	if rel == "" || rel[len(rel)-1] == '/' {
		return `trailing slash; write the path without it, e.g. "/a/b"`
	}
	ascii := true
	start := 0
	for i := 0; i <= len(rel); i++ {
		if i < len(rel) {
			c := rel[i]
			switch {
			case c >= 0x80:
				ascii = false
				continue
			case c == 0:
				return "path contains a NUL byte"
			case c == '\\':
				return `path contains a backslash; semfs paths use "/" as the only separator`
			case c < 0x20 || c == 0x7f:
				return "path contains a control character"
			case c != '/':
				continue
			}
		}
		switch elem := rel[start:i]; {
		case elem == "":
			return `empty path element ("//"); write each directory once, e.g. "/a/b"`
		case elem == ".":
			return `"." element; write the path without it`
		case elem == "..":
			return `".." element; paths are rooted at the tree and cannot climb out of it — write the full path from "/"`
		case len(elem) > MaxNameLen:
			return "path element longer than 255 bytes"
		}
		start = i + 1
	}
	if !ascii && !utf8.ValidString(name) {
		return "path is not valid UTF-8"
	}
	return ""
}

// sameClean fails t unless Clean and cleanBefore agree on name.
func sameClean(t *testing.T, name string) {
	t.Helper()
	got, gerr := Clean("op", name)
	want, werr := cleanBefore("op", name)
	if got != want || (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
		t.Fatalf("Clean(%q) = %q, %v; before it was %q, %v", name, got, gerr, want, werr)
	}
	if ValidPath(name) != (werr == nil) {
		t.Fatalf("ValidPath(%q) = %v, disagrees with Clean before", name, ValidPath(name))
	}
}

// TestCleanDifferential compares Clean with the code it replaced on paths
// built from the pieces where they could differ: dots, slashes, control
// bytes, backslashes, broken and valid UTF-8, elements and paths at and
// past the length limits.
func TestCleanDifferential(t *testing.T) {
	pieces := []string{"a", "b.md", ".", "..", "...", "/", "//", "\x00", "\x01", "\x1f", "\x7f", "\\", " ", "~",
		"é", "码", "\xff", "\xc3", "\x80", "\xed\xa0\x80", strings.Repeat("x", 254), strings.Repeat("y", 255), "\t"}
	rng := rand.New(rand.NewPCG(3, 5))
	for range 200000 {
		var b strings.Builder
		if rng.IntN(2) == 0 {
			b.WriteByte('/')
		}
		for range rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
			if rng.IntN(2) == 0 {
				b.WriteByte('/')
			}
		}
		sameClean(t, b.String())
	}
	for _, n := range []int{MaxPathLen - 1, MaxPathLen, MaxPathLen + 1} {
		for _, elem := range []string{"abcdefgh", strings.Repeat("z", 200)} {
			p := strings.Repeat("/"+elem, n/(len(elem)+1)+1)[:n]
			sameClean(t, p)
			sameClean(t, p[1:])
			sameClean(t, p[:n-1]+"/")
			sameClean(t, p[:n-1]+"\x00")
		}
	}
	for c := range 256 {
		for _, p := range []string{string(rune(0)) + "x", "/a" + string([]byte{byte(c)}), string([]byte{byte(c)}), "/" + string([]byte{byte(c), '/', byte(c)})} {
			sameClean(t, p)
		}
	}
}

func FuzzCleanDifferential(f *testing.F) {
	for _, s := range []string{"/", ".", "", "/a/b", "a//b", "/a/", "/ä/\xff", "/a/.", "/a/..", "/..b", "\x7f", "/a\\b",
		"a/\x00/..", "../\x00", "/" + strings.Repeat("x", 256), "x/" + strings.Repeat("é", 128)} {
		f.Add(s)
	}
	f.Fuzz(sameClean)
}

// BenchmarkClean validates paths of the shapes the layers pass each other.
func BenchmarkClean(b *testing.B) {
	paths := []string{"/d3/f042.txt", "/projects/semfs/meta/visibility.go", "/a", "/notes/2026/11/30/meeting-notes-with-a-long-name.md"}
	for b.Loop() {
		for _, p := range paths {
			if _, err := Clean("stat", p); err != nil {
				b.Fatal(err)
			}
		}
	}
}
