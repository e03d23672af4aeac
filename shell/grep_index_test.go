package shell

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
)

// countingFS counts the reads of each file and can answer GrepCandidates
// with a given function.
type countingFS struct {
	semfs.FS
	mu    sync.Mutex
	reads map[string]int
	cands func(root, pattern string, opts semfs.GrepOptions) ([]string, bool)
}

func (c *countingFS) count(name string) {
	c.mu.Lock()
	c.reads[name]++
	c.mu.Unlock()
}

func (c *countingFS) Open(ctx context.Context, name string) (fs.File, error) {
	c.count(name)
	return c.FS.Open(ctx, name)
}

func (c *countingFS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	c.count(name)
	return semfs.ReadFile(ctx, c.FS, name)
}

// grepFS is countingFS with the GrepCandidates capability.
type grepFS struct{ *countingFS }

func (g grepFS) GrepCandidates(ctx context.Context, root, pattern string, opts semfs.GrepOptions) ([]string, bool, error) {
	paths, ok := g.cands(root, pattern, opts)
	return paths, ok, nil
}

var _ semfs.GrepCandidatesFS = grepFS{}

// bruteCandidates returns exactly the files below root whose contents
// match pattern, read straight from the inner FS (not counted).
func bruteCandidates(inner semfs.FS) func(string, string, semfs.GrepOptions) ([]string, bool) {
	return func(root, pattern string, opts semfs.GrepOptions) ([]string, bool) {
		if opts.IgnoreCase {
			pattern = "(?i)" + pattern
		}
		re, err := regexp.Compile("(?m)" + pattern)
		if err != nil {
			return nil, false
		}
		var out []string
		for p, err := range semfs.Files(context.Background(), inner, root) {
			if err != nil {
				return nil, false
			}
			data, _ := semfs.ReadFile(context.Background(), inner, p)
			if re.Match(data) {
				out = append(out, p)
			}
		}
		return out, true
	}
}

// trigramIndex is a small case-folded trigram index built for the tests
// and benchmarks: posting lists of file numbers per trigram.
type trigramIndex struct {
	files []string
	post  map[uint32][]int32
}

func tri(s string, i int) uint32 { return uint32(s[i])<<16 | uint32(s[i+1])<<8 | uint32(s[i+2]) }

func newTrigramIndex(t testing.TB, fsys semfs.FS) *trigramIndex {
	ix := &trigramIndex{post: map[uint32][]int32{}}
	var codes []uint32
	for p, err := range semfs.Files(context.Background(), fsys, "/") {
		if err != nil {
			t.Fatal(err)
		}
		data, _ := semfs.ReadFile(context.Background(), fsys, p)
		id := int32(len(ix.files))
		ix.files = append(ix.files, p)
		low := bytes.ToLower(data)
		codes = codes[:0]
		for i := 0; i+3 <= len(low); i++ {
			codes = append(codes, uint32(low[i])<<16|uint32(low[i+1])<<8|uint32(low[i+2]))
		}
		slices.Sort(codes)
		for _, c := range slices.Compact(codes) {
			ix.post[c] = append(ix.post[c], id)
		}
	}
	return ix
}

// literals returns, for a pattern, alternatives of required literal sets:
// the pattern can only match text containing every literal of at least
// one alternative. ok is false when some alternative has no literal of
// three bytes or more.
func literals(re *syntax.Regexp) ([][]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		s := strings.ToLower(string(re.Rune))
		return [][]string{{s}}, len(s) >= 3
	case syntax.OpConcat:
		var lits []string
		var cur strings.Builder
		flush := func() {
			if cur.Len() >= 3 {
				lits = append(lits, cur.String())
			}
			cur.Reset()
		}
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral {
				cur.WriteString(strings.ToLower(string(sub.Rune)))
				continue
			}
			flush()
			if sub.Op == syntax.OpCapture || sub.Op == syntax.OpAlternate {
				if alts, ok := literals(sub); ok && len(alts) == 1 {
					lits = append(lits, alts[0]...)
				}
			}
		}
		flush()
		return [][]string{lits}, len(lits) > 0
	case syntax.OpCapture:
		return literals(re.Sub[0])
	case syntax.OpAlternate:
		var out [][]string
		for _, sub := range re.Sub {
			alts, ok := literals(sub)
			if !ok {
				return nil, false
			}
			out = append(out, alts...)
		}
		return out, true
	}
	return nil, false
}

