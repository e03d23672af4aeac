package shell

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
)

// groupFS is memfs with per-file visibility groups, as a metadata layer
// would report them.
type groupFS struct {
	*memfs.FS
	groups map[string][]string
}

func (g *groupFS) Meta(ctx context.Context, name string) (semfs.Meta, error) {
	info, err := g.FS.Stat(ctx, name)
	if err != nil {
		return semfs.Meta{}, err
	}
	return semfs.Meta{Path: name, Tags: semfs.Tags{Groups: g.groups[name]}, Size: info.Size()}, nil
}

func (g *groupFS) SetTags(ctx context.Context, name string, tags semfs.Tags) error {
	if _, err := g.FS.Stat(ctx, name); err != nil {
		return err
	}
	g.groups[name] = tags.Groups
	return nil
}

var _ semfs.MetaFS = (*groupFS)(nil)

// seed 003's example tree.
func docsTree(t testing.TB) *groupFS {
	mem := loadMem(t, map[string]string{
		"/auth/oauth.mdx":             "OAuth flow\nbilling is elsewhere\n",
		"/auth/api-keys.mdx":          "API keys\n",
		"/internal/billing.mdx":       "internal billing secrets\n",
		"/api-reference/users.mdx":    "GET /users\n",
		"/api-reference/payments.mdx": "POST /payments billing\n",
		"/empty/":                     "",
	})
	return &groupFS{FS: mem, groups: map[string][]string{
		"/internal/billing.mdx":       {"admin", "billing"},
		"/api-reference/payments.mdx": {"billing"},
	}}
}

