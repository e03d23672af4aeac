package fusefs_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/posixtest"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/fusefs"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/semfstest"
)

// mount serves fsys at a fresh directory for the duration of the test.
func mount(t *testing.T, fsys semfs.FS, opts fusefs.Options) string {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("skipping: /dev/fuse is missing, so no FUSE mount can be made here")
	}
	dir := t.TempDir()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	srv, err := fusefs.Mount(dir, fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A file a test dropped without closing (semfstest's CancelledRead
		// drops the file of an Open that succeeded) keeps the mount busy;
		// its finalizer closes it, served by this process, before the
		// unmount. A mount left busy would hang this process at exit.
		runtime.GC()
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
			exec.Command("umount", "-l", dir).Run()
		}
	})
	return dir
}

// posixSkips are the posixtest cases that test features semfs trees do not
// have, with the reason.
var posixSkips = map[string]string{
	"SymlinkReadlink":     "semfs trees hold no symlinks",
	"SetattrSymlink":      "semfs trees hold no symlinks",
	"OpenSymlinkRace":     "semfs trees hold no symlinks",
	"Link":                "semfs trees hold no hard links",
	"LinkUnlinkRename":    "semfs trees hold no hard links",
	"XAttr":               "semfs keeps metadata as tags, not extended attributes",
	"XAttrLarge":          "semfs keeps metadata as tags, not extended attributes",
	"FcntlFlockLocksFile": "the mount implements no POSIX record locks (fcntl F_SETLK is not shared between descriptors)",
}

func TestPosix(t *testing.T) {
	for name, fn := range posixtest.All {
		t.Run(name, func(t *testing.T) {
			if why, skip := posixSkips[name]; skip {
				t.Skip(why)
			}
			dir := mount(t, memfs.New(), fusefs.Options{})
			fn(t, dir)
		})
	}
}

// TestPosixHost runs posixtest through a mount of a host tree, the daemon's
// default: files are read and written by passthrough where the kernel
// allows it, and pages are kept across opens.
func TestPosixHost(t *testing.T) {
	for name, fn := range posixtest.All {
		t.Run(name, func(t *testing.T) {
			if why, skip := posixSkips[name]; skip {
				t.Skip(why)
			}
			h, err := hostfs.Open(t.TempDir(), hostfs.ReadWrite)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close() })
			dir := mount(t, h, fusefs.Options{KeepCache: true})
			fn(t, dir)
		})
	}
}

// TestPosixOpenFree runs posixtest through a mount of a host tree in the
// open-free mode (Options.OpenFree): files are opened and closed without a
// request and read and written without a handle.
func TestPosixOpenFree(t *testing.T) {
	for name, fn := range posixtest.All {
		t.Run(name, func(t *testing.T) {
			if why, skip := posixSkips[name]; skip {
				t.Skip(why)
			}
			h, err := hostfs.Open(t.TempDir(), hostfs.ReadWrite)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close() })
			dir := mount(t, h, fusefs.Options{KeepCache: true, OpenFree: true})
			fn(t, dir)
		})
	}
}

// TestConformance runs the project's conformance suite through the mount:
// memfs is mounted once, and each case gets a fresh directory of the mount
// opened as a host tree.
func TestConformance(t *testing.T) {
	dir := mount(t, memfs.New(), fusefs.Options{})
	n := 0
	semfstest.Run(t, func(t *testing.T) semfs.FS {
		n++
		sub := filepath.Join(dir, fmt.Sprintf("case%d", n))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		h, err := hostfs.Open(sub, hostfs.ReadWrite)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		return h
	})
}
