package fusefs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/fusefs"
	"github.com/semfs/semfs/memfs"
)

// TestMain doubles as a mounting helper process (FUSEFS_TEST_MOUNT=dir)
// for the stale-mount test: it mounts memfs at dir, prints "ready" and
// serves until killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("FUSEFS_TEST_MOUNT"); dir != "" {
		if _, err := fusefs.Mount(dir, memfs.New(), fusefs.Options{}); err != nil {
			fmt.Println("mount:", err)
			os.Exit(1)
		}
		fmt.Println("ready")
		select {}
	}
	if p := os.Getenv("FUSEFS_TEST_MMAP"); p != "" {
		if err := writeMapped(p, "mapped"); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("mapped")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// writeMapped writes data at the start of file p through a shared mapping
// and unmaps and closes it, for tests of a mount that this process must
// not serve (a page fault on a mount served by the faulting process can
// deadlock it).
func writeMapped(p, data string) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, len(data), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return err
	}
	copy(m, data)
	if err := syscall.Munmap(m); err != nil {
		return err
	}
	return f.Close()
}

// TestStaleMountCleared kills a mounting process with SIGKILL, leaving a
// dead mount, and checks that Mount detaches it and serves again.
func TestStaleMountCleared(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("skipping: /dev/fuse is missing")
	}
	dir := filepath.Join(t.TempDir(), "mnt")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FUSEFS_TEST_MOUNT="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	if string(buf[:n]) != "ready\n" {
		cmd.Process.Kill()
		t.Fatalf("helper said %q", buf[:n])
	}
	cmd.Process.Kill()
	cmd.Wait()
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	if _, err := os.Stat(dir); !errors.Is(err, syscall.ENOTCONN) {
		t.Fatalf("after SIGKILL the mount answers %v; want ENOTCONN (a dead mount)", err)
	}
	fsys := memfs.New()
	semfs.WriteFile(context.Background(), fsys, "/hello", []byte("again"), 0o644)
	srv, err := fusefs.Mount(dir, fsys, fusefs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Unmount()
	if got, err := os.ReadFile(filepath.Join(dir, "hello")); err != nil || string(got) != "again" {
		t.Fatalf("read through the new mount: %q, %v", got, err)
	}
	// A live mount is refused rather than stacked.
	if _, err := fusefs.Mount(dir, memfs.New(), fusefs.Options{}); err == nil {
		t.Error("mounting over a live mount succeeded")
	}
}

// recorder notes the principal of every OpenFile.
type recorder struct {
	*memfs.FS
	mu   sync.Mutex
	seen []semfs.Principal
}

func (r *recorder) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	p, _ := semfs.PrincipalFrom(ctx)
	r.mu.Lock()
	r.seen = append(r.seen, p)
	r.mu.Unlock()
	return r.FS.OpenFile(ctx, name, flag, perm)
}

// TestPrincipalAndInodes checks that requests carry the principal resolved
// from the caller and that inode numbers are stable per path and follow a
// rename.
func TestPrincipalAndInodes(t *testing.T) {
	rec := &recorder{FS: memfs.New()}
	var calls []uint32
	var mu sync.Mutex
	dir := mount(t, rec, fusefs.Options{
		AttrTimeout:  -1, // every stat asks the server
		EntryTimeout: -1,
		Principal: func(pid, uid, gid uint32) semfs.Principal {
			mu.Lock()
			calls = append(calls, pid)
			mu.Unlock()
			return semfs.Principal{ID: fmt.Sprintf("uid:%d", uid), App: fmt.Sprintf("pid-%d", pid)}
		},
	})
	f := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	seen := rec.seen
	rec.mu.Unlock()
	// The kernel reports the calling thread's id: one of this process's
	// threads.
	if len(seen) == 0 || seen[0].ID != fmt.Sprintf("uid:%d", os.Getuid()) {
		t.Fatalf("principal of the create = %+v", seen)
	}
	var tid int
	fmt.Sscanf(seen[0].App, "pid-%d", &tid)
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d", os.Getpid(), tid)); err != nil {
		t.Errorf("principal of the create = %+v; caller %d is not a thread of this process (%d)", seen[0], tid, os.Getpid())
	}

	ino := func(p string) uint64 {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		return st.Ino
	}
	first := ino(f)
	time.Sleep(10 * time.Millisecond)
	if again := ino(f); again != first {
		t.Errorf("inode of the same path changed: %d then %d", first, again)
	}
	other := filepath.Join(dir, "b.txt")
	os.WriteFile(other, []byte("y"), 0o644)
	if ino(other) == first {
		t.Error("two files share an inode number")
	}
	moved := filepath.Join(dir, "moved.txt")
	if err := os.Rename(f, moved); err != nil {
		t.Fatal(err)
	}
	if got := ino(moved); got != first {
		t.Errorf("inode after rename = %d, want %d", got, first)
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Errors through the mount carry the mapped errno.
	if err := os.Remove(filepath.Join(dir, "d", "missing")); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("remove missing: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "d", "f"), []byte("z"), 0o644)
	if err := syscall.Rmdir(filepath.Join(dir, "d")); err != syscall.ENOTEMPTY {
		t.Errorf("rmdir non-empty: %v, want ENOTEMPTY", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "moved.txt", "x"), nil, 0o644); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("create below a file: %v, want ENOTDIR", err)
	}
}

