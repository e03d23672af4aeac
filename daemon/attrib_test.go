package daemon

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestResolveThreadsAndChildren registers this process and checks that a
// thread of it and a child process resolve to the app, and that an
// unrelated process (the parent of this test) does not.
func TestResolveThreadsAndChildren(t *testing.T) {
	a := NewApps()
	if got := a.Resolve(int32(os.Getpid())); got != "" {
		t.Fatalf("before registering: %q", got)
	}
	if err := a.Register(int32(os.Getpid()), "notes"); err != nil {
		t.Fatal(err)
	}
	if got := a.Resolve(int32(os.Getpid())); got != "notes" {
		t.Errorf("registered process resolves to %q", got)
	}
	// A thread other than the main one.
	done := make(chan int32)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		done <- int32(unix.Gettid())
	}()
	if tid := <-done; a.Resolve(tid) != "notes" {
		t.Errorf("thread %d of the registered process resolves to %q", tid, a.Resolve(tid))
	}
	// A child process.
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if got := a.Resolve(int32(cmd.Process.Pid)); got != "notes" {
		t.Errorf("child resolves to %q", got)
	}
	if got := a.Resolve(int32(os.Getppid())); got != "" {
		t.Errorf("the parent of the registered process resolves to %q", got)
	}
	p := a.Principal(uint32(os.Getppid()), 1000, 1000)
	if p.App != "" || p.ID != "uid:1000" {
		t.Errorf("unregistered principal = %+v", p)
	}
	// A second registration below the first wins for its subtree.
	if err := a.Register(int32(cmd.Process.Pid), "editor"); err != nil {
		t.Fatal(err)
	}
	if got := a.Resolve(int32(cmd.Process.Pid)); got != "editor" {
		t.Errorf("re-registered child resolves to %q", got)
	}
	if !strings.Contains(a.Resolve(int32(os.Getpid())), "notes") {
		t.Error("registering a child changed the parent's app")
	}
}

// TestRegistrationEndsWithProcess: a descendant of a registered process
// that outlives it (reparented) is attributed to it while it runs, even
// from the cache, and no longer a second after it exited.
func TestRegistrationEndsWithProcess(t *testing.T) {
	a := NewApps()
	// The registered shell starts a long sleep and exits at once.
	sh := exec.Command("sh", "-c", "sleep 30 & echo $!; sleep 0.3")
	out, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	if err := a.Register(int32(sh.Process.Pid), "app"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	child, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		t.Fatalf("child pid %q: %v", buf[:n], err)
	}
	defer unix.Kill(child, unix.SIGKILL)
	if got := a.Resolve(int32(child)); got != "app" {
		t.Fatalf("the child of the running registered process resolves to %q; want app", got)
	}
	sh.Wait()
	time.Sleep(pruneEvery + 100*time.Millisecond)
	if got := a.Resolve(int32(child)); got != "" {
		t.Errorf("a second after the registered process exited, its orphaned child still resolves to %q", got)
	}
	a.mu.Lock()
	left := len(a.apps)
	a.mu.Unlock()
	if left != 0 {
		t.Errorf("%d registrations of exited processes kept", left)
	}
}