func (ix *trigramIndex) candidates(root, pattern string, opts semfs.GrepOptions) ([]string, bool) {
	flags := syntax.Perl
	if opts.IgnoreCase {
		flags |= syntax.FoldCase
	}
	re, err := syntax.Parse(strings.TrimPrefix(pattern, "(?m)"), flags)
	if err != nil {
		return nil, false
	}
	alts, ok := literals(re.Simplify())
	if !ok {
		return nil, false
	}
	set := map[int32]bool{}
	for _, lits := range alts {
		var ids []int32
		first := true
		for _, l := range lits {
			for i := 0; i+3 <= len(l); i++ {
				p := ix.post[tri(l, i)]
				if first {
					ids = slices.Clone(p)
					first = false
					continue
				}
				ids = intersect(ids, p)
			}
		}
		for _, id := range ids {
			set[id] = true
		}
	}
	var out []string
	for id := range set {
		if p := ix.files[id]; semfs.HasPrefix(p, root) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, true
}

func intersect(a, b []int32) []int32 {
	out := a[:0]
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

var grepIndexCases = []string{
	"grep -r hello", "grep -rn hello .", "grep -rl hello docs", "grep -rL hello", "grep -rc hello",
	"grep -ri HELLO", "grep -rw hello", "grep -rx 'deep hello'", "grep -rE 'alpha|gamma'", "grep -rF 'a.b'",
	"grep -rn 'fmt\\.Println'", "grep -ro 'hel*o' src", "grep -rv e docs", "grep -r ''", "grep -rc zzzz",
	"grep -r --include='*.go' package", "grep -rE '[0-9]{2}'", "grep -rq hello", "grep -rm1 line", "grep -rnC1 match",
	"grep -r 'caf'", "grep -rE '(hello|apple) (world|banana)'", "grep -rl -e foo -e bar",
}

// TestIndexedGrepMatchesScan checks that grep -r gives the same bytes and
// status with a brute-force and a trigram GrepCandidatesFS as with a plain
// scan, and that with a prefilter only candidate files are read.
func TestIndexedGrepMatchesScan(t *testing.T) {
	mem := loadMem(t, diffTree)
	ix := newTrigramIndex(t, mem)
	for _, tc := range grepIndexCases {
		plain := New(mem, Options{})
		wantOut, wantErr, wantCode := run(t, plain, tc)
		for _, kind := range []string{"brute", "trigram"} {
			cfs := &countingFS{FS: mem, reads: map[string]int{}}
			var cands []string
			var asked bool
			inner := bruteCandidates(mem)
			if kind == "trigram" {
				inner = ix.candidates
			}
			cfs.cands = func(root, pattern string, opts semfs.GrepOptions) ([]string, bool) {
				asked = true
				c, ok := inner(root, pattern, opts)
				if ok {
					cands = append(cands, c...)
				}
				return c, ok
			}
			gfs := grepFS{cfs}
			tree, err := NewTree(context.Background(), gfs)
			if err != nil {
				t.Fatal(err)
			}
			for _, opts := range []Options{{}, {View: tree.View(semfs.Principal{})}} {
				clear(cfs.reads)
				cands, asked = nil, false
				s := New(gfs, opts)
				out, errOut, code := run(t, s, tc)
				if out != wantOut || code != wantCode || errOut != wantErr {
					t.Errorf("%s [%s view=%v]: got %q/%q/%d, scan gave %q/%q/%d", tc, kind, opts.View != nil, out, errOut, code, wantOut, wantErr, wantCode)
				}
				if asked && cands != nil {
					for p := range cfs.reads {
						if !slices.Contains(cands, p) {
							t.Errorf("%s [%s]: read %s, which is not a candidate", tc, kind, p)
						}
					}
				}
			}
		}
	}
	// A selective pattern reads only the files that contain it.
	cfs := &countingFS{FS: mem, reads: map[string]int{}, cands: bruteCandidates(mem)}
	s := New(grepFS{cfs}, Options{})
	if out, _, _ := run(t, s, "grep -rl 'deep hello'"); out != "docs/deep/nested/x.md\n" {
		t.Fatalf("got %q", out)
	}
	if len(cfs.reads) != 1 || cfs.reads["/docs/deep/nested/x.md"] != 1 {
		t.Fatalf("reads %v, want only the one candidate", cfs.reads)
	}
}

func TestReadCacheIsBoundedAndValidated(t *testing.T) {
	c := newReadCache(100)
	mk := func(size int64) fs.FileInfo { return &fileInfo{name: "x", size: size} }
	c.put("/a", mk(20), make([]byte, 20))
	c.put("/b", mk(20), make([]byte, 20))
	if _, ok := c.get("/a", mk(20)); !ok {
		t.Fatal("miss on a cached file")
	}
	if _, ok := c.get("/a", mk(21)); ok {
		t.Fatal("hit although the size changed")
	}
	for i := range 10 {
		c.put(string(rune('c'+i)), mk(20), make([]byte, 20))
	}
	if c.used > 100 || len(c.items) > 5 {
		t.Fatalf("cache holds %d bytes in %d items", c.used, len(c.items))
	}
	if _, ok := c.get("/b", mk(20)); ok {
		t.Fatal("the least recently used entry survived")
	}
}

// goroot loads GOROOT/src into memfs once per process.
var goroot struct {
	once sync.Once
	mem  *memfs.FS
	dir  string
	ix   *trigramIndex
}

func loadGoroot(b *testing.B) {
	goroot.once.Do(func() {
		dir := filepath.Join(runtime.GOROOT(), "src")
		mem := memfs.New()
		ctx := context.Background()
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			rel, _ := filepath.Rel(dir, p)
			data, err := os.ReadFile(p)
			if err != nil || !semfs.ValidPath(filepath.ToSlash(rel)) {
				return nil
			}
			return semfs.WriteFile(ctx, mem, "/"+filepath.ToSlash(rel), data, 0o644)
		})
		goroot.mem, goroot.dir = mem, dir
		goroot.ix = newTrigramIndex(b, mem)
	})
}

