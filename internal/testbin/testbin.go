// Package testbin builds the semfs binary once per test process and runs it
// the way people and agents do: commands, a tree indexed with `semfs index`,
// and `semfs http` on a free loopback port. Front-end tests that drive the
// real binary (Go's HTTP client, the Node MCP clients) share it.
package testbin

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs/internal/testtree"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

// Main runs the tests and removes the built binary afterwards; call it from
// TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// Path builds cmd/semfs once per test binary and returns its path.
func Path(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "semfs-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "semfs")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/semfs/semfs/cmd/semfs").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// Run runs semfs with args (one minute at most) and returns its stdout,
// failing the test on a non-zero exit.
func Run(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, Path(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("semfs %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// HostTree writes testtree.Files to a fresh host directory, indexes it with
// `semfs index`, hides /billing/secret.md from everyone outside group
// "billing" and tags /notes/auth.md (task "fix the auth bug", app
// "editor"). It returns the directory.
func HostTree(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range testtree.Files {
		host := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(host), 0o755)
		if err := os.WriteFile(host, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	Run(t, "--root", dir, "index", dir)
	Run(t, "--root", dir, "tag", "/billing/secret.md", "--task", "invoices", "--groups", "billing")
	Run(t, "--root", dir, "tag", "/notes/auth.md", "--task", "fix the auth bug", "--app", "editor")
	return dir
}

// StartHTTP runs `semfs http` over root with the tokens file contents
// tokens (plus extra flags) on a free loopback port, and returns its
// host:port; the process is interrupted when the test ends.
func StartHTTP(t testing.TB, root, tokens string, extra ...string) string {
	t.Helper()
	tf := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.WriteFile(tf, []byte(tokens), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Path(t), append([]string{"--root", root, "http", "--listen", "127.0.0.1:0", "--tokens", tf}, extra...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "semfs http: listening on "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		return a
	case <-time.After(20 * time.Second):
		t.Fatal("semfs http did not report its address within 20 s")
	}
	return ""
}

// Built returns the binary's path once Path has built it ("" before).
func Built() string { return binPath }
