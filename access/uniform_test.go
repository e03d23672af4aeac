package access_test

import (
	"testing"

	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/memfs"
)

func TestRefuses(t *testing.T) {
	fsys := access.New(memfs.New(), access.Policy{Rules: []access.Rule{
		{Path: "/secret", Access: access.None},
		{Path: "/secret/open", Access: access.Read},
		{Path: "/**/*.key", Access: access.None},
		{Path: "/corpus", Access: access.Read},
	}})
	for _, c := range []struct {
		p         string
		at, below bool
	}{
		{"/", false, true},
		{"/secret", true, true},
		{"/secret/x", true, true},
		{"/secret/open", false, true}, // *.key below it
		{"/corpus", false, false},     // the later read rule covers every *.key below
		{"/notes/a.key", true, true},
		{"/notes/a.md", false, true}, // a directory named x.key could be below
	} {
		at, below := fsys.Refuses(c.p)
		if at != c.at || below != c.below {
			t.Errorf("Refuses(%s) = %v, %v; want %v, %v", c.p, at, below, c.at, c.below)
		}
	}
	lit := access.New(memfs.New(), access.Policy{Rules: []access.Rule{{Path: "/secret/**", Access: access.None}}})
	for _, c := range []struct {
		p         string
		at, below bool
	}{
		{"/", false, true},
		{"/notes", false, false},
		{"/secret", true, true}, // ** matches no element too
		{"/secret/a", true, true},
	} {
		at, below := lit.Refuses(c.p)
		if at != c.at || below != c.below {
			t.Errorf("/secret/** Refuses(%s) = %v, %v; want %v, %v", c.p, at, below, c.at, c.below)
		}
	}
	if at, below := access.New(memfs.New(), access.Policy{}).Refuses("/x"); at || below {
		t.Errorf("an open policy refuses /x: %v, %v", at, below)
	}
	if at, below := access.New(memfs.New(), access.Policy{Default: access.None}).Refuses("/x"); !at || !below {
		t.Errorf("a closed policy does not refuse /x: %v, %v", at, below)
	}
}
