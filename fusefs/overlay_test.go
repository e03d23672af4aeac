package fusefs

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/semfs/semfs/hostfs"
)

// overlay mounts an overlayfs with the given lower directory (a fresh one
// when empty) and returns its merged directory, or skips the test.
func overlay(t *testing.T, lower string) string {
	t.Helper()
	base := t.TempDir()
	for _, d := range []string{"lower", "upper", "work", "merged"} {
		os.Mkdir(filepath.Join(base, d), 0o755)
	}
	if lower == "" {
		lower = filepath.Join(base, "lower")
	}
	merged := filepath.Join(base, "merged")
	if err := syscall.Mount("overlay", merged, "overlay", 0, "lowerdir="+lower+",upperdir="+base+"/upper,workdir="+base+"/work"); err != nil {
		t.Skipf("skipping: mounting an overlay: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(merged, syscall.MNT_DETACH) })
	return merged
}

// passthroughOver mounts a host tree over dir, writes and reads a file
// through the mount and returns whether the server says it uses
// passthrough and how many reads and writes the daemon served itself.
func passthroughOver(t *testing.T, dir string) (said bool, served int64) {
	h, err := hostfs.Open(dir, hostfs.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	c := &countingFS{FS: h}
	srv := mountServer(t, c, Options{KeepCache: true, StatfsDir: dir})
	p := filepath.Join(srv.Dir(), "f")
	// Bigger than cachedReadMax: a small file opened read-only is read
	// through the page cache, by the daemon.
	data := bytes.Repeat([]byte("x"), cachedReadMax+1<<16)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	return srv.Passthrough(), c.reads.Load() + c.writes.Load()
}

// TestPassthroughOnOverlay: a backing directory on overlayfs (a
// container's root) is served by passthrough.
func TestPassthroughOnOverlay(t *testing.T) {
	needPassthrough(t, mountServer(t, hostTree(t), Options{}))
	said, served := passthroughOver(t, overlay(t, ""))
	if !said || served != 0 {
		t.Errorf("over overlayfs Passthrough() = %v and the daemon served %d reads and writes; want true and none", said, served)
	}
}

// TestPassthroughProbedInBackingDir: a backing directory the kernel
// refuses under FUSE (an overlay over an overlay, deeper than the mount's
// stacking depth) while the test binary's file system is accepted:
// Passthrough must say false, as the daemon serves the I/O itself.
func TestPassthroughProbedInBackingDir(t *testing.T) {
	needPassthrough(t, mountServer(t, hostTree(t), Options{}))
	said, served := passthroughOver(t, overlay(t, overlay(t, "")))
	if said && served > 0 {
		t.Errorf("Passthrough() = true but the daemon served %d reads and writes itself", served)
	}
	if said && served == 0 {
		t.Logf("the kernel accepted a nested overlay; nothing to check")
	}
}
