package fusefs

import (
	"context"
	"fmt"
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
	got := recordRereads(t)
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
	got := recordRereads(t)
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

// watchFile numbers the host file at host as path p of tr and watches it
// for writes through mappings, as the release of its last writable
// passthrough handle does. It returns the number.
func watchFile(t *testing.T, tr *tree, host, p string) uint64 {
	t.Helper()
	ino := tr.ino(p, syscall.S_IFREG)
	fd, err := syscall.Open(host, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	tr.mapped.add(ino, p, tr.mapped.prepare(fd), nil)
	if !watching(tr, ino) {
		t.Fatalf("%s not watched", p)
	}
	return ino
}

func watching(tr *tree, ino uint64) bool {
	tr.mapped.mu.Lock()
	defer tr.mapped.mu.Unlock()
	return tr.mapped.byIno[ino] != nil
}

// TestRemovedFileNotWatched: a file removed, replaced or renamed over is
// no longer watched for writes through mappings; the watch's descriptor
// would keep the removed file's inode, and its blocks, for as long as the
// mount lives.
func TestRemovedFileNotWatched(t *testing.T) {
	for _, c := range []struct {
		name   string
		remove func(s *Server)
	}{
		{"unlink", func(s *Server) { s.t.forget("/d/f", false) }},
		{"rmdir parent", func(s *Server) { s.t.forget("/d", true) }},
		{"rename over", func(s *Server) { s.t.move("/d/g", "/d/f", false) }},
		{"Removed", func(s *Server) { s.Removed("/d/f") }},
		{"Removed parent", func(s *Server) { s.Removed("/d") }},
		{"Replaced", func(s *Server) { s.Replaced("/d/f") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Server{t: newTree(nil, Options{Logf: t.Logf})}
			defer s.t.mapped.close()
			s.t.ino("/d", syscall.S_IFDIR)
			s.t.ino("/d/g", syscall.S_IFREG)
			host := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(host, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			ino := watchFile(t, s.t, host, "/d/f")
			c.remove(s)
			if watching(s.t, ino) {
				t.Errorf("/d/f still watched after %s", c.name)
			}
		})
	}
}

// TestNoWatchAfterClose: a writable passthrough handle released after the
// unmount (a lazy detach leaves handles open) starts no watch, whose
// inotify descriptor and goroutine nothing would end.
func TestNoWatchAfterClose(t *testing.T) {
	tr := newTree(nil, Options{Logf: t.Logf})
	tr.mapped.close() // unmounted before any release left a file watched
	host := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(host, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Open(host, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	ino := tr.ino("/f", syscall.S_IFREG)
	tr.mapped.add(ino, "/f", tr.mapped.prepare(fd), nil)
	tr.mapped.mu.Lock()
	started, watched := tr.mapped.ifd != nil, len(tr.mapped.byIno)
	tr.mapped.mu.Unlock()
	if started || watched > 0 {
		t.Errorf("after close: inotify started %v, files watched %d; want none", started, watched)
		tr.mapped.mu.Lock()
		tr.mapped.closed = false
		tr.mapped.mu.Unlock()
		tr.mapped.close()
	}
}

// recordRereads records the paths the mount asks the tree to re-read
// (testHookReindex) until the test ends; the returned func lists them.
func recordRereads(t *testing.T) func() []string {
	var mu sync.Mutex
	var reread []string
	testHookReindex = func(p string) { mu.Lock(); reread = append(reread, p); mu.Unlock() }
	t.Cleanup(func() { testHookReindex = nil })
	return func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), reread...) }
}

// TestWatchSettlesOnce: of the closes of a watched file that leave its
// status unchanged, only the first after a release is taken for the
// kernel's close of the released handle's backing file; a later one, and
// any on the watch added again after a re-read, re-reads the file. A
// write fault through a mapping stamps the file before its bytes land,
// so an unchanged status after a re-read proves nothing.
func TestWatchSettlesOnce(t *testing.T) {
	dir := t.TempDir()
	h, err := hostfs.Open(dir, hostfs.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	host := filepath.Join(dir, "f")
	if err := os.WriteFile(host, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	rereads := recordRereads(t)
	kept := make(chan string, 8)
	testHookKept = func(p string) { kept <- p }
	t.Cleanup(func() { testHookKept = nil })
	tr := newTree(h, Options{Logf: t.Logf})
	defer tr.mapped.close()
	ino := tr.ino("/f", syscall.S_IFREG)

	// closeUnchanged closes a writable descriptor of the file without
	// writing: an IN_CLOSE_WRITE, the status unchanged.
	closeUnchanged := func() {
		fd, err := syscall.Open(host, syscall.O_WRONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		syscall.Close(fd)
	}
	waitRereads := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); len(rereads()) < n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("re-reads %v, want %d", rereads(), n)
			}
		}
		if r := rereads(); len(r) != n {
			t.Fatalf("re-reads %v, want %d", r, n)
		}
	}

	fd, err := syscall.Open(host, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	opath := tr.mapped.prepare(fd) // as a release does: the tree's own close, then the watch
	syscall.Close(fd)
	tr.mapped.add(ino, "/f", opath, nil)
	closeUnchanged() // the released handle's backing file
	select {
	case p := <-kept:
		if p != "/f" {
			t.Fatalf("kept %q", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the first close after the release was not taken for the handle's; re-reads %v", rereads())
	}
	closeUnchanged() // a mapping unmapped: its fault stamped the file before the watch
	waitRereads(1)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		tr.mapped.mu.Lock()
		again := len(tr.mapped.byWd) == 1 // the re-read removed the watch
		tr.mapped.mu.Unlock()
		if again {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the file was not watched again after its re-read")
		}
	}
	closeUnchanged() // on the watch added again after the re-read
	waitRereads(2)
	if len(kept) != 0 {
		t.Fatalf("a later close was taken for the released handle's")
	}
	if !watching(tr, ino) {
		t.Fatal("the file is no longer watched after its re-reads")
	}
}

// TestWatchEvictsOldest: beyond maxMapped watched files, each new watch
// ends the oldest one still watched; files whose watch ended otherwise
// (opened for writing again) are not counted, and the eviction order
// does not grow without bound with such files.
func TestWatchEvictsOldest(t *testing.T) {
	tr := newTree(nil, Options{Logf: t.Logf})
	defer tr.mapped.close()
	dir := t.TempDir()
	host := func(i int) string {
		h := filepath.Join(dir, fmt.Sprintf("f%04d", i))
		if err := os.WriteFile(h, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return h
	}
	const n = maxMapped + 40
	inos := make([]uint64, n)
	for i := range n {
		inos[i] = watchFile(t, tr, host(i), fmt.Sprintf("/f%04d", i))
		if i == 10 {
			tr.mapped.drop(inos[5]) // opened for writing again: no longer counts
		}
	}
	// 41 watches went beyond the bound with one dropped: the 39 oldest
	// still watched (0–4 and 6–39) were evicted.
	for i, ino := range inos {
		want := i >= 40
		if got := watching(tr, ino); got != want {
			t.Errorf("file %d watched %v, want %v", i, got, want)
		}
	}
	// Watching and dropping files over and over keeps the order bounded
	// (each watch evicts one of the files above, each drop ends it).
	g := []string{host(n), host(n + 1), host(n + 2)}
	for i := range 8 * maxMapped {
		tr.mapped.drop(watchFile(t, tr, g[i%3], fmt.Sprintf("/g%d", i%3)))
	}
	tr.mapped.mu.Lock()
	watched, order := len(tr.mapped.byIno), len(tr.mapped.order)
	tr.mapped.mu.Unlock()
	if watched != maxMapped-1 || order > 2*maxMapped+1 {
		t.Errorf("%d files watched, %d in the eviction order; want %d and at most %d", watched, order, maxMapped-1, 2*maxMapped+1)
	}
}
