package daemon_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/daemon"
	"github.com/semfs/semfs/memfs"
)

// TestOpenFreeWritesIndexed runs the mount in the open-free mode
// (-open-free): a file created through the mount, an existing file
// rewritten in place through it (no OPEN, no RELEASE reaches the daemon)
// and a file a registered app's child writes are indexed with their new
// bytes and the right created_by; a second writer does not change it.
func TestOpenFreeWritesIndexed(t *testing.T) {
	mnt, sock, c, _ := mountedInProcess(t, "-open-free")
	p, v2 := rewriteInPlace(t, mnt, c)
	if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, v2) {
		t.Errorf("read back through the mount: %d bytes, %v", len(got), err)
	}

	// A registered app's child creates a file, then rewrites the file
	// another caller created: the first is the app's, the second keeps
	// its creator.
	app := filepath.Join(mnt, "app.txt")
	runAppProc(t, &proc{sock: sock}, "notes", app+"=written by notes", p+"=rewritten by notes")
	if got := waitCreatedBy(t, c, "/app.txt"); got != "notes" {
		t.Errorf("created_by of a file a registered app wrote = %q; want notes", got)
	}
	waitHash(t, c, "/app.txt", []byte("written by notes"))
	st := waitHash(t, c, "/notes.txt", []byte("rewritten by notes"))
	if want := fmt.Sprintf("uid:%d", os.Getuid()); st.Meta.CreatedBy != want {
		t.Errorf("created_by after another app rewrote the file = %q; want %q", st.Meta.CreatedBy, want)
	}
}

// TestOpenFreeRefusedOverBucket: the open-free mode needs a backing
// directory only this daemon changes; with a bucket the daemon refuses
// to start and names the setting.
func TestOpenFreeRefusedOverBucket(t *testing.T) {
	env := map[string]string{"SEMFS_OPEN_FREE": "1", "SEMFS_STORE": "s3://b/p", "SEMFS_S3_ENDPOINT": "127.0.0.1:9"}
	_, err := daemon.ParseConfig(nil, func(k string) string { return env[k] }, os.Stderr)
	if err == nil || !strings.Contains(err.Error(), "SEMFS_OPEN_FREE") {
		t.Errorf("open-free over a bucket: %v; want a refusal naming SEMFS_OPEN_FREE", err)
	}
	cfg, err := daemon.ParseConfig([]string{"-open-free"}, func(string) string { return "" }, os.Stderr)
	if err != nil || !cfg.OpenFree {
		t.Errorf("-open-free: %+v, %v", cfg.OpenFree, err)
	}
	// A tree given in code may change behind the mount: refused too.
	needFUSE(t)
	dir := t.TempDir()
	d := &daemon.Main{Config: daemon.Config{Mode: daemon.ModeMount, Mount: dir + "/mnt", Socket: dir + "/semfs.sock", OpenFree: true},
		Tree: memfs.New(), Logger: slog.New(slog.DiscardHandler)}
	err = d.Start(context.Background())
	if err == nil {
		d.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "SEMFS_OPEN_FREE") {
		t.Errorf("open-free over a tree given in code: %v; want a refusal naming SEMFS_OPEN_FREE", err)
	}
}

// TestOpenFreeHidesGroupFiles runs the mount in the open-free mode with
// tokens: a process registered with the finance token reads and lists a
// finance file (its pages and the directory's listing are then in the
// kernel's caches, shared by every caller), and the test process, without
// the token, still gets ENOENT for it and does not see it listed; its
// write to the file's name changes nothing the finance session reads.
func TestOpenFreeHidesGroupFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/tokens.json", []byte(accessTokens), 0o600); err != nil {
		t.Fatal(err)
	}
	mnt, c, d, _ := mountInProcess(t, dir, "-tokens", dir+"/tokens.json", "-open-free")
	sock := d.Config.Socket
	ctx := context.Background()
	const secret = "quarterly revenue forecast for the board"
	if err := os.MkdirAll(mnt+"/reports", 0o755); err != nil {
		t.Fatal(err)
	}
	for p, data := range map[string]string{"/reports/q3.txt": secret, "/reports/summary.txt": "public summary"} {
		if err := os.WriteFile(mnt+p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Tag(ctx, "/reports/q3.txt", semfs.Tags{Groups: []string{"finance"}}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, d)
	for round := range 2 {
		out := session(t, sock, "analyst", "fin-secret", "sh cat "+mnt+"/reports/q3.txt; echo; ls "+mnt+"/reports")
		for _, want := range []string{secret, "q3.txt", "summary.txt"} {
			if !strings.Contains(out, want) {
				t.Fatalf("round %d: the finance session does not see %q:\n%s", round, want, out)
			}
		}
		wantAbsent(t, mnt, "/reports/q3.txt")
		if got, err := os.ReadFile(mnt + "/reports/summary.txt"); err != nil || string(got) != "public summary" {
			t.Errorf("a public file: %q, %v", got, err)
		}
		os.WriteFile(mnt+"/reports/q3.txt", []byte("overwritten"), 0o644)
	}
	waitIdle(t, d)
	if out := session(t, sock, "analyst", "fin-secret", "sh cat "+mnt+"/reports/q3.txt"); !strings.Contains(out, secret) {
		t.Errorf("after a write to its name by a caller who cannot see it, the finance session reads:\n%s", out)
	}
}

// TestOpenFreeMmapIndexed writes files through shared mappings of a mount
// in the open-free mode, served by a daemon in another process (which
// drops its capabilities, as by default): the kernel writes the pages
// back without a handle, and the files are indexed with the mapped bytes,
// in every order of close, write, msync and unmap.
func TestOpenFreeMmapIndexed(t *testing.T) {
	needFUSE(t)
	p := startDaemon(t, t.TempDir(), "SEMFS_OPEN_FREE=1")
	mmapOrdersIndexed(t, p)
}

// TestOpenFreeLogged: the daemon's "mount serving" line says whether the
// mount runs in the open-free mode.
func TestOpenFreeLogged(t *testing.T) {
	for _, on := range []bool{true, false} {
		_, _, _, log := mountInProcess(t, t.TempDir(), fmt.Sprintf("-open-free=%v", on))
		if want := fmt.Sprintf("open_free=%v", on); !strings.Contains(log.String(), want) {
			t.Errorf("the daemon's log does not say %s:\n%s", want, log)
		}
	}
}
