package daemon_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/fusefs"
)

// proc is a daemon running in a subprocess (this test binary, role daemon).
type proc struct {
	cmd    *exec.Cmd
	dir    string // holds data/, index/, run/
	mnt    string
	sock   string
	c      *client.Client
	stderr *bytes.Buffer
	done   chan error
}

func needFUSE(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("skipping: /dev/fuse is missing, so the daemon cannot mount here")
	}
}

// startDaemon starts a mounting daemon over dir and waits until it is ready.
func startDaemon(t *testing.T, dir string, env ...string) *proc {
	t.Helper()
	p := &proc{dir: dir, mnt: filepath.Join(dir, "mnt"), sock: filepath.Join(dir, "run", "semfs.sock"), stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = append(os.Environ(),
		"SEMFS_TEST_ROLE=daemon",
		"SEMFS_MODE=mount",
		"SEMFS_MOUNT="+p.mnt,
		"SEMFS_DATA="+filepath.Join(dir, "data"),
		"SEMFS_INDEX="+filepath.Join(dir, "index", "index.db"),
		"SEMFS_SOCKET="+p.sock,
	)
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stderr = &lockedWriter{w: p.stderr}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.stop(t)
		if _, mounted := fusefs.MountType(p.mnt); mounted {
			exec.Command("umount", "-l", p.mnt).Run()
		}
	})
	p.c = client.New(p.sock)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := p.c.WaitReady(ctx); err != nil {
		p.stop(t)
		t.Fatalf("%v\ndaemon log:\n%s", err, p.log())
	}
	return p
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (p *proc) log() string {
	lw := p.cmd.Stderr.(*lockedWriter)
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.w.String()
}

// stop sends SIGTERM and waits; it returns the exit error.
func (p *proc) stop(t *testing.T) error {
	if p.cmd.ProcessState != nil {
		return nil
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
		t.Errorf("daemon did not stop on SIGTERM; log:\n%s", p.log())
		return <-p.done
	}
}

// capLine returns a capability line (CapEff, CapPrm, CapBnd, ...) of pid.
func capLine(t *testing.T, pid int, name string) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in /proc/%d/status", name, pid)
	return ""
}

