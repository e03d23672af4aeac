package daemon_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/client"
)

// mmapWriteAfterClose writes name through the mount and waits for its
// row, waits settle, opens the file for writing, maps it shared, closes
// the descriptor (RELEASE reaches the daemon, which indexes the file
// then), waits delay, writes through the mapping and unmaps it. It
// reports whether the row got the hash of the bytes on disk within
// timeout, and the last hash seen. Under passthrough the mapped writes
// never pass through the daemon.
func mmapWriteAfterClose(t *testing.T, c *client.Client, mnt, name string, settle, delay, timeout time.Duration) (bool, string, string) {
	t.Helper()
	p := filepath.Join(mnt, name)
	v1 := []byte(strings.Repeat("plain words in a mapped file\n", 200))
	if err := os.WriteFile(p, v1, 0o644); err != nil {
		t.Fatal(err)
	}
	waitHash(t, c, name, v1)
	time.Sleep(settle)
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, len(v1), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	time.Sleep(delay)
	copy(m[100:], "quetzalcoatl")
	if err := syscall.Munmap(m); err != nil {
		t.Fatal(err)
	}
	v2 := bytes.Clone(v1)
	copy(v2[100:], "quetzalcoatl")
	sum := sha256.Sum256(v2)
	want := hex.EncodeToString(sum[:])
	var last string
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		st, err := c.Stat(context.Background(), name)
		if err == nil && st.Meta != nil {
			if last = st.Meta.Hash; last == want {
				return true, last, want
			}
		}
	}
	return false, last, want
}

// mountedWithPassthrough is mountedInProcess with passthrough, which the
// mapping tests below need: they map files of a mount this process
// serves. Without passthrough the mapping's pages are written back through
// the mount, and munmap waits for that writeback in fuse_vma_close while
// it holds this process's mmap lock (for reading); a daemon thread that
// then maps memory (the Go heap growing, a new thread's stack) waits for
// that lock (for writing), and from then on every page fault of the
// process waits behind it: the WRITE that munmap waits for is never
// served. One CI run hung for good in that munmap; mapping memory in the
// handler of that WRITE reproduces it every time (kernel stacks: munmap in
// write_inode_now, the handler in vm_mmap_pgoff, any page fault in
// lock_mm_and_find_vma). TestMmapThroughDaemonIndexed covers the mapping
// without passthrough with the daemon in another process.
func mountedWithPassthrough(t *testing.T) (mnt string, c *client.Client) {
	t.Helper()
	t.Setenv("SEMFS_DEBUG_MAPPED", "1") // the mapping watch's decisions, logged on failure
	mnt, _, c, log := mountedInProcess(t, "-passthrough=true")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("daemon log:\n%s", log.String())
		}
	})
	if !strings.Contains(log.String(), "passthrough=true") {
		t.Skip("skipping: the kernel gave no passthrough (not root?), and this process cannot safely map files of a mount it serves without it")
	}
	return mnt, c
}

// TestMmapWriteAfterCloseIndexed writes through a mapping well after
// close(2), with passthrough (see mountedWithPassthrough): the mapping is
// of the backing file, and the daemon learns of the writes from the
// mapping watch (fusefs/mapped.go).
func TestMmapWriteAfterCloseIndexed(t *testing.T) {
	mnt, c := mountedWithPassthrough(t)
	if ok, last, want := mmapWriteAfterClose(t, c, mnt, "/m.txt", 0, 300*time.Millisecond, 5*time.Second); !ok {
		t.Fatalf("after 5s the row of /m.txt has hash %.12s, not the hash of the bytes on disk %.12s", last, want)
	}
}

// TestMmapWriteSoonAfterCloseIndexed writes and unmaps the mapping from
// 0 to 40 ms after close(2), while the daemon may still be re-reading the
// file at RELEASE: the row must get the hash of the bytes on disk
// whenever the write lands.
func TestMmapWriteSoonAfterCloseIndexed(t *testing.T) {
	mnt, c := mountedWithPassthrough(t)
	for i, d := range []time.Duration{0, 0, 1 * time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 5 * time.Millisecond, 8 * time.Millisecond, 12 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond} {
		// settle: past the mapping watch's settling time after the
		// first write's release.
		if ok, last, want := mmapWriteAfterClose(t, c, mnt, fmt.Sprintf("/m%d.txt", i), 300*time.Millisecond, d, 3*time.Second); !ok {
			t.Errorf("delay %v: after 3s row hash %.12s, bytes on disk %.12s", d, last, want)
		}
	}
}