// BenchmarkGrepGOROOT runs grep over GOROOT/src: semfs sh on memfs with a
// plain scan and with a trigram prefilter, against ripgrep and GNU grep on
// the same files on disk (warm page cache), side by side.
func BenchmarkGrepGOROOT(b *testing.B) {
	loadGoroot(b)
	b.ResetTimer()
	type pat struct{ name, sh, host string }
	pats := []pat{
		{"literal", "grep -rn FormatFloat .", "FormatFloat"},
		{"regex", "grep -rnE 'func \\([a-z]+ \\*[A-Z][a-zA-Z]+\\) Unwrap\\(' .", "func \\([a-z]+ \\*[A-Z][a-zA-Z]+\\) Unwrap\\("},
		{"unselective", "grep -rnE 'return (nil|err)$' .", "return (nil|err)$"},
	}
	ctx := context.Background()
	scanTree, _ := NewTree(ctx, goroot.mem, TreeOptions{CacheBytes: 1 << 30})
	ixFS := grepFS{&countingFS{FS: goroot.mem, reads: map[string]int{}, cands: goroot.ix.candidates}}
	ixTree, _ := NewTree(ctx, ixFS, TreeOptions{CacheBytes: 1 << 30})
	for _, p := range pats {
		// The reference answer: a plain scan without a view.
		var ref bytes.Buffer
		if code, err := New(goroot.mem, Options{Limits: Limits{MaxOutput: -1}}).Run(ctx, p.sh, nil, &ref, nil); code > 1 || err != nil {
			b.Fatal(code, err)
		}
		want := bytes.Count(ref.Bytes(), []byte{'\n'})
		b.Run(p.name+"/semfs-scan", func(b *testing.B) {
			s := New(goroot.mem, Options{View: scanTree.View(semfs.Principal{}), Limits: Limits{MaxOutput: -1}})
			var got int
			for range b.N {
				var out bytes.Buffer
				if code, err := s.Run(ctx, p.sh, nil, &out, nil); code > 1 || err != nil {
					b.Fatal(code, err)
				}
				got = bytes.Count(out.Bytes(), []byte{'\n'})
			}
			if got != want {
				b.Fatalf("scan printed %d lines, reference %d", got, want)
			}
			b.ReportMetric(float64(got), "lines")
		})
		b.Run(p.name+"/semfs-trigram", func(b *testing.B) {
			s := New(ixFS, Options{View: ixTree.View(semfs.Principal{}), Limits: Limits{MaxOutput: -1}})
			var got int
			for range b.N {
				var out bytes.Buffer
				if code, err := s.Run(ctx, p.sh, nil, &out, nil); code > 1 || err != nil {
					b.Fatal(code, err)
				}
				got = bytes.Count(out.Bytes(), []byte{'\n'})
			}
			if got != want {
				b.Fatalf("trigram run printed %d lines, scan %d", got, want)
			}
			b.ReportMetric(float64(got), "lines")
		})
		for _, tool := range []struct{ name, bin string }{{"rg", "rg"}, {"gnu-grep", "grep"}} {
			b.Run(p.name+"/"+tool.name, func(b *testing.B) {
				if _, err := exec.LookPath(tool.bin); err != nil {
					b.Skipf("%s not installed", tool.bin)
				}
				args := []string{"-rnE", p.host, "."}
				if tool.bin == "rg" {
					args = []string{"-n", "--no-heading", "-uuu", p.host, "."}
				}
				var lines int
				for range b.N {
					cmd := exec.Command(tool.bin, args...)
					cmd.Dir = goroot.dir
					out, _ := cmd.Output()
					lines = bytes.Count(out, []byte{'\n'})
				}
				if lines != want {
					b.Fatalf("%s printed %d lines, semfs %d", tool.bin, lines, want)
				}
				b.ReportMetric(float64(lines), "lines")
			})
		}
	}
}

