package semfs

import "testing"

func TestMatchPath(t *testing.T) {
	cases := []struct {
		pattern, name string
		want          bool
	}{
		{"*.md", "a.md", true},
		{"*.md", "d/a.md", false},
		{"**/*.md", "a.md", true},
		{"**/*.md", "d/e/a.md", true},
		{"/docs/**", "docs/x/y", true},
		{"docs/**", "docs", true},
		{"docs/**/z", "docs/z", true},
		{"docs/**/z", "docs/a/b/z", true},
		{"docs/**/z", "docs/a/b/y", false},
		{"a?c/[xy]", "abc/x", true},
		{"a?c/[xy]", "abc/z", false},
		{"[", "[", false},
	}
	for _, c := range cases {
		if got := MatchPath(c.pattern, c.name); got != c.want {
			t.Errorf("MatchPath(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
	if ValidPattern("a/[") || !ValidPattern("**/x*") {
		t.Error("ValidPattern wrong")
	}
}
