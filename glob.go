package semfs

import (
	"context"
	"path"
	"strings"
)

// MatchPath reports whether the slash-separated name matches pattern, where
// "**" as a whole element matches any number of elements (zero or more),
// and "*", "?" and "[...]" match within one element as in path.Match.
// Leading slashes are ignored on both sides. A malformed pattern matches
// nothing.
func MatchPath(pattern, name string) bool {
	pp := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
	np := strings.Split(strings.TrimPrefix(name, "/"), "/")
	return matchElems(pp, np)
}

func matchElems(pp, np []string) bool {
	for len(pp) > 0 {
		if pp[0] == "**" {
			for k := 0; k <= len(np); k++ {
				if matchElems(pp[1:], np[k:]) {
					return true
				}
			}
			return false
		}
		if len(np) == 0 {
			return false
		}
		if ok, err := path.Match(pp[0], np[0]); !ok || err != nil {
			return false
		}
		pp, np = pp[1:], np[1:]
	}
	return len(np) == 0
}

// ValidPattern reports whether pattern is well formed for MatchPath.
func ValidPattern(pattern string) bool {
	for _, e := range strings.Split(strings.TrimPrefix(pattern, "/"), "/") {
		if e == "**" {
			continue
		}
		if _, err := path.Match(e, ""); err != nil {
			return false
		}
	}
	return true
}

// Glob returns, sorted, the regular files below root whose path relative
// to root matches pattern (see MatchPath).
func Glob(ctx context.Context, fsys FS, root, pattern string) ([]string, error) {
	r, err := Clean("glob", root)
	if err != nil {
		return nil, err
	}
	if !ValidPattern(pattern) {
		return nil, PathErr("glob", r, ErrInvalid, "malformed pattern "+printable(pattern)+"; use *, ?, [...] and ** (any number of directories)")
	}
	var out []string
	for p, err := range Files(ctx, fsys, r) {
		if err != nil {
			return nil, err
		}
		if MatchPath(pattern, Rel(p, r)) {
			out = append(out, p)
		}
	}
	return out, nil
}
