package daemon

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// capSysAdmin is CAP_SYS_ADMIN's number.
const capSysAdmin = 21

// helperEnv names the mount point an unmount helper guards; a process
// started with it set runs only the helper (see init).
const helperEnv = "SEMFS_INTERNAL_UNMOUNT_HELPER"

func init() {
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(runUnmountHelper(dir))
	}
}

// DropCapabilities empties the process's effective, permitted, inheritable,
// ambient and bounding capability sets on every thread, keeping the
// capabilities listed in keep. It needs CAP_SETPCAP for the bounding set,
// which root has.
func DropCapabilities(keep ...int) error {
	keepSet := map[int]bool{}
	for _, c := range keep {
		keepSet[c] = true
	}
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	// Ambient first (it cannot hold what permitted lacks), then bounding,
	// which needs CAP_SETPCAP still in the effective set.
	if _, _, e := syscall.AllThreadsSyscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); e != 0 && e != syscall.EINVAL {
		return fmt.Errorf("clearing ambient capabilities: %w", e)
	}
	for c := 0; c <= last; c++ {
		if keepSet[c] {
			continue
		}
		if _, _, e := syscall.AllThreadsSyscall(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0); e != 0 && e != syscall.EINVAL {
			return fmt.Errorf("dropping capability %d from the bounding set: %w", c, e)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	for c := range keepSet {
		data[c/32].Effective |= 1 << (c % 32)
		data[c/32].Permitted |= 1 << (c % 32)
	}
	_, _, e := syscall.AllThreadsSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	runtime.KeepAlive(&hdr)
	runtime.KeepAlive(&data)
	if e != 0 {
		if e == syscall.ENOTSUP {
			return fmt.Errorf("capset on all threads is unavailable in a binary built with cgo: %w", e)
		}
		return fmt.Errorf("capset: %w", e)
	}
	return nil
}

// unmountHelper is the process that keeps CAP_SYS_ADMIN to detach the mount
// once the daemon, which dropped it, stops or dies.
type unmountHelper struct {
	cmd  *exec.Cmd
	pipe io.WriteCloser
}

func startUnmountHelper(dir string) (*unmountHelper, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	pipe, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &unmountHelper{cmd: cmd, pipe: pipe}, nil
}

// unmount asks the helper to detach the mount and waits for it.
func (h *unmountHelper) unmount() error {
	h.pipe.Close()
	done := make(chan error, 1)
	go func() { done <- h.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("unmount helper: %w", err)
		}
		return nil
	case <-time.After(10 * time.Second):
		h.cmd.Process.Kill()
		return fmt.Errorf("unmount helper did not finish in 10s")
	}
}

// runUnmountHelper keeps only CAP_SYS_ADMIN, waits for stdin to close (the
// daemon stopped or died), then lazily unmounts dir.
func runUnmountHelper(dir string) int {
	if err := DropCapabilities(capSysAdmin); err != nil {
		fmt.Fprintf(os.Stderr, "semfs unmount helper: %v\n", err)
	}
	io.Copy(io.Discard, os.Stdin)
	if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil && err != syscall.EINVAL {
		fmt.Fprintf(os.Stderr, "semfs unmount helper: unmounting %s: %v\n", dir, err)
		return 1
	}
	return 0
}
