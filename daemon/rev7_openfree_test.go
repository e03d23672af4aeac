package daemon_test

// Open-free mode end to end through meta: a removed file's writer does
// not name a new file at its path, and the mode is refused where write
// access differs between callers (review 7, R1 and R4).

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/daemon"
	"github.com/semfs/semfs/fusefs"
)

// TestOpenFreeRemovedWriterKeepsNewFileCreator: root rewrites /f through the
// open-free mount and removes it at once; another user then creates a new
// /f and writes it for two seconds. The new file's created_by must be
// the other user: the removed file's writer is reported before the
// removal, not when it is closed later (then meta would re-read /f and
// make the new file's row with root as created_by, which never changes).
func TestOpenFreeRemovedWriterKeepsNewFileCreator(t *testing.T) { rev7RemovedWriter(t, "-open-free") }

// TestDefaultRemovedWriterKeepsNewFileCreator: the same in the default mode.
func TestDefaultRemovedWriterKeepsNewFileCreator(t *testing.T) {
	rev7RemovedWriter(t, "-open-free=false")
}

func rev7RemovedWriter(t *testing.T, mode string) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	dir, err := os.MkdirTemp("/tmp", "rev7")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	mnt, c, _, _ := mountInProcess(t, dir, mode, "-allow-other")
	p := filepath.Join(mnt, "f")
	if err := os.WriteFile(p, []byte("setup\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitHash(t, c, "/f", []byte("setup\n"))
	if err := os.WriteFile(p, []byte("root's rewrite\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/usr/bin/python3", "-c", `
import sys, time
f = open(sys.argv[1], 'w')
for i in range(20):
    f.write('line %d by the other user\n' % i); f.flush(); time.sleep(0.1)
f.close()
`, p)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("other user: %s %v", out, err)
	}
	var want strings.Builder
	for i := range 20 {
		want.WriteString("line " + itoa(i) + " by the other user\n")
	}
	st := waitHash(t, c, "/f", []byte(want.String()))
	time.Sleep(500 * time.Millisecond)
	if st.Meta.CreatedBy != "uid:65534" {
		t.Errorf("created_by of the other user's new file = %q; want uid:65534 (the removed file's writer named it)", st.Meta.CreatedBy)
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return string(rune('0'+i/10)) + string(rune('0'+i%10))
}

// TestOpenFreeRefusedWhereWritesDiffer (review 7, R1): in the
// open-free mode the kernel writes a shared mapping's pages back naming
// no caller, and the mount makes the write as the file's last caller. A
// tokens file that lets a principal read a path without writing it makes
// write access differ between callers who see the file (a caller without
// a token may write everywhere): a reader's mapped stores would be written
// as a writer, or a writer's refused as a reader's. The daemon refuses to
// start then, before it mounts, naming the setting and the token; hiding
// ("none" rules, groups) is allowed.
func TestOpenFreeRefusedWhereWritesDiffer(t *testing.T) {
	needFUSE(t)
	for name, tok := range map[string]string{
		"read_only":    `{"id": "ro", "read_only": true}`,
		"default read": `{"id": "ro", "default": "read", "rules": [{"path": "/scratch", "access": "write"}]}`,
		"read rule":    `{"id": "ro", "rules": [{"path": "/docs", "access": "read"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			tokens := dir + "/tokens.json"
			if err := os.WriteFile(tokens, []byte(`{"tokens": {"fin-secret": {"id": "fin", "groups": ["finance"]}, "ro-secret": `+tok+`}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			mnt := filepath.Join(dir, "mnt")
			args := []string{"-mode", "mount", "-mount", mnt, "-drop-caps=false", "-data", dir + "/data",
				"-index", dir + "/index/index.db", "-socket", dir + "/run/semfs.sock", "-tokens", tokens, "-open-free"}
			cfg, err := daemon.ParseConfig(args, func(string) string { return "" }, os.Stderr)
			if err != nil {
				t.Fatal(err)
			}
			d := &daemon.Main{Config: cfg, Logger: slog.New(slog.DiscardHandler)}
			err = d.Start(context.Background())
			d.Close()
			if err == nil || !strings.Contains(err.Error(), "SEMFS_OPEN_FREE") || !strings.Contains(err.Error(), `"ro"`) {
				t.Errorf("open-free with a token that may read what it may not write: %v; want a refusal naming SEMFS_OPEN_FREE and the token", err)
			}
			if _, err := os.Stat(dir + "/index/index.db"); err == nil {
				t.Errorf("the index was opened before the refusal")
			}
			if fstype, mounted := fusefs.MountType(mnt); mounted {
				t.Errorf("%s is mounted (%s) after the refusal", mnt, fstype)
			}
		})
	}
}
