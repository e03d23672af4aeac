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

// Environment of the daemon's own re-executions (internal, not settings).
const (
	// fuseFDEnv carries the /dev/fuse descriptor a privileged image
	// mounted before exec'ing this one without capabilities.
	fuseFDEnv = "SEMFS_INTERNAL_FUSE_FD"
	// helperFDEnv carries the write end of the unmount helper's pipe.
	helperFDEnv = "SEMFS_INTERNAL_HELPER_FD"
	// helperEnv names the mount point an unmount helper guards; a
	// process started with it runs only the helper (see init).
	helperEnv = "SEMFS_INTERNAL_UNMOUNT_HELPER"
	// helperDroppedEnv marks the helper image that runs with
	// CAP_SYS_ADMIN alone.
	helperDroppedEnv = "SEMFS_INTERNAL_HELPER_DROPPED"
)

func init() {
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(runUnmountHelper(dir))
	}
}

// Securebits (linux/securebits.h).
const (
	secbitNoroot              = 1 << 0
	secbitNorootLocked        = 1 << 1
	secbitNoSetuidFixup       = 1 << 2
	secbitNoSetuidFixupLocked = 1 << 3
)

func lastCap() int {
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return n
		}
	}
	return 40
}

// execWithCapabilities replaces the process image with exe (argv, env)
// holding only the capabilities in keep. Capabilities are per thread and a
// Go program has many, so the sets are emptied on one locked thread and
// that thread execs: the new image starts from that thread's sets alone.
// SECBIT_NOROOT (locked) stops uid 0 from regaining capabilities on this or
// any later exec, the bounding set is emptied, and keep survives the exec
// through the ambient set. It returns only on failure.
func execWithCapabilities(keep []int, exe string, argv, env []string) error {
	runtime.LockOSThread() // never unlocked: this thread execs or the call fails
	keepSet := map[int]bool{}
	for _, c := range keep {
		keepSet[c] = true
	}
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, secbitNoroot|secbitNorootLocked|secbitNoSetuidFixup|secbitNoSetuidFixupLocked, 0, 0, 0); err != nil {
		return fmt.Errorf("setting securebits: %w", err)
	}
	for c := 0; c <= lastCap(); c++ {
		if keepSet[c] {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != syscall.EINVAL {
			return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	for c := range keepSet {
		bit := uint32(1) << (c % 32)
		data[c/32].Effective |= bit
		data[c/32].Permitted |= bit
		data[c/32].Inheritable |= bit
	}
	if _, _, e := syscall.RawSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("capset: %w", e)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != syscall.EINVAL {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	for c := range keepSet {
		if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_RAISE, uintptr(c), 0, 0); err != nil {
			return fmt.Errorf("keeping capability %d: %w", c, err)
		}
	}
	return syscall.Exec(exe, argv, env)
}

// startUnmountHelper starts the process that keeps CAP_SYS_ADMIN to detach
// the mount at dir once the daemon — which drops it — stops or dies. It
// returns the write end of the helper's stdin pipe, without close-on-exec:
// closing it (explicitly, or by the daemon's death) makes the helper
// unmount.
func startUnmountHelper(dir string) (*os.File, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r, os.Stderr, os.Stderr
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, err
	}
	go cmd.Wait() // reaped by whichever image is running; see waitHelper
	if _, err := unix.FcntlInt(w.Fd(), unix.F_SETFD, 0); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// stopHelper closes the helper's pipe and waits until the mount at dir is
// gone.
func stopHelper(pipe *os.File, dir string, mounted func(string) bool) error {
	pipe.Close()
	deadline := time.Now().Add(10 * time.Second)
	for mounted(dir) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the unmount helper did not detach %s within 10s", dir)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// runUnmountHelper re-executes itself holding CAP_SYS_ADMIN alone, then
// waits for stdin to close (the daemon stopped or died) and lazily unmounts
// dir.
func runUnmountHelper(dir string) int {
	if os.Getenv(helperDroppedEnv) == "" && os.Geteuid() == 0 {
		exe, err := os.Executable()
		if err == nil {
			err = execWithCapabilities([]int{capSysAdmin}, exe, []string{exe}, append(os.Environ(), helperDroppedEnv+"=1"))
		}
		fmt.Fprintf(os.Stderr, "semfs unmount helper: keeping CAP_SYS_ADMIN alone failed, running with full privileges: %v\n", err)
	}
	io.Copy(io.Discard, os.Stdin)
	if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil && err != syscall.EINVAL {
		fmt.Fprintf(os.Stderr, "semfs unmount helper: unmounting %s: %v\n", dir, err)
		return 1
	}
	return 0
}