func TestViewPrunesHiddenFilesEverywhere(t *testing.T) {
	fsys := docsTree(t)
	tree, err := NewTree(context.Background(), fsys)
	if err != nil {
		t.Fatal(err)
	}
	hits := []semfs.SearchHit{{Path: "/internal/billing.mdx", Line: 1, Snippet: "internal billing secrets"}, {Path: "/auth/oauth.mdx", Line: 2, Snippet: "billing is elsewhere"}}
	search := func(ctx context.Context, req semfs.SearchRequest, fn func(semfs.SearchHit) error) (string, error) {
		for _, h := range hits {
			if err := fn(h); err != nil {
				return "", err
			}
		}
		return "", nil
	}
	public := New(fsys, Options{View: tree.View(semfs.Principal{ID: "anon"}), Search: search})
	cases := []struct{ script, want string }{
		{"ls /", "api-reference\nauth\nempty\n"},
		{"ls /api-reference", "users.mdx\n"},
		{"find / -type f", "/api-reference/users.mdx\n/auth/api-keys.mdx\n/auth/oauth.mdx\n"},
		{"grep -r billing /", "/auth/oauth.mdx:billing is elsewhere\n"},
		{"grep -rc billing / | wc -l", "3\n"},
		{"cat /internal/billing.mdx; echo $?", "1\n"},
		{"cat /api-reference/payments.mdx 2>&1", "cat: /api-reference/payments.mdx: No such file or directory\n"},
		{"ls /internal 2>&1; echo $?", "ls: cannot access '/internal': No such file or directory\n2\n"},
		{"echo /*/*.mdx", "/api-reference/users.mdx /auth/api-keys.mdx /auth/oauth.mdx\n"},
		{"test -e /internal/billing.mdx || echo absent", "absent\n"},
		{"cd /internal 2>/dev/null || echo nocd", "nocd\n"},
		{"stat -c %n /api-reference/payments.mdx 2>/dev/null; echo $?", "1\n"},
		{"find / | wc -l", "7\n"},
		{"du -s /", "28\t/\n"},
		{"tree /", "/\n├── api-reference\n│\u00a0\u00a0 └── users.mdx\n├── auth\n│\u00a0\u00a0 ├── api-keys.mdx\n│\u00a0\u00a0 └── oauth.mdx\n└── empty\n\n4 directories, 3 files\n"},
		{"search billing", "/auth/oauth.mdx:2: billing is elsewhere\n"},
		{"cat payments.mdx 2>&1", "cat: payments.mdx: No such file or directory\n"},
		{"cat billing.mdx 2>&1", "cat: billing.mdx: No such file or directory\n"},
		{"{ echo x > /internal/new.md; } 2>&1; echo $?", "semfs: /internal/new.md: No such file or directory\n1\n"},
	}
	for _, tc := range cases {
		out, _, _ := run(t, public, tc.script)
		if out != tc.want {
			t.Errorf("public %q:\n got %q\nwant %q", tc.script, out, tc.want)
		}
	}

	// Writes cannot reach hidden files or what is below hidden directories.
	for _, script := range []string{"echo x > /api-reference/payments.mdx", "echo x >> /api-reference/payments.mdx", "mkdir -p /internal/sub", "mkdir /internal"} {
		if _, stderr, code := run(t, public, script); code == 0 || !strings.Contains(stderr, "Permission denied") {
			t.Errorf("%q: exit %d, stderr %q", script, code, stderr)
		}
	}
	if data, _ := semfs.ReadFile(context.Background(), fsys, "/api-reference/payments.mdx"); string(data) != "POST /payments billing\n" {
		t.Fatalf("a hidden file was overwritten: %q", data)
	}
	if out, _, code := run(t, public, "echo new > /auth/new.mdx && ls /auth"); code != 0 || out != "api-keys.mdx\nnew.mdx\noauth.mdx\n" {
		t.Fatalf("a visible write: %q %d", out, code)
	}

	billing := New(fsys, Options{View: tree.View(semfs.Principal{Groups: []string{"billing"}})})
	for _, tc := range []struct{ script, want string }{
		{"ls /", "api-reference\nauth\nempty\ninternal\n"},
		{"ls /api-reference", "payments.mdx\nusers.mdx\n"},
		{"grep -rl billing /", "/api-reference/payments.mdx\n/auth/oauth.mdx\n/internal/billing.mdx\n"},
		{"cat /auth/new.mdx 2>&1", "cat: /auth/new.mdx: No such file or directory\n"}, // a snapshot: others' writes need a new Tree
		{"cat payments.mdx 2>&1", "cat: payments.mdx: No such file or directory (did you mean ./api-reference/payments.mdx?)\n"},
	} {
		out, _, _ := run(t, billing, tc.script)
		if out != tc.want {
			t.Errorf("billing %q:\n got %q\nwant %q", tc.script, out, tc.want)
		}
	}
	admin := New(fsys, Options{View: tree.View(semfs.Principal{Admin: true})})
	if out, _, _ := run(t, admin, "find / -type f | wc -l"); out != "5\n" {
		t.Errorf("admin sees %q files", out)
	}
	if tree.View(semfs.Principal{Groups: []string{"billing"}}) != tree.View(semfs.Principal{Groups: []string{"billing"}}) {
		t.Error("views are not cached per group set")
	}
}

// bigTree builds a tree of n files in 100-file directories, one in ten
// visible only to group "g<k>" (k = 0..9).
func bigTree(t testing.TB, n int) *groupFS {
	ctx := context.Background()
	mem := memfs.New()
	groups := map[string][]string{}
	for i := range n {
		p := fmt.Sprintf("/site%02d/section%03d/page%05d.md", i%10, (i/10)%100, i)
		if err := semfs.WriteFile(ctx, mem, p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if i%10 == 3 {
			groups[p] = []string{fmt.Sprintf("g%d", (i/10)%10)}
		}
	}
	return &groupFS{FS: mem, groups: groups}
}

func TestViewMatchesWalk(t *testing.T) {
	fsys := bigTree(t, 3000)
	tree, err := NewTree(context.Background(), fsys)
	if err != nil {
		t.Fatal(err)
	}
	p := semfs.Principal{Groups: []string{"g1", "g7"}}
	// The expected visible set, computed the slow way.
	var want []string
	dirs := map[string]bool{"/": true}
	for f, err := range semfs.Files(context.Background(), fsys, "/") {
		if err != nil {
			t.Fatal(err)
		}
		if (semfs.Tags{Groups: fsys.groups[f]}).VisibleTo(p) {
			want = append(want, f)
			semfs.Ancestors(f, func(d string) bool { dirs[d] = true; return true })
		}
	}
	for d := range dirs {
		want = append(want, d)
	}
	got := tree.View(p).Paths()
	sort.Strings(want)
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Fatalf("view has %d paths, walk %d", len(got), len(want))
	}
	if len(got) >= tree.Len() {
		t.Fatal("nothing was pruned")
	}
}