// BenchmarkFindGOROOT runs find . -name '*.go' | wc -l over GOROOT/src.
func BenchmarkFindGOROOT(b *testing.B) {
	loadGoroot(b)
	b.ResetTimer()
	ctx := context.Background()
	tree, _ := NewTree(ctx, goroot.mem)
	s := New(goroot.mem, Options{View: tree.View(semfs.Principal{})})
	var out bytes.Buffer
	for range b.N {
		out.Reset()
		if code, err := s.Run(ctx, "find . -name '*.go' | wc -l", nil, &out, nil); code != 0 || err != nil {
			b.Fatal(code, err)
		}
	}
	b.StopTimer()
	cmd := exec.Command("bash", "-c", "find . -name '*.go' | wc -l")
	cmd.Dir = goroot.dir
	if host, err := cmd.Output(); err == nil && string(host) != out.String() {
		b.Fatalf("semfs counted %q, GNU find %q", out.String(), host)
	}
}

func TestRequiredLiteral(t *testing.T) {
	for src, want := range map[string]string{
		"FormatFloat":                  "FormatFloat",
		`return (nil|err)$`:            "return ",
		`func \([a-z]+ \*[A-Z]+\) Unw`: "func (",
		`(?i)hello`:                    "",
		`ab`:                           "",
		`foo|barbaz`:                   "",
		`(hello) world`:                " world",
	} {
		if got := string(requiredLiteral(src)); got != want {
			t.Errorf("%q: got %q, want %q", src, got, want)
		}
	}
}

// unlistableFS fails to list one directory, as a permission error would.
type unlistableFS struct {
	semfs.FS
	dir string
}

func (u unlistableFS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	if name == u.dir {
		return nil, semfs.PathErr("readdir", name, semfs.ErrPermission, "")
	}
	return u.FS.ReadDir(ctx, name)
}

func TestGrepReportsUnlistableDirectories(t *testing.T) {
	mem := memfs.FromMap(map[string]string{"/a/x.md": "hello\n", "/b/y.md": "hello\n", "/c/z.md": "hello\n"})
	s := New(unlistableFS{mem, "/b"}, Options{})
	out, stderr, code := run(t, s, "grep -r hello")
	if out != "a/x.md:hello\nc/z.md:hello\n" || stderr != "grep: b: Permission denied\n" || code != 2 {
		t.Fatalf("got %q, stderr %q, exit %d", out, stderr, code)
	}
}

func TestDuFindReportUnlistableDirectories(t *testing.T) {
	mem := memfs.FromMap(map[string]string{"/a/x.md": "hello\n", "/b/y.md": "hello\n"})
	s := New(unlistableFS{mem, "/b"}, Options{})
	if _, stderr, code := run(t, s, "du -s ."); code != 1 || stderr != "du: cannot read directory './b': Permission denied\n" {
		t.Fatalf("du: stderr %q exit %d", stderr, code)
	}
	if out, stderr, code := run(t, s, "find ."); out != ".\n./a\n./a/x.md\n./b\n" || code != 1 || stderr != "find: ‘./b’: Permission denied\n" {
		t.Fatalf("find: %q %q %d", out, stderr, code)
	}
}
