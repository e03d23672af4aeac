package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fsRun runs the CLI over the host directory root and returns the exit
// code, stdout and stderr. It fails the test if stderr shows root.
func fsRun(t *testing.T, root, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), append([]string{"--root", root}, args...), strings.NewReader(stdin), &out, &errb)
	if strings.Contains(errb.String(), root) || strings.Contains(out.String(), root) {
		t.Errorf("semfs %v: output shows the host path:\nstdout: %s\nstderr: %s", args, out.String(), errb.String())
	}
	return code, out.String(), errb.String()
}

func wantCode(t *testing.T, root string, want int, stdin string, args ...string) (string, string) {
	t.Helper()
	code, out, errs := fsRun(t, root, stdin, args...)
	if code != want {
		t.Fatalf("semfs %v: exit %d, want %d\nstdout: %s\nstderr: %s", args, code, want, out, errs)
	}
	if want != ExitOK && !strings.HasPrefix(errs, "semfs: ") {
		t.Errorf("semfs %v: stderr %q does not explain the failure", args, errs)
	}
	return out, errs
}

// fsFixture builds a host tree: /a.txt, /docs/b.md, /docs/sub/c.go,
// /.hidden, and the index's /.semfs directory.
func fsFixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"a.txt":           "alpha\n",
		"docs/b.md":       "# bravo\n",
		"docs/sub/c.go":   "package c\n",
		".hidden":         "h",
		".semfs/index.db": "db",
	}
	for p, data := range files {
		host := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(host, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

func TestFSLs(t *testing.T) {
	root := fsFixture(t)
	out, _ := wantCode(t, root, ExitOK, "", "ls")
	if got := lines(out); !slices.Equal(got, []string{"a.txt", "docs"}) {
		t.Errorf("ls = %q", got)
	}
	out, _ = wantCode(t, root, ExitOK, "", "ls", "-a", "/")
	if got := lines(out); !slices.Equal(got, []string{".hidden", "a.txt", "docs"}) {
		t.Errorf("ls -a = %q (the .semfs bookkeeping must stay hidden)", got)
	}
	out, _ = wantCode(t, root, ExitOK, "", "ls", "-R", "/docs")
	if want := "/docs:\nb.md\nsub\n\n/docs/sub:\nc.go\n"; out != want {
		t.Errorf("ls -R = %q, want %q", out, want)
	}
	out, _ = wantCode(t, root, ExitOK, "", "ls", "-l", "docs")
	re := regexp.MustCompile(`^-rw-r--r-- +8 \d{4}-\d\d-\d\d \d\d:\d\d b\.md\ndrwxr-xr-x +- \d{4}-\d\d-\d\d \d\d:\d\d sub\n$`)
	if !re.MatchString(out) {
		t.Errorf("ls -l = %q", out)
	}
	out, _ = wantCode(t, root, ExitOK, "", "ls", "/a.txt")
	if out != "/a.txt\n" {
		t.Errorf("ls FILE = %q", out)
	}
	out, _ = wantCode(t, root, ExitOK, "", "--json", "ls", "-R", "/")
	var ents []entryJSON
	if err := json.Unmarshal([]byte(out), &ents); err != nil {
		t.Fatalf("ls --json: %v\n%s", err, out)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Path+":"+e.Type)
	}
	if want := []string{"/a.txt:file", "/docs:dir", "/docs/b.md:file", "/docs/sub:dir", "/docs/sub/c.go:file"}; !slices.Equal(got, want) {
		t.Errorf("ls --json -R = %v, want %v", got, want)
	}
	if ents[0].Size != 6 || ents[0].Name != "a.txt" || ents[0].Mode != "-rw-r--r--" {
		t.Errorf("ls --json entry %+v", ents[0])
	}
	if err := os.Mkdir(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, _ = wantCode(t, root, ExitOK, "", "--json", "ls", "/empty")
	if strings.TrimSpace(out) != "[]" {
		t.Errorf("ls --json of an empty directory = %q, want []", out)
	}
	out, _ = wantCode(t, root, ExitOK, "", "--json", "ls", "-a")
	if !strings.Contains(out, `"/.hidden"`) || strings.Contains(out, ".semfs") {
		t.Errorf("ls --json -a = %s", out)
	}
}

func TestFSErrorsAndExitCodes(t *testing.T) {
	root := fsFixture(t)
	_, errs := wantCode(t, root, ExitNotExist, "", "cat", "/missing.txt")
	if !strings.Contains(errs, "/missing.txt") || !strings.Contains(errs, "semfs ls") {
		t.Errorf("missing path error is not helpful: %q", errs)
	}
	wantCode(t, root, ExitNotExist, "", "ls", "/nope")
	wantCode(t, root, ExitNotExist, "", "stat", "nope")
	wantCode(t, root, ExitInvalid, "", "cat", "../etc/passwd")
	wantCode(t, root, ExitInvalid, "", "ls", "/docs/../..")
	wantCode(t, root, ExitInvalid, "x", "put", "/a/../../escape")
	wantCode(t, root, ExitIsDir, "", "cat", "/docs")
	wantCode(t, root, ExitNotDir, "x", "put", "/a.txt/child")
	wantCode(t, root, ExitPermission, "", "cat", "/.semfs/index.db")
	wantCode(t, root, ExitUsage, "", "cat")
	wantCode(t, root, ExitUsage, "", "mv", "/a.txt")
	wantCode(t, root, ExitUsage, "", "ls", "--bogus")
	wantCode(t, root, ExitUsage, "", "put", "/p", "--from", filepath.Join(root, "no-such-file"))
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	_, errs = wantCode(t, root, ExitPermission, "", "cat", "/escape")
	if !strings.Contains(errs, "outside the tree") {
		t.Errorf("escape error: %q", errs)
	}
	_, errs = wantCode(t, filepath.Join(root, "no-such-dir"), ExitNotExist, "", "ls")
	if !strings.Contains(errs, "--root") {
		t.Errorf("bad --root error does not say what to fix: %q", errs)
	}
}

func TestFSWriteCommands(t *testing.T) {
	root := fsFixture(t)
	wantCode(t, root, ExitOK, "hello\n", "put", "/notes/today.md")
	out, _ := wantCode(t, root, ExitOK, "", "cat", "notes/today.md", "/a.txt")
	if out != "hello\nalpha\n" {
		t.Errorf("cat = %q", out)
	}
	src := filepath.Join(t.TempDir(), "src.bin")
	if err := os.WriteFile(src, []byte("from a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantCode(t, root, ExitOK, "ignored", "put", "/a.txt", "--from", src)
	if data, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(data) != "from a file" {
		t.Errorf("put --from wrote %q", data)
	}

	wantCode(t, root, ExitNotExist, "", "mkdir", "/x/y")
	wantCode(t, root, ExitOK, "", "mkdir", "-p", "/x/y")
	wantCode(t, root, ExitOK, "", "mkdir", "-p", "/x/y")
	wantCode(t, root, ExitExist, "", "mkdir", "/x")
	if info, err := os.Stat(filepath.Join(root, "x/y")); err != nil || !info.IsDir() {
		t.Errorf("mkdir -p did not create the directory: %v", err)
	}

	// mv into an existing directory, then rename with -T.
	wantCode(t, root, ExitOK, "", "mv", "/a.txt", "/x")
	if _, err := os.Stat(filepath.Join(root, "x/a.txt")); err != nil {
		t.Errorf("mv into dir: %v", err)
	}
	wantCode(t, root, ExitOK, "", "mv", "-T", "/x/y", "/x/z")
	wantCode(t, root, ExitNotEmpty, "", "mv", "-T", "/docs", "/x")
	wantCode(t, root, ExitNotExist, "", "mv", "/gone", "/x")

	_, errs := wantCode(t, root, ExitNotEmpty, "", "rm", "/docs")
	if !strings.Contains(errs, "rm -r") {
		t.Errorf("rm of a non-empty dir does not suggest -r: %q", errs)
	}
	if _, err := os.Stat(filepath.Join(root, "docs/b.md")); err != nil {
		t.Fatal("failed rm lost data")
	}
	wantCode(t, root, ExitNotExist, "", "rm", "/gone")
	wantCode(t, root, ExitOK, "", "rm", "-f", "/gone")
	wantCode(t, root, ExitInvalid, "", "rm", "-r", "/")
	wantCode(t, root, ExitOK, "", "rm", "/x/z")
	wantCode(t, root, ExitOK, "", "rm", "-r", "/docs")
	if _, err := os.Stat(filepath.Join(root, "docs")); !os.IsNotExist(err) {
		t.Errorf("rm -r left docs: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, ".semfs/index.db")); err != nil {
		t.Errorf("bookkeeping lost: %v", err)
	}
	out, _ = wantCode(t, root, ExitOK, "", "ls", "-R")
	if want := "/:\nnotes\nx\n\n/notes:\ntoday.md\n\n/x:\na.txt\n"; out != want {
		t.Errorf("final tree = %q, want %q", out, want)
	}
}

func TestFSTreeAndStat(t *testing.T) {
	root := fsFixture(t)
	out, _ := wantCode(t, root, ExitOK, "", "tree")
	want := "/\n├── a.txt\n└── docs\n    ├── b.md\n    └── sub\n        └── c.go\n\n2 directories, 3 files\n"
	if out != want {
		t.Errorf("tree =\n%s\nwant\n%s", out, want)
	}
	out, _ = wantCode(t, root, ExitOK, "", "tree", "-L", "1", "/docs")
	if want := "/docs\n├── b.md\n└── sub\n\n1 directory, 1 file\n"; out != want {
		t.Errorf("tree -L 1 = %q", out)
	}
	out, _ = wantCode(t, root, ExitOK, "", "--json", "tree", "/docs")
	var n treeNode
	if err := json.Unmarshal([]byte(out), &n); err != nil {
		t.Fatalf("tree --json: %v", err)
	}
	if n.Path != "/docs" || len(n.Children) != 2 || n.Children[1].Name != "sub" || len(n.Children[1].Children) != 1 || n.Children[1].Children[0].Path != "/docs/sub/c.go" || n.Children[0].Size != 8 {
		t.Errorf("tree --json = %s", out)
	}

	out, _ = wantCode(t, root, ExitOK, "", "stat", "/a.txt")
	if !strings.Contains(out, "Path: /a.txt\n") || !strings.Contains(out, "Type: file\n") || !strings.Contains(out, "Size: 6\n") {
		t.Errorf("stat = %q", out)
	}
	out, _ = wantCode(t, root, ExitOK, "", "--json", "stat", "/a.txt", "/docs")
	var ents []entryJSON
	if err := json.Unmarshal([]byte(out), &ents); err != nil {
		t.Fatalf("stat --json: %v", err)
	}
	if len(ents) != 2 || ents[0].Type != "file" || ents[0].Size != 6 || ents[1].Type != "dir" || ents[1].Path != "/docs" {
		t.Errorf("stat --json = %s", out)
	}
	// Read commands open the tree read-only: nothing is created.
	if _, err := os.Stat(filepath.Join(root, "docs")); err != nil {
		t.Fatal(err)
	}
}
