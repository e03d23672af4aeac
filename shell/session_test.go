package shell

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
)

// run runs script in s and returns stdout, stderr and the exit status.
func run(t testing.TB, s *Session, script string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code, _ := s.Run(context.Background(), script, nil, &out, &errb)
	return out.String(), errb.String(), code
}

func TestUnknownCommandNeverRunsHostProgram(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	s := New(memfs.New(), Options{})
	_, stderr, code := run(t, s, "touch "+marker+"; /usr/bin/touch "+marker+"; env touch "+marker)
	if code != ExitNotFound {
		t.Fatalf("exit %d, want 127", code)
	}
	if !strings.Contains(stderr, "semfs: touch: command not found") {
		t.Fatalf("stderr %q", stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a host program ran")
	}
	// command -v and type answer without PATH.
	out, _, code := run(t, s, "command -v grep; type ls; command -v touch")
	if out != "grep\nls is a shell builtin\n" || code != 1 {
		t.Fatalf("got %q exit %d", out, code)
	}
}

func TestNoHostPathIsReachable(t *testing.T) {
	s := New(memfs.New(), Options{})
	hostDir := t.TempDir()
	out, _, _ := run(t, s, "cat /etc/hostname; ls /etc | head -1; echo x > "+hostDir+"/leak; cd /tmp && pwd")
	if strings.TrimSpace(out) != "" {
		t.Fatalf("host content reached: %q", out)
	}
	if _, err := os.Stat(filepath.Join(hostDir, "leak")); err == nil {
		t.Fatal("a redirection wrote to the host")
	}
	// The redirection went into the tree instead.
	run(t, s, "mkdir -p "+hostDir+"; echo x > "+hostDir+"/leak")
	if ok, _ := semfs.Exists(context.Background(), s.fsys, hostDir+"/leak"); !ok {
		t.Fatal("the redirection did not write into the tree")
	}
	if _, err := os.Stat(filepath.Join(hostDir, "leak")); err == nil {
		t.Fatal("a redirection wrote to the host")
	}
}

func TestRefusedConstructs(t *testing.T) {
	s := New(memfs.New(), Options{})
	for script, want := range map[string]string{
		"cat <(echo hi)":       "process substitution",
		"echo hi > >(cat)":     "process substitution",
		"sleep 1 &":            "background jobs",
		"coproc cat":           "coprocesses",
		"echo 'unterminated":   "syntax error",
		"ls; (echo a &) ; pwd": "background jobs",
		"eval 'sleep 1 &'":     "eval: line 1: background jobs",
	} {
		out, stderr, code := run(t, s, script)
		if code != ExitRejected || !strings.Contains(stderr, want) || out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", script, code, out, stderr, want)
		}
	}
}

func TestLimits(t *testing.T) {
	mem := memfs.FromMap(map[string]string{"/a": strings.Repeat("x", 100) + "\n"})
	s := New(mem, Options{Limits: Limits{MaxLoopIterations: 50, MaxOutput: 1000, Timeout: 2 * time.Second}})

	var out, errb bytes.Buffer
	code, err := s.Run(context.Background(), "while true; do :; done", nil, &out, &errb)
	if code != ExitLimit || !errors.Is(err, ErrLoopLimit) || !strings.Contains(errb.String(), "loop iteration limit of 50") {
		t.Fatalf("loop: exit %d err %v stderr %q", code, err, errb.String())
	}
	out.Reset()
	errb.Reset()
	code, err = s.Run(context.Background(), "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do cat a; done", nil, &out, &errb)
	if code != ExitLimit || !errors.Is(err, ErrOutputLimit) || out.Len() > 1000 || !strings.Contains(errb.String(), "output limit") {
		t.Fatalf("output: exit %d err %v len %d stderr %q", code, err, out.Len(), errb.String())
	}
	// The iteration budget is per run: ten iterations are fine again.
	if out, _, code := run(t, s, "for i in 1 2 3 4 5 6 7 8 9 10; do echo -n $i; done"); out != "12345678910" || code != 0 {
		t.Fatalf("after limits: %q %d", out, code)
	}

	slow := New(mem, Options{Limits: Limits{Timeout: 200 * time.Millisecond, MaxLoopIterations: -1}})
	start := time.Now()
	code, err = slow.Run(context.Background(), "while true; do echo x > /dev/null; done", nil, &out, &errb)
	if code != ExitLimit || !errors.Is(err, ErrTimeout) || time.Since(start) > 3*time.Second {
		t.Fatalf("timeout: exit %d err %v after %v", code, err, time.Since(start))
	}
}

func TestRedirectionsWriteIntoTheTree(t *testing.T) {
	mem := memfs.FromMap(map[string]string{"/docs/a.md": "one\n"})
	tree, err := NewTree(context.Background(), mem)
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{{}, {View: tree.View(semfs.Principal{})}} {
		s := New(mem, opts)
		out, stderr, code := run(t, s, "cd /docs && echo two >> a.md && echo new > b.md && ls && cat a.md b.md && grep -c . *.md && echo n > sub/c.md; mkdir -p sub/dir && echo n > sub/dir/c.md; find . -type f")
		want := "a.md\nb.md\none\ntwo\nnew\na.md:2\nb.md:1\n./a.md\n./b.md\n./sub/dir/c.md\n"
		if out != want || code != 0 {
			t.Fatalf("view=%v: got %q (stderr %q, exit %d), want %q", opts.View != nil, out, stderr, code, want)
		}
		data, _ := semfs.ReadFile(context.Background(), mem, "/docs/a.md")
		if string(data) != "one\ntwo\n" {
			t.Fatalf("tree holds %q", data)
		}
		mem = memfs.FromMap(map[string]string{"/docs/a.md": "one\n"})
		tree, _ = NewTree(context.Background(), mem)
	}
}