// TestErrnoTable checks the one error table.
func TestErrnoTable(t *testing.T) {
	cases := map[error]syscall.Errno{
		semfs.ErrNotExist: syscall.ENOENT, semfs.ErrExist: syscall.EEXIST, semfs.ErrPermission: syscall.EACCES,
		semfs.ErrInvalid: syscall.EINVAL, semfs.ErrNotDir: syscall.ENOTDIR, semfs.ErrIsDir: syscall.EISDIR,
		semfs.ErrNotEmpty: syscall.ENOTEMPTY, semfs.ErrReadOnly: syscall.EROFS, semfs.ErrQuota: syscall.EDQUOT,
	}
	for s, want := range cases {
		if got := fusefs.Errno(semfs.PathErr("op", "/p", s, "detail"), nil); got != want {
			t.Errorf("%v → %v, want %v", s, got, want)
		}
	}
	if got := fusefs.Errno(&fs.PathError{Op: "write", Path: "/p", Err: syscall.ENOSPC}, nil); got != syscall.ENOSPC {
		t.Errorf("ENOSPC → %v", got)
	}
	var logged string
	if got := fusefs.Errno(errors.New("boom"), func(f string, a ...any) { logged = fmt.Sprintf(f, a...) }); got != syscall.EIO || logged == "" {
		t.Errorf("unknown error → %v (logged %q); want EIO and a log line", got, logged)
	}
	if fusefs.Errno(nil, nil) != 0 {
		t.Error("nil error is not 0")
	}
}

// TestPageCacheFollowsOtherWriters reads a file through the mount (so the
// kernel may keep its pages), changes it behind the mount's back with
// contents of the same size, and checks the next read sees the change.
func TestPageCacheFollowsOtherWriters(t *testing.T) {
	ctx := context.Background()
	tree := memfs.New()
	if err := semfs.WriteFile(ctx, tree, "/f", []byte("version one"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := mount(t, tree, fusefs.Options{AttrTimeout: -1, EntryTimeout: -1})
	p := filepath.Join(dir, "f")
	for range 3 { // the second and third opens may keep the cache
		if got, err := os.ReadFile(p); err != nil || string(got) != "version one" {
			t.Fatalf("read = %q, %v", got, err)
		}
	}
	time.Sleep(2 * time.Millisecond) // a distinct modification time
	if err := semfs.WriteFile(ctx, tree, "/f", []byte("version two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(p); err != nil || string(got) != "version two" {
		t.Fatalf("read after a change behind the mount = %q, %v; want the new contents", got, err)
	}
}

// uploadFails is a write-back tree whose uploads (Sync) fail.
type uploadFails struct{ *memfs.FS }

type failingUpload struct{ semfs.RWFile }

func (f failingUpload) Sync() error {
	return semfs.PathErr("sync", "/f", semfs.ErrQuota, "the bucket refused the upload")
}

func (u uploadFails) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	f, err := u.FS.OpenFile(ctx, name, flag, perm)
	if err != nil {
		return nil, err
	}
	return failingUpload{f}, nil
}

// TestWriteBackCloseReportsUpload: on a write-back tree close(2) reports a
// failed upload (FLUSH syncs the handle); on a write-through tree FLUSH is
// declined and close succeeds without asking the tree.
func TestWriteBackCloseReportsUpload(t *testing.T) {
	for _, wb := range []bool{true, false} {
		dir := mount(t, uploadFails{memfs.New()}, fusefs.Options{WriteBack: wb})
		f, err := os.Create(filepath.Join(dir, "f"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("data")); err != nil {
			t.Fatal(err)
		}
		err = f.Close()
		if wb && !errors.Is(err, syscall.EDQUOT) {
			t.Errorf("write-back: close = %v, want EDQUOT from the failed upload", err)
		}
		if !wb && err != nil {
			t.Errorf("write-through: close = %v, want nil (FLUSH declined)", err)
		}
	}
}
