package access

import (
	"path"
	"strings"
	"testing"
)

// wildMatch must agree with path.Match on every pattern it handles.
func TestWildMatchAgreesWithPathMatch(t *testing.T) {
	pats := []string{"*", "?", "*.md", "*.locked.md", "a*", "a*b", "*a*b*", "??-*", "a?c", "*?", "?*?", "**x", "ü*", "*ü", "?ü?", "a*a*a*b", ""}
	names := []string{"", "a", "b", "ab", "aab", "abab", "x.md", "x.locked.md", "locked.md", ".md", "ab-cd", "abc", "axc", "ac",
		"ü", "üx", "xü", "aüa", "üüü", "aaaaaaaab", "aaaaaaaa", "x", "xx", "a-b"}
	for _, p := range pats {
		for _, n := range names {
			want, err := path.Match(p, n)
			if err != nil {
				t.Fatal(err)
			}
			if got := wildMatch(p, n); got != want {
				t.Errorf("wildMatch(%q, %q) = %v, path.Match says %v", p, n, got, want)
			}
			if p != "" && strings.ContainsAny(p, "*?") {
				if got := wildSeg(p).match(n); got != want {
					t.Errorf("wildSeg(%q).match(%q) = %v, path.Match says %v", p, n, got, want)
				}
			}
		}
	}
}

func FuzzWildMatch(f *testing.F) {
	f.Add("*.md", "a.md")
	f.Add("a*?b", "aüxb")
	f.Fuzz(func(t *testing.T, pat, name string) {
		for _, c := range []byte(pat) {
			if c == '[' || c == '\\' || c == '/' {
				return
			}
		}
		for _, c := range []byte(name) {
			if c == '/' {
				return
			}
		}
		want, err := path.Match(pat, name)
		if err != nil {
			return
		}
		if got := wildMatch(pat, name); got != want {
			t.Errorf("wildMatch(%q, %q) = %v, path.Match says %v", pat, name, got, want)
		}
		if strings.ContainsAny(pat, "*?") {
			if got := wildSeg(pat).match(name); got != want {
				t.Errorf("wildSeg(%q).match(%q) = %v, path.Match says %v", pat, name, got, want)
			}
		}
	})
}
