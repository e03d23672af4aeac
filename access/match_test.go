package access

import (
	"fmt"
	"math/rand/v2"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/semfs/semfs"
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

// The cached per-directory checks and the cached walk must decide exactly
// as a full walk of the path does.
func TestDirChecksAgreeWithWalk(t *testing.T) {
	cp, err := compile(Policy{
		Default: Read,
		Rules: []Rule{
			{Path: "/corpus", Access: Read},
			{Path: "/secrets", Access: None},
			{Path: "/work/**/*.locked.md", Access: Read},
			{Path: "/**/.git", Access: None},
			{Path: "/work/tmp/*", Access: None},
			{Path: "/work", Access: Write},
			{Path: "/work/*/build", Access: Read},
			{Path: "/**/*.key", Access: None},
			{Path: "/shared/??-*", Access: Write},
			{Path: "/a/**", Access: None},
			{Path: "/a/**/b/**/c", Access: Write},
			{Path: "/x/[ab]?", Access: Write},
			{Path: "/shared/a*/**", Access: None},
			{Path: "/y/*[kz]", Access: None},
			{Path: "/y/b?", Access: None},
			{Path: "/y/*ü", Access: None},
			{Path: "/y/a*x*c", Access: None},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{"/", "/corpus", "/secrets", "/work", "/work/tmp", "/work/p", "/work/p/build", "/work/.git",
		"/shared", "/a", "/a/b", "/a/q/b", "/a/b/x", "/x", "/work/x.locked.md", "/y"}
	names := []string{"a", "b", "c", "x.locked.md", ".git", "k.key", "build", "tmp", "ab-x", "abc-x", "corpus", "secrets",
		"work", "shared", "aa", "bz", "x", "ü", "xü", "k", "xz", "axbc", "axc", "b.", "key", "a.md", "y"}
	for _, d := range dirs {
		if want, wantRule := cp.decide(cp.walkSlow(d, nil)); cp.dir(d).self != want || cp.dir(d).selfRule != wantRule {
			t.Errorf("dir(%s).self = %v by %v, a full walk says %v by %v", d, cp.dir(d).self, cp.dir(d).selfRule, want, wantRule)
		}
		anyNone := false
		for _, n := range names {
			p := semfs.Join(d, n)
			want, _ := cp.decide(cp.walkSlow(p, nil))
			anyNone = anyNone || want == None
			if want == None && !cp.dir(d).someNone {
				t.Errorf("%s is None but its directory %s says no entry can be", p, d)
			}
			if want == None && !cp.dir(d).mayRefuse(n) {
				t.Errorf("%s is None but its directory %s says no entry ending in %q can be", p, d, n[len(n)-1])
			}
			if got := cp.child(cp.dir(d), n); got != want {
				t.Errorf("child(%s, %s) = %v, a full walk says %v", d, n, got, want)
			}
			wantRule := func() *rule { _, r := cp.decide(cp.walkSlow(p, nil)); return r }()
			if got, r := cp.access(p); got != want || r != wantRule {
				t.Errorf("access(%s) = %v by %v, a full walk says %v by %v", p, got, r, want, wantRule)
			}
			if no, r := cp.refused(p); no != (want == None) || (no && r != wantRule) {
				t.Errorf("refused(%s) = %v by %v, a full walk says %v by %v", p, no, r, want, wantRule)
			}
			if got, _ := cp.decide(cp.walk(p, nil)); got != want {
				t.Errorf("walk(%s) decides %v, a full walk says %v", p, got, want)
			}
		}
	}
	// Under a refusing default, an entry no check decides is None.
	strict, err := compile(Policy{Default: None, Rules: []Rule{{Path: "/work", Access: Write}, {Path: "/**/*.md", Access: Read}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"/", "/other", "/work"} {
		for _, n := range []string{"a", "a.md", "work", "x.key"} {
			want, _ := strict.decide(strict.walkSlow(semfs.Join(d, n), nil))
			if got := strict.child(strict.dir(d), n); got != want {
				t.Errorf("strict: child(%s, %s) = %v, a full walk says %v", d, n, got, want)
			}
			if no, _ := strict.refused(semfs.Join(d, n)); no != (want == None) {
				t.Errorf("strict: refused(%s/%s) = %v, a full walk says %v", d, n, no, want)
			}
			if want == None && !strict.dir(d).mayRefuse(n) {
				t.Errorf("strict: %s/%s is None but its directory says it cannot be", d, n)
			}
		}
	}
	small, err := compile(Policy{Rules: []Rule{{Path: "/corpus", Access: Read}, {Path: "/secrets", Access: None}}})
	if err != nil {
		t.Fatal(err)
	}
	if small.dir("/corpus").someNone || small.dir("/corpus/a").someNone || !small.dir("/").someNone {
		t.Error("someNone: want false under /corpus, true at / (which holds /secrets)")
	}
}

// The directory cache stays right when it overflows and starts over, with
// several goroutines using it.
func TestDirCacheOverflowConcurrent(t *testing.T) {
	cp, err := compile(Policy{Default: None, Rules: []Rule{
		{Path: "/work", Access: Write},
		{Path: "/**/*.key", Access: None},
		{Path: "/work/*/ro", Access: Read},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range maxCachedDirs * 3 / 4 {
				dir := fmt.Sprintf("/work/d%d-%d", g, i)
				for _, name := range []string{"a.key", "ro", "x"} {
					p := semfs.Join(dir, name)
					want, _ := cp.decide(cp.walkSlow(p, nil))
					if got, _ := cp.access(p); got != want {
						t.Errorf("access(%s) = %v, want %v", p, got, want)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

// Rule patterns mean what semfs.MatchPath means (the contract's one glob
// syntax): a rule covers a path when its pattern matches the path or one
// of its ancestors. Checked exhaustively over small patterns and paths
// (below the root).
func TestRulesAgreeWithMatchPath(t *testing.T) {
	elems := []string{"a", "b", "*", "?", "**", "a*", "*b", "[ab]", "a?"}
	names := []string{"a", "b", "ab", "ba", "c"}
	var patterns []string
	var grow func(prefix string, depth int)
	grow = func(prefix string, depth int) {
		if prefix != "" {
			patterns = append(patterns, prefix)
		}
		if depth == 3 {
			return
		}
		for _, e := range elems {
			grow(prefix+"/"+e, depth+1)
		}
	}
	grow("", 0)
	var paths []string
	var walk func(p string, depth int)
	walk = func(p string, depth int) {
		paths = append(paths, p)
		if depth == 3 {
			return
		}
		for _, n := range names {
			walk(semfs.Join(p, n), depth+1)
		}
	}
	walk("/", 0)
	for _, pat := range patterns {
		if !semfs.ValidPattern(pat) {
			t.Fatalf("pattern %q invalid", pat)
		}
		cp, err := compile(Policy{Default: None, Rules: []Rule{{Path: pat, Access: Read}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if p == "/" {
				// The root has no elements; MatchPath's split sees one
				// empty element there, which "*" matches. The root is
				// never refused anyway (it always exists).
				continue
			}
			want := semfs.MatchPath(pat, p)
			semfs.Ancestors(p, func(dir string) bool {
				want = want || (dir != "/" && semfs.MatchPath(pat, dir))
				return !want
			})
			if got, _ := cp.access(p); (got == Read) != want {
				t.Errorf("rule %q covers %s: %v, semfs.MatchPath says %v", pat, p, got == Read, want)
			}
		}
	}
}

// canonical is a shortcut past semfs.Clean: whatever it accepts, Clean
// must return unchanged.
func TestCanonical(t *testing.T) {
	long := strings.Repeat("n", semfs.MaxNameLen)
	for _, c := range []struct {
		p    string
		want bool
	}{
		{"/a", true}, {"/work/proj/src/f042.md", true}, {"/a b/c~d/.e/..f/...", true}, {"/" + long, true},
		{"/" + long + "n", false}, {"/", false}, {"", false}, {".", false}, {"a/b", false}, {"/a/", false},
		{"//a", false}, {"/a//b", false}, {"/a/./b", false}, {"/a/../b", false}, {"/..", false}, {"/.", false},
		{"/a\\b", false}, {"/a\x00", false}, {"/a\tb", false}, {"/a\x7f", false}, {"/ü", false},
		{"/" + strings.Repeat("a/", semfs.MaxPathLen/2), false}, {"a/b/c", false}, {".", false},
	} {
		slash, ok := canonical(c.p)
		if ok != c.want {
			t.Errorf("canonical(%q) = %v, want %v", c.p, ok, c.want)
		}
		p, err := semfs.Clean("stat", c.p)
		if ok && (err != nil || p != c.p || slash != strings.LastIndexByte(p, '/')) {
			t.Errorf("canonical(%q) = %d, true but semfs.Clean gives %q, %v", c.p, slash, p, err)
		}
		if got, gotSlash, gotErr := cleanAt("stat", c.p); got != p || (gotErr == nil) != (err == nil) ||
			(err == nil && gotSlash != strings.LastIndexByte(p, '/')) {
			t.Errorf("cleanAt(%q) = %q, %d, %v; semfs.Clean gives %q, %v", c.p, got, gotSlash, gotErr, p, err)
		}
		if got, gotErr := clean("stat", c.p); got != p || (gotErr == nil) != (err == nil) {
			t.Errorf("clean(%q) = %q, %v; semfs.Clean gives %q, %v", c.p, got, gotErr, p, err)
		}
	}
}

// Random paths of printable ASCII, "/" and "." heavy: whatever canonical
// accepts, semfs.Clean returns unchanged (run on every test run; the fuzz
// test below searches further).
func TestCanonicalRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for range 20000 {
		b := make([]byte, 2+r.IntN(40))
		for i := range b {
			switch r.IntN(4) {
			case 0:
				b[i] = '/'
			case 1:
				b[i] = '.'
			default:
				b[i] = byte(0x20 + r.IntN(0x5f))
			}
		}
		b[0] = '/'
		p := string(b)
		slash, ok := canonical(p)
		if !ok {
			continue
		}
		accepted++
		if got, err := semfs.Clean("stat", p); err != nil || got != p || slash != strings.LastIndexByte(p, '/') {
			t.Fatalf("canonical(%q) = %d, true but semfs.Clean gives %q, %v", p, slash, got, err)
		}
	}
	if accepted < 3000 {
		t.Errorf("only %d of 20000 random paths accepted; the test checks too little", accepted)
	}
}

func FuzzCanonical(f *testing.F) {
	for _, p := range []string{"/a", "/a/b.md", "/a/../b", "/a//b", "/.", "a"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		slash, ok := canonical(p)
		if !ok {
			return
		}
		if got, err := semfs.Clean("stat", p); err != nil || got != p || slash != strings.LastIndexByte(p, '/') {
			t.Errorf("canonical(%q) = %d, true but semfs.Clean gives %q, %v", p, slash, got, err)
		}
	})
}
