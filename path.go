package semfs

import (
	"strings"
	"unicode/utf8"
)

// Limits on paths, checked by Clean.
const (
	MaxNameLen = 255  // bytes in one path element
	MaxPathLen = 4096 // bytes in a whole path
)

// Clean validates name and returns its canonical form: rooted, with no
// trailing slash ("/" for the root). op names the operation for the error.
// A bad path fails with a *fs.PathError wrapping ErrInvalid, whose text says
// what is wrong and how to write the path instead.
func Clean(op, name string) (string, error) {
	if reason := invalidReason(name); reason != "" {
		return "", PathErr(op, printable(name), ErrInvalid, reason)
	}
	switch {
	case name[0] == '/':
		return name, nil
	case name == ".":
		return "/", nil
	}
	return "/" + name, nil
}

// MustClean is Clean for paths known to be valid (constants in code and
// tests); it panics on an invalid path.
func MustClean(name string) string {
	p, err := Clean("clean", name)
	if err != nil {
		panic(err)
	}
	return p
}

// ValidPath reports whether name is accepted by Clean.
func ValidPath(name string) bool { return invalidReason(name) == "" }

// Classes of path bytes, for invalidReason.
const (
	bytePlain   = iota // stands for itself in an element
	byteSlash          // ends an element
	byteHigh           // part of a multi-byte sequence, checked as UTF-8 at the end
	byteNUL            // rejected
	byteBack           // "\\", rejected
	byteControl        // other control characters, rejected
)

// pathByte holds the class of every byte value.
var pathByte = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c == 0:
			t[c] = byteNUL
		case c < 0x20 || c == 0x7f:
			t[c] = byteControl
		case c == '/':
			t[c] = byteSlash
		case c == '\\':
			t[c] = byteBack
		case c >= 0x80:
			t[c] = byteHigh
		}
	}
	return t
}()

// invalidReason says why name is not a valid path, or "" when it is. Every
// path of every call is checked, at each layer, so this is one pass over
// the bytes in which a plain byte costs one table lookup; the first problem
// from the left is the one reported.
func invalidReason(name string) string {
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
	start := 0 // start of the current element
	for i := 0; i < len(rel); i++ {
		class := pathByte[rel[i]]
		if class == bytePlain {
			continue
		}
		switch class {
		case byteSlash:
			if reason := elemReason(rel[start:i]); reason != "" {
				return reason
			}
			start = i + 1
		case byteHigh:
			ascii = false
		case byteNUL:
			return "path contains a NUL byte"
		case byteBack:
			return `path contains a backslash; semfs paths use "/" as the only separator`
		default:
			return "path contains a control character"
		}
	}
	if reason := elemReason(rel[start:]); reason != "" {
		return reason
	}
	if !ascii && !utf8.ValidString(name) {
		return "path is not valid UTF-8"
	}
	return ""
}

// elemReason says why elem is not a valid path element, or "" when it is.
// Its bytes were checked already.
func elemReason(elem string) string {
	switch len(elem) {
	case 0:
		return `empty path element ("//"); write each directory once, e.g. "/a/b"`
	case 1:
		if elem == "." {
			return `"." element; write the path without it`
		}
	case 2:
		if elem == ".." {
			return `".." element; paths are rooted at the tree and cannot climb out of it — write the full path from "/"`
		}
	}
	if len(elem) > MaxNameLen {
		return "path element longer than 255 bytes"
	}
	return ""
}

// printable shortens and sanitises a rejected path for an error message, so
// that a hostile name cannot flood or corrupt a log line.
func printable(name string) string {
	const max = 200
	var b strings.Builder
	for i, r := range name {
		if i >= max {
			b.WriteString("…")
			break
		}
		switch {
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Join joins a canonical directory path and a child name.
func Join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// Split splits a canonical path into its parent directory and final element.
// Split("/") is ("/", "").
func Split(p string) (dir, name string) {
	if p == "/" {
		return "/", ""
	}
	i := strings.LastIndexByte(p, '/')
	if i == 0 {
		return "/", p[1:]
	}
	return p[:i], p[i+1:]
}

// Dir returns the parent of a canonical path ("/" for "/").
func Dir(p string) string { d, _ := Split(p); return d }

// BaseName returns the final element of a canonical path ("/" for "/").
func BaseName(p string) string {
	if p == "/" {
		return "/"
	}
	_, n := Split(p)
	return n
}

// HasPrefix reports whether canonical path p is dir or lies below it.
func HasPrefix(p, dir string) bool {
	if dir == "/" || p == dir {
		return true
	}
	return len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}

// Rel returns p relative to dir as a canonical path ("/" when p == dir).
// p must satisfy HasPrefix(p, dir).
func Rel(p, dir string) string {
	if dir == "/" {
		return p
	}
	if p == dir {
		return "/"
	}
	return p[len(dir):]
}

// Ancestors calls fn for each proper ancestor of canonical path p from the
// root down ("/" first), stopping early if fn returns false.
func Ancestors(p string, fn func(dir string) bool) {
	if p == "/" {
		return
	}
	if !fn("/") {
		return
	}
	for i := 1; i < len(p); i++ {
		if p[i] == '/' && !fn(p[:i]) {
			return
		}
	}
}
