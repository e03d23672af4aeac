package fusefs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/hostfs"
)

// TestMappedFileNotReadFromKeptPages: a program writes a small file
// through a shared mapping of a passthrough handle it has closed (the
// mapping outlives close(2): the kernel's vma holds the backing file, so
// RELEASE comes at close). A store through the mapping to a page already
// dirty changes neither mtime nor ctime, so pages kept by stamp would go
// stale: a file that may be mapped for writing (watched) is read by
// passthrough, never from kept pages.
func TestMappedFileNotReadFromKeptPages(t *testing.T) {
	ctx := context.Background()
	h := hostTree(t)
	srv := mountServer(t, h, Options{KeepCache: true})
	needPassthrough(t, srv)
	if err := semfs.WriteFile(ctx, h, "/f", bytes.Repeat([]byte("."), 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(srv.Dir(), "f")
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	copy(m, "AAAA")
	f.Close()
	time.Sleep(300 * time.Millisecond) // RELEASE reaches the tree
	if data, err := os.ReadFile(p); err != nil || string(data[:4]) != "AAAA" {
		t.Fatalf("first read: %q %v", data[:4], err)
	}
	copy(m, "BBBB") // same page, still dirty: no timestamp update
	time.Sleep(100 * time.Millisecond)
	host, _ := semfs.ReadFile(ctx, h, "/f")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(data[:4]) != string(host[:4]) {
		t.Errorf("read through the mount %q, the host file holds %q (stale pages kept)", data[:4], host[:4])
	}
	// After the mapping is gone (and the tree re-read the file) and the
	// dirty page is written back, the stamp is still the one the stale
	// pages were recorded with.
	syscall.Munmap(m)
	syscall.Sync()
	time.Sleep(500 * time.Millisecond)
	if data, _ := os.ReadFile(p); string(data[:4]) != "BBBB" {
		t.Errorf("after munmap + sync the mount still reads %q", data[:4])
	}
}

// TestOldReaderDoesNotPoisonNewPages: the file is replaced behind the
// mount, unreported (a host process or a second daemon writing the
// backing directory: a temporary file renamed over it), while a reader
// holds the old one. Reads by the old handle load the old bytes into the
// number's pages; the opens of the new file must neither read them nor
// record a stamp that would keep them for later opens.
func TestOldReaderDoesNotPoisonNewPages(t *testing.T) {
	p, hp := mountKeptFile(t, "old contents\n")
	r1, err := os.Open(p) // cached handle on the old host file
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	// Replaced behind the mount: written whole and renamed over.
	if err := os.WriteFile(hp+".tmp", []byte("NEW CONTENTS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(hp+".tmp", hp); err != nil {
		t.Fatal(err)
	}
	// The kernel learns the new attributes (auto_inval_data drops the
	// pages for the changed mtime now, not later).
	time.Sleep(1100 * time.Millisecond)
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	r2, err := os.Open(p) // records the new file's stamp
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if n, _ := r1.ReadAt(buf, 0); string(buf[:n]) != "old contents\n" { // loads the old bytes into the page cache
		t.Errorf("the old handle read %q; it holds the old file", buf[:n])
	}
	if n, _ := r2.ReadAt(buf, 0); string(buf[:n]) != "NEW CONTENTS\n" {
		t.Errorf("the new handle read %q after the old handle read", buf[:n])
	}
	r2.Close()
	for i := range 3 {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != "NEW CONTENTS\n" {
			t.Errorf("open %d after the replacement reads %q; the host file holds the new bytes", i, data)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestInPlaceRewriteBehindMountSeen: in-place rewrites behind the mount
// (same size, right after a read through the mount, so within one
// timestamp tick) are seen by the next open: the stamp's times are
// fine-grained once queried (kernels from 6.13; older kernels and some
// file systems stamp by the tick, where a rewrite within the tick of the
// last open can be missed until the file changes again).
func TestInPlaceRewriteBehindMountSeen(t *testing.T) {
	p, hp := mountKeptFile(t, "v0000\n")
	stale := 0
	for i := 1; i <= 300; i++ {
		os.ReadFile(p)
		want := []byte{'v', byte('0' + i/1000%10), byte('0' + i/100%10), byte('0' + i/10%10), byte('0' + i%10), '\n'}
		f, err := os.OpenFile(hp, os.O_WRONLY, 0) // in place, no truncate
		if err != nil {
			t.Fatal(err)
		}
		f.WriteAt(want, 0)
		f.Close()
		if got, _ := os.ReadFile(p); string(got) != string(want) {
			stale++
		}
	}
	if stale > 0 {
		t.Errorf("%d of 300 rewrites in place were not seen by the next open", stale)
	}
}

// mountKeptFile mounts a new host directory holding /f with data, pages
// kept across opens (passthrough needed), and returns f's path on the
// mount and in the host directory.
func mountKeptFile(t *testing.T, data string) (mnt, host string) {
	t.Helper()
	dir := t.TempDir()
	h, err := hostfs.Open(dir, hostfs.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	srv := mountServer(t, h, Options{KeepCache: true})
	needPassthrough(t, srv)
	if err := semfs.WriteFile(context.Background(), h, "/f", []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(srv.Dir(), "f"), filepath.Join(dir, "f")
}
