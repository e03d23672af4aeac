package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semfs/semfs/cli"
	"github.com/semfs/semfs/daemon"
	"github.com/semfs/semfs/wire"
)

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// TestSnapshotRestoreOffline snapshots a tree with no daemon running and
// restores it elsewhere; a damaged archive is refused.
func TestSnapshotRestoreOffline(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	os.MkdirAll(filepath.Join(root, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(root, "a", "b", "f.txt"), []byte("deep file"), 0o644)
	os.WriteFile(filepath.Join(root, "top.md"), []byte("# top"), 0o644)
	noSock := filepath.Join(dir, "none.sock")
	archive := filepath.Join(dir, "snap.semfs")

	_, stderr, code := runCLI(t, "snapshot", archive, "--root", root, "--socket", noSock)
	if code != 0 {
		t.Fatalf("snapshot exit %d: %s", code, stderr)
	}
	root2 := filepath.Join(dir, "root2")
	_, stderr, code = runCLI(t, "restore", archive, "--root", root2, "--index", filepath.Join(dir, "idx2", "index.db"), "--socket", noSock)
	if code != 0 {
		t.Fatalf("restore exit %d: %s", code, stderr)
	}
	for p, want := range map[string]string{"a/b/f.txt": "deep file", "top.md": "# top"} {
		got, err := os.ReadFile(filepath.Join(root2, p))
		if err != nil || string(got) != want {
			t.Errorf("restored %s = %q, %v", p, got, err)
		}
	}
	// Truncated archive: refused, and root2 keeps what it had.
	raw, _ := os.ReadFile(archive)
	os.WriteFile(archive, raw[:len(raw)/2], 0o644)
	_, _, code = runCLI(t, "restore", archive, "--root", root2, "--index", filepath.Join(dir, "idx2", "index.db"), "--socket", noSock)
	if code == 0 {
		t.Error("restore of a truncated archive succeeded")
	}
	if got, err := os.ReadFile(filepath.Join(root2, "top.md")); err != nil || string(got) != "# top" {
		t.Errorf("refused restore changed the tree: %q, %v", got, err)
	}
}

// TestDoctorAgainstDaemon waits for a running (headless) daemon and reads
// its report; with no daemon and no index, doctor fails.
func TestDoctorAgainstDaemon(t *testing.T) {
	dir := t.TempDir()
	cfg, err := daemon.ParseConfig([]string{"-mode", "headless", "-data", dir + "/data", "-index", dir + "/index/index.db", "-socket", dir + "/s.sock"}, func(string) string { return "" }, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	d := &daemon.Main{Config: cfg, Logger: slog.New(slog.DiscardHandler)}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	out, stderr, code := runCLI(t, "doctor", "--wait", "--json", "--socket", cfg.Socket)
	if code != 0 {
		t.Fatalf("doctor exit %d: %s\n%s", code, stderr, out)
	}
	var rep wire.Doctor
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor --json output %q: %v", out, err)
	}
	names := map[string]bool{}
	for _, c := range rep.Checks {
		names[c.Name] = c.OK
	}
	for _, n := range []string{"model tags", "marker", "pending tags", "index", "mount"} {
		if ok, seen := names[n]; !seen || !ok {
			t.Errorf("check %q: present=%v ok=%v (report %+v)", n, seen, ok, rep)
		}
	}

	_, _, code = runCLI(t, "doctor", "--socket", filepath.Join(dir, "none.sock"), "--index", filepath.Join(dir, "missing", "index.db"))
	if code == 0 {
		t.Error("doctor with no daemon and no index passed")
	}
}

// TestSnapshotRegistersToken: semfs snapshot against a daemon registers
// with the environment's token (SEMFS_TOKEN_FILE), so a token without
// admin is refused the archive although the process is root, and an admin
// token gets it; the variable is gone from the environment once read.
func TestSnapshotRegistersToken(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/tokens.json", []byte(`{"tokens": {"fin-secret": {"id": "fin", "groups": ["finance"]}, "ops-secret": {"id": "ops", "admin": true}}}`), 0o600)
	os.WriteFile(dir+"/fin.token", []byte("fin-secret\n"), 0o600)
	os.WriteFile(dir+"/ops.token", []byte("ops-secret\n"), 0o600)
	cfg, err := daemon.ParseConfig([]string{"-mode", "headless", "-data", dir + "/data", "-index", dir + "/index/index.db",
		"-socket", dir + "/s.sock", "-tokens", dir + "/tokens.json"}, func(string) string { return "" }, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	d := &daemon.Main{Config: cfg, Logger: slog.New(slog.DiscardHandler)}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	t.Setenv("SEMFS_TOKEN", "")
	t.Setenv("SEMFS_TOKEN_FILE", dir+"/fin.token")
	_, stderr, code := runCLI(t, "snapshot", dir+"/fin.semfs", "--socket", cfg.Socket)
	if code == 0 || !strings.Contains(stderr, "needs an admin token") {
		t.Errorf("snapshot with a token without admin: exit %d, %s; want refused, needing an admin token", code, stderr)
	}
	if _, set := os.LookupEnv("SEMFS_TOKEN_FILE"); set {
		t.Error("SEMFS_TOKEN_FILE is still in the environment after it was read")
	}
	t.Setenv("SEMFS_TOKEN_FILE", dir+"/ops.token")
	if _, stderr, code := runCLI(t, "snapshot", dir+"/ops.semfs", "--socket", cfg.Socket); code != 0 {
		t.Errorf("snapshot with an admin token: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(dir + "/ops.semfs"); err != nil {
		t.Errorf("no archive: %v", err)
	}
}

// TestHTTPTokensEnv: semfs http takes its tokens file from SEMFS_TOKENS,
// as semfs serve does, over the older SEMFS_HTTP_TOKENS.
func TestHTTPTokensEnv(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := t.TempDir()
	bad := filepath.Join(root, "tokens.json")
	os.WriteFile(bad, []byte(`{"tokens": {"t": {"id": "x", "grups": ["a"]}}}`), 0o600)
	t.Setenv("SEMFS_HTTP_TOKENS", filepath.Join(root, "missing.json"))
	t.Setenv("SEMFS_TOKENS", bad)
	if _, errs, code := runCLI(t, "--root", root, "http"); code != cli.ExitUsage || !strings.Contains(errs, `unknown field "grups"`) {
		t.Errorf("SEMFS_TOKENS: exit %d, %q; want the tokens file's error", code, errs)
	}
	out, _, code := runCLI(t, "config", "--json")
	if code != 0 || !strings.Contains(out, `"env SEMFS_TOKENS"`) {
		t.Errorf("config does not report SEMFS_TOKENS as the source: %s", out)
	}
}