// readOnlyFS hides every writer of memfs.
type readOnlyFS struct{ inner semfs.FS }

func (r readOnlyFS) Open(ctx context.Context, name string) (fs.File, error) {
	return r.inner.Open(ctx, name)
}
func (r readOnlyFS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	return r.inner.Stat(ctx, name)
}
func (r readOnlyFS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	return r.inner.ReadDir(ctx, name)
}

func TestReadOnlyTreeRefusesWrites(t *testing.T) {
	mem := memfs.FromMap(map[string]string{"/a": "x\n"})
	for _, s := range []*Session{New(readOnlyFS{mem}, Options{}), New(mem, Options{ReadOnly: true})} {
		out, stderr, code := run(t, s, "echo hi > a; echo $?; echo hi >> b; cat a")
		if out != "1\nx\n" || code != 0 || strings.Count(stderr, "Read-only file system") != 2 {
			t.Fatalf("got %q, stderr %q, exit %d", out, stderr, code)
		}
		if ok, _ := semfs.Exists(context.Background(), mem, "/b"); ok {
			t.Fatal("a read-only session created a file")
		}
	}
}

func TestStatePersistsAcrossRuns(t *testing.T) {
	s := New(memfs.FromMap(map[string]string{"/d/e/f": "x"}), Options{Dir: "/d"})
	run(t, s, "cd e; X=5")
	out, _, _ := run(t, s, "pwd; echo $X; ls")
	if out != "/d/e\n5\nf\n" || s.Dir() != "/d/e" {
		t.Fatalf("got %q dir %q", out, s.Dir())
	}
	if _, stderr, code := run(t, s, "cd /nosuch"); code != 1 || !strings.Contains(stderr, "nosuch") {
		t.Fatalf("cd to a missing dir: %q %d", stderr, code)
	}
	run(t, s, "exit 3")
	if !s.Exited() {
		t.Fatal("exit did not end the session")
	}
}

func TestErrorsSuggestVisiblePaths(t *testing.T) {
	mem := memfs.FromMap(map[string]string{"/docs/guide.md": "hi\n", "/docs/Readme.md": "x\n", "/internal/guide2.md": "secret\n"})
	s := New(mem, Options{})
	_, stderr, code := run(t, s, "cat guide.md")
	if code != 1 || stderr != "cat: guide.md: No such file or directory (did you mean ./docs/guide.md or ./internal/guide2.md?)\n" {
		t.Fatalf("got %q %d", stderr, code)
	}
	_, stderr, _ = run(t, s, "grep x readme.md")
	if !strings.Contains(stderr, "did you mean ./docs/Readme.md?") {
		t.Fatalf("got %q", stderr)
	}
	_, stderr, _ = run(t, s, "grpe x docs")
	if !strings.Contains(stderr, "did you mean grep?") {
		t.Fatalf("got %q", stderr)
	}
}

func TestUnknownOptionListsSupportedOnes(t *testing.T) {
	s := New(memfs.FromMap(map[string]string{"/a": "x\n"}), Options{})
	_, stderr, code := run(t, s, "grep -P x a")
	if code != 2 || !strings.HasPrefix(stderr, "grep: invalid option -- 'P'\nsemfs supports: -r -R -n") || !strings.Contains(stderr, "--include") {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
}

func TestStdinIsPassedAndReleased(t *testing.T) {
	s := New(memfs.New(), Options{})
	for i := range 200 {
		var out bytes.Buffer
		code, err := s.Run(context.Background(), "sort | head -n 1; read x; echo done", strings.NewReader("b\na\n"), &out, nil)
		if code != 0 || err != nil || out.String() != "a\ndone\n" {
			t.Fatalf("run %d: %q %d %v", i, out.String(), code, err)
		}
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err == nil && len(fds) > 100 {
		t.Fatalf("%d open descriptors after 200 runs", len(fds))
	}
}

func TestHelp(t *testing.T) {
	s := New(memfs.New(), Options{})
	out, _, code := run(t, s, "help; grep --help")
	if code != 0 || !strings.Contains(out, " find grep head ") || !strings.Contains(out, "grep: a semfs builtin") || !strings.Contains(out, "--include") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestCdExplainsFailures(t *testing.T) {
	s := New(memfs.FromMap(map[string]string{"/docs/guide.md": "x\n"}), Options{})
	_, stderr, code := run(t, s, "cd doc")
	if code != 1 || stderr != "cd: doc: No such file or directory (did you mean ./docs?)\n" {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
	_, stderr, code = run(t, s, "cd docs/guide.md")
	if code != 1 || !strings.HasPrefix(stderr, "cd: docs/guide.md: Not a directory") {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
	if out, _, code := run(t, s, "cd docs && pwd"); out != "/docs\n" || code != 0 {
		t.Fatalf("cd docs: %q %d", out, code)
	}
}

func TestStoppedRunDoesNotEndTheSession(t *testing.T) {
	s := New(memfs.New(), Options{Limits: Limits{MaxLoopIterations: 10}})
	if _, _, code := run(t, s, "while :; do :; done"); code != ExitLimit {
		t.Fatalf("exit %d", code)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Run(ctx, "echo x", nil, nil, nil)
	if s.Exited() {
		t.Fatal("a stopped run ended the session")
	}
	if out, _, code := run(t, s, "echo still here"); out != "still here\n" || code != 0 {
		t.Fatalf("%q %d", out, code)
	}
}