// waitCreatedBy polls the daemon until path's created_by is set.
func waitCreatedBy(t *testing.T, c *client.Client, path string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := c.Stat(context.Background(), path)
		if err == nil && st.Meta != nil && st.Meta.CreatedBy != "" {
			return st.Meta.CreatedBy
		}
		if time.Now().After(deadline) {
			t.Fatalf("created_by of %s never appeared (last: %+v, %v)", path, st, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runApp runs this test binary as a registered app that writes through the
// mount from a child shell.
func runAppProc(t *testing.T, p *proc, app string, writes ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SEMFS_TEST_ROLE=app", "SEMFS_SOCKET="+p.sock,
		"SEMFS_TEST_APP="+app, "SEMFS_TEST_WRITES="+strings.Join(writes, ";"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("app %s: %v\n%s", app, err, out)
	}
}

// TestMountAttributionAndPrivileges starts the real daemon as a subprocess:
// it mounts, drops every capability, and attributes writes of registered
// apps (and their children) through the mount; an unregistered writer is
// recorded as its uid; SIGTERM unmounts.
func TestMountAttributionAndPrivileges(t *testing.T) {
	needFUSE(t)
	p := startDaemon(t, t.TempDir())

	if os.Geteuid() == 0 {
		for _, name := range []string{"CapEff", "CapPrm", "CapInh", "CapBnd", "CapAmb"} {
			if v := capLine(t, p.cmd.Process.Pid, name); strings.Trim(v, "0") != "" {
				t.Errorf("daemon %s = %s after the mount is up; want none", name, v)
			}
		}
	}
	if fstype, mounted := fusefs.MountType(p.mnt); !mounted || !strings.HasPrefix(fstype, "fuse") {
		t.Fatalf("mount at %s: %q, %v", p.mnt, fstype, mounted)
	}
	// Without CAP_SYS_ADMIN the kernel takes no backing files: the daemon
	// serves reads and writes itself (what follows checks they work).
	if !strings.Contains(p.log(), "passthrough=false") {
		t.Errorf("a daemon without capabilities does not log passthrough=false:\n%s", p.log())
	}

	a := filepath.Join(p.mnt, "notes", "a.txt")
	if err := os.MkdirAll(filepath.Dir(a), 0o755); err != nil {
		t.Fatal(err)
	}
	runAppProc(t, p, "notes", a+"=written by notes")
	if got := waitCreatedBy(t, p.c, "/notes/a.txt"); got != "notes" {
		t.Errorf("created_by of a file notes wrote = %q, want notes", got)
	}
	b := filepath.Join(p.mnt, "b.txt")
	runAppProc(t, p, "editor", b+"=written by editor", a+"=rewritten by editor")
	if got := waitCreatedBy(t, p.c, "/b.txt"); got != "editor" {
		t.Errorf("created_by of a file editor wrote = %q, want editor", got)
	}
	if data, err := os.ReadFile(a); err != nil || string(data) != "rewritten by editor" {
		t.Errorf("a.txt after editor's rewrite = %q, %v", data, err)
	}
	// Wait until the rewrite is indexed (the hash matches), then check
	// that created_by did not change.
	want := sha256.Sum256([]byte("rewritten by editor"))
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := p.c.Stat(context.Background(), "/notes/a.txt")
		if err == nil && st.Meta != nil && st.Meta.Hash == hex.EncodeToString(want[:]) {
			if st.Meta.CreatedBy != "notes" {
				t.Errorf("created_by after another app rewrote the file = %q, want notes", st.Meta.CreatedBy)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rewrite never indexed: %+v, %v", st.Meta, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// This test process never registered: its writes are its uid's.
	c := filepath.Join(p.mnt, "c.txt")
	if err := os.WriteFile(c, []byte("unregistered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := waitCreatedBy(t, p.c, "/c.txt"), fmt.Sprintf("uid:%d", os.Getuid()); got != want {
		t.Errorf("created_by of an unregistered writer = %q, want %q", got, want)
	}
	// The bytes are in the backing directory.
	if data, err := os.ReadFile(filepath.Join(p.dir, "data", "b.txt")); err != nil || string(data) != "written by editor" {
		t.Errorf("backing file = %q, %v", data, err)
	}

	if err := p.stop(t); err != nil {
		t.Errorf("daemon exit after SIGTERM: %v\n%s", err, p.log())
	}
	if fstype, mounted := fusefs.MountType(p.mnt); mounted {
		t.Errorf("mount still present after SIGTERM (%s)", fstype)
	}
}

// TestCrashKeepsAcknowledgedWrites kills the daemon with SIGKILL during a
// stream of fsync'd writes through the mount, restarts it on the same
// directories, and checks that every acknowledged write is intact and
// indexed with the right hash.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	needFUSE(t)
	dir := t.TempDir()
	p := startDaemon(t, dir)
	if err := os.Mkdir(filepath.Join(p.mnt, "crash"), 0o755); err != nil {
		t.Fatal(err)
	}
	content := func(i int) []byte {
		return []byte(fmt.Sprintf("file %d\n%s", i, strings.Repeat("acknowledged bytes ", i%300)))
	}
	var (
		mu    sync.Mutex
		acked []int
	)
	writerDone := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			f, err := os.OpenFile(filepath.Join(p.mnt, "crash", fmt.Sprintf("f%05d", i)), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				writerDone <- err
				return
			}
			_, err = f.Write(content(i))
			if err == nil {
				err = f.Sync()
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				writerDone <- err
				return
			}
			mu.Lock()
			acked = append(acked, i)
			mu.Unlock()
		}
	}()
	// Let the stream run, then kill the daemon mid-write.
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 50 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-writerDone:
		t.Logf("writer stopped by the crash: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("writer still running 20s after the daemon was killed")
	}
	<-p.done
	mu.Lock()
	done := slices.Clone(acked)
	mu.Unlock()

	p2 := startDaemon(t, dir)
	for _, i := range done {
		name := fmt.Sprintf("f%05d", i)
		got, err := os.ReadFile(filepath.Join(p2.mnt, "crash", name))
		if err != nil || !bytes.Equal(got, content(i)) {
			t.Fatalf("acknowledged write %s after the crash: %d bytes, %v", name, len(got), err)
		}
		sum := sha256.Sum256(content(i))
		st, err := p2.c.Stat(context.Background(), "/crash/"+name)
		if err != nil || st.Meta == nil || st.Meta.Hash != hex.EncodeToString(sum[:]) {
			t.Fatalf("index row of %s after restart: %+v, %v", name, st.Meta, err)
		}
	}
	doc, err := p2.c.Doctor(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range doc.Checks {
		if c.Name == "index" && !c.OK {
			t.Errorf("index inconsistent after the crash: %s", c.Detail)
		}
	}
	t.Logf("%d acknowledged writes survived the crash", len(done))
}
