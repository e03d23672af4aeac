package fusefs

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
)

// mountHooked mounts fsys with the given test hooks set for the life of the
// mount. The hooks are set before the server starts and cleared after it
// stopped, so its goroutines read them without a data race.
func mountHooked(t *testing.T, fsys semfs.FS, opts Options, onOpen func(context.Context, *node), onRenamed func()) string {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("skipping: /dev/fuse is missing, so no FUSE mount can be made here")
	}
	testHookOpen, testHookRenamed = onOpen, onRenamed
	dir := t.TempDir()
	opts.Logf = t.Logf
	srv, err := Mount(dir, fsys, opts)
	if err != nil {
		testHookOpen, testHookRenamed = nil, nil
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
		srv.Wait()
		testHookOpen, testHookRenamed = nil, nil
	})
	return dir
}

func writeMem(t *testing.T, fsys semfs.FS, p, data string) {
	t.Helper()
	if err := semfs.WriteFile(context.Background(), fsys, p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOpenFileDuringRename holds a rename that replaces an open file in the
// gap between the FS rename and go-fuse moving the name in its own tree.
// A reader of the replaced file must still see that file's size and bytes:
// when nodes resolved their path through go-fuse's tree, the open file's
// GETATTR in that gap stat'ed the new file at the old name, and the reader
// got the new file's size over the old file's bytes (a torn read).
func TestOpenFileDuringRename(t *testing.T) {
	fsys := memfs.New()
	old := strings.Repeat("o", 100)
	repl := strings.Repeat("n", 300_000)
	writeMem(t, fsys, "/f", old)
	writeMem(t, fsys, "/t", repl)
	var armed atomic.Bool
	inGap, release := make(chan struct{}), make(chan struct{})
	// Attribute caching off, so that every stat and read asks the daemon.
	dir := mountHooked(t, fsys, Options{AttrTimeout: -1, EntryTimeout: -1}, nil, func() {
		if armed.CompareAndSwap(true, false) {
			close(inGap)
			<-release
		}
	})
	fd, err := os.Open(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	armed.Store(true)
	renamed := make(chan error, 1)
	go func() { renamed <- os.Rename(filepath.Join(dir, "t"), filepath.Join(dir, "f")) }()
	select {
	case <-inGap:
	case err := <-renamed:
		t.Fatalf("rename finished (%v) without reaching the hook", err)
	case <-time.After(10 * time.Second):
		t.Fatal("rename did not reach the hook in 10 s")
	}
	info, statErr := fd.Stat()
	data, readErr := io.ReadAll(fd)
	close(release)
	if err := <-renamed; err != nil {
		t.Fatalf("rename: %v", err)
	}
	if statErr != nil || readErr != nil {
		t.Fatalf("the open file during the rename: stat %v, read %v", statErr, readErr)
	}
	if info.Size() != int64(len(old)) {
		t.Errorf("fstat of the open file during the rename: size %d; want the opened file's %d", info.Size(), len(old))
	}
	if !bytes.Equal(data, []byte(old)) {
		t.Errorf("read of the open file during the rename: %d bytes (%q…); want the opened file's %d bytes", len(data), data[:min(len(data), 8)], len(old))
	}
	// And the name now holds the replacement.
	if got, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || string(got) != repl {
		t.Errorf("after the rename f holds %d bytes, %v; want the replacement's %d", len(got), err, len(repl))
	}
}

// TestOpenRenamedOver renames another file over a name between the kernel
// resolving the name for open(2) and the OPEN reaching the daemon. open
// with O_TRUNC must succeed on the file the name holds now, as on a local
// file system, not fail with ENOENT because the resolved node lost its name.
func TestOpenRenamedOver(t *testing.T) {
	fsys := memfs.New()
	writeMem(t, fsys, "/f", "old contents")
	writeMem(t, fsys, "/t", "replacement")
	// The hook runs on a server goroutine; what it shares with the test
	// goes through synchronised values (the kernel orders the two, but
	// the race detector cannot see that).
	var mnt atomic.Pointer[string]
	var once sync.Once
	hookErr := make(chan error, 1)
	dir := mountHooked(t, fsys, Options{}, func(_ context.Context, n *node) {
		if n.StableAttr().Mode&syscall.S_IFMT != syscall.S_IFREG {
			return
		}
		once.Do(func() {
			// Served by another request goroutine: the opener holds no
			// directory lock while its OPEN is in flight.
			d := *mnt.Load()
			hookErr <- os.Rename(filepath.Join(d, "t"), filepath.Join(d, "f"))
		})
	}, nil)
	mnt.Store(&dir)
	if _, err := os.Stat(filepath.Join(dir, "f")); err != nil { // the kernel now knows f's node
		t.Fatal(err)
	}
	fd, err := os.OpenFile(filepath.Join(dir, "f"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatalf("open(O_TRUNC) of a name renamed over during the open: %v; want the file it holds now", err)
	}
	if _, err := fd.Write([]byte("mine")); err != nil {
		t.Fatal(err)
	}
	if err := fd.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-hookErr:
		if err != nil {
			t.Fatalf("the rename during the open: %v", err)
		}
	default:
		t.Fatal("the open never reached the daemon's Open")
	}
	got, err := semfs.ReadFile(context.Background(), fsys, "/f")
	if err != nil || string(got) != "mine" {
		t.Errorf("f holds %q, %v; want %q", got, err, "mine")
	}
	if _, err := semfs.Stat(context.Background(), fsys, "/t"); err == nil {
		t.Error("t still exists after being renamed over f")
	}
}

// TestInterruptedOpenCompletes interrupts an open(O_TRUNC) while the daemon
// serves it: the opening thread takes a signal (SIGURG, which Go's runtime
// sends its threads for preemption all the time), so the kernel sends
// INTERRUPT and go-fuse cancels the request's context. The open must still
// complete; it used to reach the FS with the cancelled context and fail
// with EINTR, which a raw open(2), rename(2) or close(2) does not retry.
func TestInterruptedOpenCompletes(t *testing.T) {
	fsys := memfs.New()
	writeMem(t, fsys, "/f", "old contents")
	inOpen := make(chan struct{})
	interrupted := make(chan bool, 1)
	var armed atomic.Bool
	dir := mountHooked(t, fsys, Options{}, func(ctx context.Context, n *node) {
		if !armed.CompareAndSwap(true, false) {
			return
		}
		close(inOpen)
		select {
		case <-ctx.Done():
			interrupted <- true
		case <-time.After(10 * time.Second):
			interrupted <- false
		}
	}, nil)
	p := filepath.Join(dir, "f")
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	tid := make(chan int, 1)
	opened := make(chan error, 1)
	armed.Store(true)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- syscall.Gettid()
		fd, err := syscall.Open(p, syscall.O_WRONLY|syscall.O_TRUNC, 0) // raw: no EINTR retry
		if err == nil {
			syscall.Close(fd)
		}
		opened <- err
	}()
	id := <-tid
	select {
	case <-inOpen:
	case <-time.After(10 * time.Second):
		t.Fatal("the open did not reach the daemon in 10 s")
	}
	if err := syscall.Tgkill(os.Getpid(), id, syscall.SIGURG); err != nil {
		t.Fatal(err)
	}
	if !<-interrupted {
		t.Skip("skipping: the kernel sent no INTERRUPT for a signalled open within 10 s")
	}
	if err := <-opened; err != nil {
		t.Fatalf("open(O_TRUNC) interrupted by a signal: %v; want it to complete", err)
	}
	if got, _ := semfs.ReadFile(context.Background(), fsys, "/f"); len(got) != 0 {
		t.Errorf("f holds %q after open(O_TRUNC); want it truncated", got)
	}
}
