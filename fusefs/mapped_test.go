package fusefs

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/hostfs"
)

// TestPassthroughMmapWriteAfterClose maps a file open by passthrough for
// writing, closes the descriptor (RELEASE reaches the tree, which re-reads
// the file then), writes through the mapping and unmaps it. The tree must
// be asked to re-read the file once more, after the mapping went away; a
// plain write and close through the mount must not cause a second re-read.
func TestPassthroughMmapWriteAfterClose(t *testing.T) {
	ctx := context.Background()
	h := hostTree(t)
	var mu sync.Mutex
	var reread []string
	testHookReindex = func(p string) { mu.Lock(); reread = append(reread, p); mu.Unlock() }
	t.Cleanup(func() { testHookReindex = nil })
	got := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), reread...) }
	srv := mountServer(t, h, Options{KeepCache: true})
	needPassthrough(t, srv)
	if err := semfs.WriteFile(ctx, h, "/f", make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(srv.Dir(), "f")

	if err := os.WriteFile(p, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if r := got(); len(r) != 0 {
		t.Fatalf("a plain write and close through the mount re-read %v a second time", r)
	}

	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	time.Sleep(200 * time.Millisecond) // RELEASE reaches the tree
	if r := got(); len(r) != 0 {
		t.Fatalf("re-read %v while the mapping is alive", r)
	}
	copy(m, "mapped")
	if err := syscall.Munmap(m); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(got()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if r := got(); len(r) != 1 || r[0] != "/f" {
		t.Fatalf("after the mapping went away the tree was asked to re-read %v; want [/f]", r)
	}
	if data, _ := semfs.ReadFile(ctx, h, "/f"); string(data[:6]) != "mapped" {
		t.Errorf("the tree holds %q", data[:6])
	}
	// The re-read's own close is not taken for a mapping's.
	time.Sleep(200 * time.Millisecond)
	if r := got(); len(r) != 1 {
		t.Errorf("re-read %v; want once", r)
	}
}

// afterCloseFS runs then, once, right after the tree closed a writable
// file, as a program may act between the tree's re-read at Close and the
// mapping watch.
type afterCloseFS struct {
	*hostfs.FS
	then atomic.Pointer[func()]
}

type afterCloseFile struct {
	semfs.RWFile
	fs *afterCloseFS
}

func (a *afterCloseFS) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	f, err := a.FS.OpenFile(ctx, name, flag, perm)
	if err != nil {
		return f, err
	}
	return afterCloseFile{f, a}, nil
}

func (f afterCloseFile) HostFd() (int, bool) { return semfs.HostFd(f.RWFile) }

func (f afterCloseFile) Close() error {
	err := f.RWFile.Close()
	if then := f.fs.then.Swap(nil); then != nil {
		(*then)()
	}
	return err
}

// TestPassthroughMmapWriteRightAfterClose writes through a mapping and
// unmaps it after the tree re-read the file at the release of its last
// writable handle but before the file is watched for mappings: the tree
// must still be asked to re-read it.
func TestPassthroughMmapWriteRightAfterClose(t *testing.T) {
	ctx := context.Background()
	h := &afterCloseFS{FS: hostTree(t)}
	var mu sync.Mutex
	var reread []string
	testHookReindex = func(p string) { mu.Lock(); reread = append(reread, p); mu.Unlock() }
	t.Cleanup(func() { testHookReindex = nil })
	got := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), reread...) }
	srv := mountServer(t, h, Options{KeepCache: true})
	needPassthrough(t, srv)
	if err := semfs.WriteFile(ctx, h, "/f", make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(srv.Dir(), "f"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	unmapped := make(chan error, 1)
	then := func() {
		copy(m, "mapped")
		unmapped <- syscall.Munmap(m)
	}
	h.then.Store(&then)
	f.Close()
	if err := <-unmapped; err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for len(got()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if r := got(); len(r) != 1 || r[0] != "/f" {
		t.Fatalf("after a write through a mapping unmapped right after the release the tree was asked to re-read %v; want [/f]", r)
	}
	time.Sleep(300 * time.Millisecond)
	if r := got(); len(r) != 1 {
		t.Errorf("re-read %v; want once", r)
	}
}
