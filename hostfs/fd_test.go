package hostfs_test

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/hostfs"
)

// TestHostFd checks that an open file's host descriptor reads and writes
// the file itself, and that Overlay files hand out none.
func TestHostFd(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	h, err := hostfs.Open(dir, hostfs.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.WriteFile(ctx, "/f", []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := h.OpenFile(ctx, "/f", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fd, ok := semfs.HostFd(f)
	if !ok {
		t.Fatal("a ReadWrite file has no host descriptor")
	}
	if _, err := syscall.Pwrite(fd, []byte("J"), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got, err := os.ReadFile(dir + "/f"); err != nil || string(got) != "Jello" {
		t.Fatalf("host file after a write through the descriptor: %q, %v", got, err)
	}
	r, err := h.Open(ctx, "/f")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fd, ok = semfs.HostFd(r)
	buf := make([]byte, 5)
	if n, err := syscall.Pread(fd, buf, 0); !ok || err != nil || string(buf[:n]) != "Jello" {
		t.Fatalf("read-only file's descriptor (%v) reads %q, %v", ok, buf, err)
	}

	o, err := hostfs.Open(dir, hostfs.Overlay)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	of, err := o.Open(ctx, "/f")
	if err != nil {
		t.Fatal(err)
	}
	defer of.Close()
	if _, ok := semfs.HostFd(of); ok {
		t.Error("an Overlay file hands out a host descriptor")
	}
}