// BenchmarkSessionOpen measures opening a session on a 100k-file tree with
// group pruning through the first "ls /": a view for a new group set (the
// OR of precomputed bitsets), the session, and the command.
func BenchmarkSessionOpen(b *testing.B) {
	fsys := bigTree(b, 100_000)
	start := time.Now()
	tree, err := NewTree(context.Background(), fsys)
	if err != nil {
		b.Fatal(err)
	}
	build := time.Since(start)
	ctx := context.Background()
	var out bytes.Buffer
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		tree.mu.Lock()
		clear(tree.views) // measure the pruning, not the cache
		tree.mu.Unlock()
		v := tree.View(semfs.Principal{Groups: []string{"g1", "g4"}})
		s := New(fsys, Options{View: v})
		out.Reset()
		if code, err := s.Run(ctx, "ls /", nil, &out, nil); code != 0 || err != nil {
			b.Fatal(code, err)
		}
		durs = append(durs, time.Since(t0))
		_ = i
	}
	b.StopTimer()
	if !strings.HasPrefix(out.String(), "site00\n") {
		b.Fatalf("ls / printed %q", out.String())
	}
	reportPercentiles(b, durs)
	b.ReportMetric(float64(build.Milliseconds()), "tree-build-ms")
}

func reportPercentiles(b *testing.B, durs []time.Duration) {
	if len(durs) == 0 {
		return
	}
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(durs[len(durs)*9/10].Microseconds()), "p90-µs")
}

func TestTreeEncodeLoad(t *testing.T) {
	fsys := docsTree(t)
	tree, err := NewTree(context.Background(), fsys)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tree.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadTree(bytes.NewReader(buf.Bytes()), fsys)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []semfs.Principal{{}, {Groups: []string{"billing"}}, {Admin: true}} {
		a, b := tree.View(p), loaded.View(p)
		if !slices.Equal(a.Paths(), b.Paths()) {
			t.Fatalf("%v: loaded view %v, built %v", p, b.Paths(), a.Paths())
		}
		outA, _, _ := run(t, New(fsys, Options{View: a}), "ls -lR /")
		outB, _, _ := run(t, New(fsys, Options{View: b}), "ls -lR /")
		if outA != outB {
			t.Fatalf("ls -lR differs:\n%s\n%s", outA, outB)
		}
	}
	if _, err := LoadTree(bytes.NewReader(buf.Bytes()[:buf.Len()/2]), fsys); err == nil {
		t.Fatal("a truncated tree loaded")
	}
}

func TestConcurrentSessionsShareATree(t *testing.T) {
	fsys := docsTree(t)
	tree, err := NewTree(context.Background(), fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := map[bool]string{false: "/auth/oauth.mdx\n", true: "/api-reference/payments.mdx\n/auth/oauth.mdx\n/internal/billing.mdx\n"}
	errs := make(chan string, 8)
	for i := range 8 {
		billing := i%2 == 0
		go func() {
			var groups []string
			if billing {
				groups = []string{"billing"}
			}
			s := New(fsys, Options{View: tree.View(semfs.Principal{Groups: groups})})
			for range 20 {
				out, _, _ := run(t, s, "grep -rl billing / | sort")
				if out != want[billing] {
					errs <- out
					return
				}
			}
			errs <- ""
		}()
	}
	for range 8 {
		if e := <-errs; e != "" {
			t.Fatalf("a concurrent session saw %q", e)
		}
	}
}
