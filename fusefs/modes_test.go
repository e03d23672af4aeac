package fusefs

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs"
)

// TestOpenWithoutFdRightAfterPassthroughClose: the kernel leaves
// passthrough mode at close(2) but sends RELEASE after; an open without a
// host descriptor made in between must not be refused with ETXTBSY for a
// handle that is gone.
func TestOpenWithoutFdRightAfterPassthroughClose(t *testing.T) {
	h := hostTree(t)
	tree := &noFdFor{FS: h, path: "/f"}
	testHookRelease = func() { time.Sleep(50 * time.Millisecond) } // RELEASE late
	t.Cleanup(func() { testHookRelease = nil })                    // after the unmount
	srv := mountServer(t, tree, Options{KeepCache: true})
	needPassthrough(t, srv)
	p := filepath.Join(srv.Dir(), "f")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	tree.on.Store(false)
	a, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	tree.on.Store(true)
	if got, err := os.ReadFile(p); err != nil || string(got) != "hello" {
		t.Fatalf("open without a descriptor right after the passthrough handle's close: %q, %v; want hello", got, err)
	}
}

// noFdFile is an open file without a host descriptor.
type noFdFile struct{}

func (noFdFile) Stat() (fs.FileInfo, error) { return nil, fs.ErrInvalid }
func (noFdFile) Read([]byte) (int, error)   { return 0, io.EOF }
func (noFdFile) Close() error               { return nil }

// fdFile is an open host file that hands out its descriptor.
type fdFile struct{ *os.File }

func (f fdFile) HostFd() (int, bool) { return int(f.Fd()), true }

// TestOpenWithoutFdWhilePassthroughReopened: an open without a host
// descriptor waits for the file's passthrough handle to be released; if
// that handle is released and another passthrough open of the file made
// while it sleeps, the open must see the new handle and be refused, not be
// admitted against the count the released handle left behind.
func TestOpenWithoutFdWhilePassthroughReopened(t *testing.T) {
	tr := newTree(nil, Options{})
	tr.passthrough.Store(true)
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	open := func() *handle {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return &handle{t: tr, ro: fdFile{f}}
	}
	const ino = 7
	first := open()
	if _, _, errno := tr.opened(ino, first); errno != 0 {
		t.Fatal(errno)
	}
	// The first of the waiter's sleeps releases the handle and opens the
	// file by passthrough again, so that the waiter wakes to a count it
	// did not hold. Done inside the sleep, not on a timer beside it, so
	// the waiter cannot look in between the release and the reopen.
	second := open()
	waits := 0
	tr.releaseWait = func(d time.Duration) {
		waits++
		if waits == 1 {
			tr.closed(first)
			if _, _, errno := tr.opened(ino, second); errno != 0 {
				t.Error(errno)
			}
			return
		}
		time.Sleep(d)
	}
	_, _, errno := tr.opened(ino, &handle{t: tr, ro: noFdFile{}})
	if waits == 0 {
		t.Fatal("the open without a descriptor did not wait for the passthrough handle's release")
	}
	tr.mu.Lock()
	c := *tr.modes[ino]
	tr.mu.Unlock()
	if errno == 0 {
		t.Errorf("an open without a descriptor was admitted while the file is open by passthrough (count %+v)", c)
	}
	if c.passthrough != 1 || c.cached != 0 {
		t.Errorf("count %+v; want one passthrough handle and no cached one", c)
	}
}

// TestOpenWaitingForReleaseHoldsNoLock: an open without a host descriptor
// of a file open by passthrough waits for the passthrough handle to be
// released. A rename made meanwhile, and a lookup beside it, must not wait
// with it. The open is held inside its wait (the tree's releaseWait) until
// both are done, so the test does not depend on how long the wait is.
func TestOpenWaitingForReleaseHoldsNoLock(t *testing.T) {
	ctx := context.Background()
	h := hostTree(t)
	tree := &noFdFor{FS: h, path: "/f"}
	for _, d := range []string{"/a", "/b"} {
		if err := semfs.Mkdir(ctx, h, d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := semfs.WriteFile(ctx, h, "/a/x", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := semfs.WriteFile(ctx, h, "/f", []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := mountServer(t, tree, Options{})
	needPassthrough(t, srv)
	mnt := srv.Dir()
	reader, err := os.Open(filepath.Join(mnt, "f")) // by passthrough, held
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	held, release := make(chan struct{}), make(chan struct{})
	var first sync.Once
	srv.t.mu.Lock()
	srv.t.releaseWait = func(d time.Duration) {
		first.Do(func() { close(held); <-release })
		time.Sleep(d)
	}
	srv.t.mu.Unlock()
	var unheld sync.Once
	letGo := func() { unheld.Do(func() { close(release) }) }
	defer letGo()
	tree.on.Store(true)
	refused := make(chan error, 1)
	go func() { // waits for the reader's release, then is refused
		f, err := os.Open(filepath.Join(mnt, "f"))
		if err == nil {
			f.Close()
		}
		refused <- err
	}()
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("an open without a descriptor beside a passthrough reader did not wait for its release")
	}
	renamed, looked := make(chan error, 1), make(chan error, 1)
	go func() { renamed <- os.Rename(filepath.Join(mnt, "a/x"), filepath.Join(mnt, "a/y")) }()
	go func() { _, err := os.Stat(filepath.Join(mnt, "b/nothing")); looked <- err }()
	deadline := time.After(10 * time.Second)
	for renamed != nil || looked != nil {
		select {
		case err := <-renamed:
			if err != nil {
				t.Fatalf("rename while an open waits: %v", err)
			}
			renamed = nil
		case err := <-looked:
			if !os.IsNotExist(err) {
				t.Fatalf("stat of a missing name while an open waits: %v", err)
			}
			looked = nil
		case <-deadline:
			t.Fatalf("after 10 s, rename done: %v, lookup done: %v; both waited for an open held in its wait for a release",
				renamed == nil, looked == nil)
		}
	}
	letGo()
	if err := <-refused; !errors.Is(err, syscall.ETXTBSY) {
		t.Errorf("open without a descriptor beside a passthrough reader: %v; want ETXTBSY", err)
	}
}
