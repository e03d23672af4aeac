package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func shFixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, data := range map[string]string{"a.txt": "alpha\nbeta\n", "docs/b.md": "# bravo\nalpha docs\n"} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func shRun(t *testing.T, root, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), append([]string{"--root", root, "sh"}, args...), strings.NewReader(stdin), &out, &errb)
	if strings.Contains(out.String()+errb.String(), root) {
		t.Errorf("sh %v shows the host path: %q %q", args, out.String(), errb.String())
	}
	return code, out.String(), errb.String()
}

func TestShCommand(t *testing.T) {
	root := shFixture(t)
	code, out, errs := shRun(t, root, "", "-c", "ls; grep -rn alpha . | sort; cd docs && pwd")
	want := "a.txt\ndocs\n./a.txt:1:alpha\n./docs/b.md:2:alpha docs\n/docs\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d, stdout %q (want %q), stderr %q", code, out, want, errs)
	}
	// A failing script fails the command with the script's own status,
	// and semfs adds nothing to what the script printed.
	code, _, errs = shRun(t, root, "", "-c", "grep zzz a.txt")
	if code != 1 || errs != "" {
		t.Fatalf("a failing script: exit %d stderr %q", code, errs)
	}
	// An unknown command is reported, not run.
	code, _, errs = shRun(t, root, "", "-c", "rm -rf /")
	if code == 0 || !strings.Contains(errs, "semfs: rm: command not found") {
		t.Fatalf("rm: exit %d stderr %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(root, "a.txt")); err != nil {
		t.Fatal("the tree was damaged")
	}
}

func TestShScriptFileAndStdin(t *testing.T) {
	root := shFixture(t)
	script := filepath.Join(t.TempDir(), "s.sh")
	os.WriteFile(script, []byte("for f in *.txt docs/*.md; do wc -l $f; done\n"), 0o644)
	code, out, errs := shRun(t, root, "", script)
	if code != 0 || out != "2 a.txt\n2 docs/b.md\n" {
		t.Fatalf("file: exit %d stdout %q stderr %q", code, out, errs)
	}
	code, out, _ = shRun(t, root, "cat a.txt | head -1\n")
	if code != 0 || out != "alpha\n" {
		t.Fatalf("stdin: exit %d stdout %q", code, out)
	}
}

func TestShWritesAndReadOnly(t *testing.T) {
	root := shFixture(t)
	code, _, errs := shRun(t, root, "", "-c", "echo new > docs/c.md && mkdir -p x/y && echo z > x/y/z")
	if code != 0 {
		t.Fatalf("exit %d stderr %q", code, errs)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "docs", "c.md")); string(data) != "new\n" {
		t.Fatalf("host file holds %q", data)
	}
	code, _, errs = shRun(t, root, "", "--read-only", "-c", "echo changed > a.txt")
	if code == 0 || !strings.Contains(errs, "Read-only file system") {
		t.Fatalf("read-only: exit %d stderr %q", code, errs)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(data) != "alpha\nbeta\n" {
		t.Fatalf("a read-only session changed a.txt to %q", data)
	}
}

func TestShGroupsOpensAView(t *testing.T) {
	root := shFixture(t)
	// Without metadata every file is public: the view shows all of them.
	code, out, errs := shRun(t, root, "", "--groups", "billing", "-c", "find . -type f | sort; cat nosuch.md")
	if code == 0 || out != "./a.txt\n./docs/b.md\n" || !strings.Contains(errs, "No such file or directory") {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
	}
}

func TestShLimits(t *testing.T) {
	root := shFixture(t)
	code, out, errs := shRun(t, root, "", "--max-loop-iterations", "5", "-c", "while true; do echo x; done")
	if code == 0 || out != "x\nx\nx\nx\nx\n" || !strings.Contains(errs, "loop iteration limit of 5") {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
	}
	code, _, errs = shRun(t, root, "", "--timeout", "100ms", "-c", "while true; do :; done")
	if code == 0 || !strings.Contains(errs, "run time limit of 100ms") {
		t.Fatalf("exit %d stderr %q", code, errs)
	}
}

func TestShDir(t *testing.T) {
	root := shFixture(t)
	code, out, errs := shRun(t, root, "", "--dir", "/docs", "-c", "pwd; ls")
	if code != 0 || out != "/docs\nb.md\n" {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
	}
	if code, _, _ := shRun(t, root, "", "--dir", "/nosuch", "-c", "pwd"); code != ExitUsage {
		t.Fatalf("a missing --dir: exit %d", code)
	}
}
