package fusefs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/hostfs"
)

// closedFS records what the tree sees when a writable file is closed —
// what the metadata layer indexes then: the path, the bytes the host
// holds after the close, and the principal the file was opened as. It
// also hides /secret from the principal "uid:65534" and refuses it
// writes below /ro, as an access layer would.
type closedFS struct {
	*hostfs.FS
	mu     sync.Mutex
	closes []closedWrite
}

type closedWrite struct {
	path, data, by string
}

const otherUID = 65534

func (c *closedFS) other(ctx context.Context) bool {
	p, _ := semfs.PrincipalFrom(ctx)
	return p.ID == fmt.Sprintf("uid:%d", otherUID)
}

func (c *closedFS) hidden(ctx context.Context, name string) bool {
	return c.other(ctx) && semfs.HasPrefix(name, "/secret") && name != "/secret"
}

func (c *closedFS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	if c.hidden(ctx, name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return c.FS.Stat(ctx, name)
}

func (c *closedFS) Open(ctx context.Context, name string) (fs.File, error) {
	if c.hidden(ctx, name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return c.FS.Open(ctx, name)
}

func (c *closedFS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	entries, err := c.FS.ReadDir(ctx, name)
	if err != nil || !c.other(ctx) {
		return entries, err
	}
	var seen []fs.DirEntry
	for _, e := range entries {
		if !c.hidden(ctx, semfs.Join(name, e.Name())) {
			seen = append(seen, e)
		}
	}
	return seen, nil
}

func (c *closedFS) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	if c.hidden(ctx, name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	if c.other(ctx) && semfs.HasPrefix(name, "/ro") && flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	f, err := c.FS.OpenFile(ctx, name, flag, perm)
	if err != nil {
		return nil, err
	}
	p, _ := semfs.PrincipalFrom(ctx)
	return &closedFile{RWFile: f, c: c, name: name, by: p.ID}, nil
}

func (c *closedFS) closed() []closedWrite {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]closedWrite(nil), c.closes...)
}

// waitClosed waits up to 3 s for a close of p holding data.
func (c *closedFS) waitClosed(p, data string) (closedWrite, bool) {
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, w := range c.closed() {
			if w.path == p && w.data == data {
				return w, true
			}
		}
	}
	return closedWrite{}, false
}

type closedFile struct {
	semfs.RWFile
	c        *closedFS
	name, by string
}

func (f *closedFile) HostFd() (int, bool) { return semfs.HostFd(f.RWFile) }

func (f *closedFile) Close() error {
	err := f.RWFile.Close()
	data, _ := semfs.ReadFile(context.Background(), f.c.FS, f.name)
	f.c.mu.Lock()
	f.c.closes = append(f.c.closes, closedWrite{f.name, string(data), f.by})
	f.c.mu.Unlock()
	return err
}

// mountOpenFree mounts a host tree in the open-free mode, open to other
// users, and counts the RELEASEs the mount serves.
func mountOpenFree(t *testing.T) (srv *Server, tree *closedFS, host string, releases *atomic.Int64) {
	t.Helper()
	host = t.TempDir()
	h, err := hostfs.Open(host, hostfs.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	tree = &closedFS{FS: h}
	releases = new(atomic.Int64)
	testHookRelease = func() { releases.Add(1) }
	t.Cleanup(func() { testHookRelease = nil }) // after the unmount
	srv = mountServer(t, tree, Options{KeepCache: true, OpenFree: true, AllowOther: true, Debug: os.Getenv("DBG") != "",
		Shared: func(ctx context.Context, p string, listing bool) bool { return !semfs.HasPrefix(p, "/secret") }})
	// Let other users reach the mount point.
	for d := srv.Dir(); d != "/tmp" && d != "/"; d = filepath.Dir(d) {
		if strings.HasPrefix(filepath.Base(d), "Test") || strings.HasPrefix(filepath.Base(d), "0") {
			os.Chmod(d, 0o755)
		}
	}
	return srv, tree, host, releases
}

// openWritten opens p through the mount for reading and writing, closed
// when the test ends, and writes data at its start.
func openWritten(t *testing.T, p, data string) *os.File {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.WriteAt([]byte(data), 0); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestOpenFreeNeedsKeepCache(t *testing.T) {
	if _, err := Mount(t.TempDir(), hostTree(t), Options{OpenFree: true}); err == nil || !strings.Contains(err.Error(), "KeepCache") {
		t.Errorf("OpenFree without KeepCache: %v; want a refusal naming KeepCache", err)
	}
	if _, err := Mount(t.TempDir(), hostTree(t), Options{OpenFree: true, KeepCache: true, WriteBack: true}); err == nil || !strings.Contains(err.Error(), "WriteBack") {
		t.Errorf("OpenFree with WriteBack: %v; want a refusal naming WriteBack", err)
	}
}

// TestOpenFreeOverwrite overwrites an existing file through the mount:
// no OPEN answers a handle and no RELEASE comes, yet the tree is told the
// file was closed with the new bytes, a quiet period after the write, and
// the mount reads the new bytes.
func TestOpenFreeOverwrite(t *testing.T) {
	ctx := context.Background()
	srv, tree, host, releases := mountOpenFree(t)
	if err := semfs.WriteFile(ctx, tree.FS, "/f", []byte("old contents"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(srv.Dir(), "f")
	if got, err := os.ReadFile(p); err != nil || string(got) != "old contents" {
		t.Fatalf("read %q, %v", got, err)
	}
	if err := os.WriteFile(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(host, "f")); err != nil || string(got) != "new" {
		t.Fatalf("the host holds %q, %v right after the write", got, err)
	}
	w, ok := tree.waitClosed("/f", "new")
	if !ok {
		t.Fatalf("the tree saw no close of /f with the new bytes; closes: %+v", tree.closed())
	}
	if w.by != fmt.Sprintf("uid:%d", os.Getuid()) {
		t.Errorf("the writer was opened as %q", w.by)
	}
	if n := releases.Load(); n != 0 {
		t.Errorf("%d RELEASEs served; want none in the open-free mode", n)
	}
	if got, err := os.ReadFile(p); err != nil || string(got) != "new" {
		t.Errorf("read back %q, %v", got, err)
	}

	// A file created through the mount has a handle and is closed at
	// close(2), as without the mode.
	if err := os.WriteFile(filepath.Join(srv.Dir(), "g"), []byte("created"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := tree.waitClosed("/g", "created"); !ok {
		t.Errorf("no close of a created file: %+v", tree.closed())
	}
}

// TestOpenFreeFsyncAndUnmount: fsync(2) reports a file written without a
// handle at once, and so does the unmount.
func TestOpenFreeFsyncAndUnmount(t *testing.T) {
	ctx := context.Background()
	host := t.TempDir()
	h, err := hostfs.Open(host, hostfs.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	tree := &closedFS{FS: h}
	semfs.WriteFile(ctx, h, "/f", []byte("0000"), 0o644)
	semfs.WriteFile(ctx, h, "/g", []byte("0000"), 0o644)
	srv, err := Mount(t.TempDir(), tree, Options{KeepCache: true, OpenFree: true, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(srv.Dir(), "f"), os.O_WRONLY, 0)
	if err != nil {
		srv.Unmount()
		t.Fatal(err)
	}
	f.WriteAt([]byte("11"), 0)
	if err := f.Sync(); err != nil {
		t.Error(err)
	}
	// No waiting: the close was reported before fsync returned.
	if got := tree.closed(); len(got) != 1 || got[0] != (closedWrite{"/f", "1100", fmt.Sprintf("uid:%d", os.Getuid())}) {
		t.Errorf("after fsync the tree saw %+v; want one close of /f holding 1100", got)
	}
	f.Close()

	if err := os.WriteFile(filepath.Join(srv.Dir(), "g"), []byte("22"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := srv.Unmount(); err != nil {
		t.Fatal(err)
	}
	srv.Wait()
	found := false
	for _, w := range tree.closed() {
		found = found || (w.path == "/g" && w.data == "22")
	}
	if !found {
		t.Errorf("after the unmount the tree saw %+v; want a close of /g holding 22", tree.closed())
	}

	// Unmounted by another process (a daemon without CAP_SYS_ADMIN has
	// its helper unmount): Wait reports the file.
	srv, err = Mount(t.TempDir(), tree, Options{KeepCache: true, OpenFree: true, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(srv.Dir(), "f"), []byte("33"), 0o644); err != nil {
		srv.Unmount()
		t.Fatal(err)
	}
	if err := exec.Command("umount", srv.Dir()).Run(); err != nil {
		srv.Unmount()
		t.Fatal(err)
	}
	srv.Wait()
	found = false
	for _, w := range tree.closed() {
		found = found || (w.path == "/f" && w.data == "33")
	}
	if !found {
		t.Errorf("after an unmount by another process and Wait the tree saw %+v; want a close of /f holding 33", tree.closed())
	}
}

// asOther runs a shell command as another user.
func asOther(script string) (string, error) {
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID}}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestOpenFreeTwoPrincipals: what a caller may not see stays absent for it
// although another caller read it (its pages are in the kernel's cache
// and a host file is open for it), and a write the tree refuses a caller
// fails at write(2) — the open sent nothing to refuse — leaving the file
// as it was; a write by that caller where it may write is made as that
// caller.
func TestOpenFreeTwoPrincipals(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: running a command as another user needs root")
	}
	ctx := context.Background()
	srv, tree, host, _ := mountOpenFree(t)
	for p, data := range map[string]string{"/secret/x": "hidden", "/ro/y": "read-only", "/pub/z": "public"} {
		if err := semfs.WriteFile(ctx, tree.FS, p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mnt := srv.Dir()
	if got, err := os.ReadFile(mnt + "/secret/x"); err != nil || string(got) != "hidden" {
		t.Fatalf("the owner read %q, %v", got, err)
	}
	if out, err := asOther("cat " + mnt + "/secret/x"); err == nil || strings.Contains(out, "hidden") {
		t.Errorf("another user read a file hidden from it: %q, %v", out, err)
	}
	if names, err := os.ReadDir(mnt + "/secret"); err != nil || len(names) != 1 {
		t.Fatalf("the owner listed %v, %v", names, err)
	}
	if out, err := asOther("ls " + mnt + "/secret"); strings.Contains(out, "x") {
		t.Errorf("another user listed a file hidden from it: %q, %v", out, err)
	}
	if out, err := asOther("echo evil >> " + mnt + "/secret/x"); err == nil {
		t.Errorf("another user appended to a file hidden from it: %q", out)
	}

	if got, err := os.ReadFile(mnt + "/ro/y"); err != nil || string(got) != "read-only" {
		t.Fatalf("the owner read %q, %v", got, err)
	}
	if out, err := asOther("cat " + mnt + "/ro/y"); err != nil || out != "read-only" {
		t.Errorf("another user read %q, %v; want the file", out, err)
	}
	if out, err := asOther("printf evil > " + mnt + "/ro/y"); err == nil {
		t.Errorf("another user overwrote a file it may only read: %q", out)
	}
	if out, err := asOther("printf evil 1<> " + mnt + "/ro/y"); err == nil {
		t.Errorf("another user wrote a file it may only read: %q", out)
	}
	for _, p := range []string{"secret/x", "ro/y"} {
		want := map[string]string{"secret/x": "hidden", "ro/y": "read-only"}[p]
		if got, _ := os.ReadFile(filepath.Join(host, p)); string(got) != want {
			t.Errorf("the host holds %q at %s; want %q", got, p, want)
		}
	}

	if out, err := asOther("printf mine 1<> " + mnt + "/pub/z"); err != nil {
		t.Fatalf("another user's write where it may write: %q, %v", out, err)
	}
	w, ok := tree.waitClosed("/pub/z", "mineic")
	if !ok {
		t.Fatalf("the tree saw no close of /pub/z with the other user's bytes: %+v", tree.closed())
	}
	if w.by != fmt.Sprintf("uid:%d", otherUID) {
		t.Errorf("the other user's write was made as %q", w.by)
	}
	for _, w := range tree.closed() {
		if w.path != "/pub/z" {
			t.Errorf("a refused write reached the tree: %+v", w)
		}
	}
}

// TestOpenFreeReplacedBehind: a file replaced behind the mount and not yet
// reported is not read through the number of the old one (ESTALE), and a
// new open reads the new file.
func TestOpenFreeReplacedBehind(t *testing.T) {
	srv, tree, host, _ := mountOpenFree(t)
	if err := semfs.WriteFile(context.Background(), tree.FS, "/r", []byte("first"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(srv.Dir(), "r")
	if got, err := os.ReadFile(p); err != nil || string(got) != "first" {
		t.Fatalf("read %q, %v", got, err)
	}
	// The host file the read opened goes idle and is closed.
	tr := srv.t
	tr.free.mu.Lock()
	for _, e := range tr.free.files {
		for _, fh := range e.handles {
			fh.used = time.Time{}
		}
	}
	tr.free.mu.Unlock()
	tr.free.reap()
	if n := openFreeFiles(tr); n != 0 {
		t.Fatalf("%d host files open after the reap", n)
	}

	tmp := filepath.Join(host, ".r.tmp")
	if err := os.WriteFile(tmp, []byte("second"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(host, "r")); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED) // the kept pages go
	buf := make([]byte, 16)
	n, err := f.ReadAt(buf, 0)
	if !errors.Is(err, syscall.ESTALE) {
		t.Errorf("a read through the old number after an unreported replacement: %q, %v; want ESTALE", buf[:n], err)
	}
	// The mount dropped the kernel's name: a new open reads the new file
	// (the report, when it comes, changes nothing more).
	var got []byte
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got, err = os.ReadFile(p); err == nil && string(got) == "second" {
			break
		}
	}
	if string(got) != "second" {
		t.Errorf("a new open after the ESTALE reads %q, %v; want the new file", got, err)
	}
	srv.Replaced("/r")
	if got, err := os.ReadFile(p); err != nil || string(got) != "second" {
		t.Errorf("after the report the mount reads %q, %v; want the new file", got, err)
	}
}

func openFreeFiles(tr *tree) int {
	tr.free.mu.Lock()
	defer tr.free.mu.Unlock()
	return tr.free.open
}

// TestOpenFreeBounded: host files opened for reads without a handle are
// closed when idle and never more than maxFree stay open.
func TestOpenFreeBounded(t *testing.T) {
	srv, tree, _, _ := mountOpenFree(t)
	ctx := context.Background()
	const files = maxFree + 40
	for i := range files {
		if err := semfs.WriteFile(ctx, tree.FS, fmt.Sprintf("/d/%d", i), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range files {
		if _, err := os.ReadFile(filepath.Join(srv.Dir(), "d", fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
		if n := openFreeFiles(srv.t); n > maxFree {
			t.Fatalf("%d host files open; want at most %d", n, maxFree)
		}
	}
	deadline := time.Now().Add(freeIdle + 2*time.Second)
	for openFreeFiles(srv.t) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := openFreeFiles(srv.t); n != 0 {
		t.Errorf("%d host files open %v after the last read", n, freeIdle+2*time.Second)
	}
}

// TestOpenFreeSharedMapping writes a file through a shared mapping, in
// another process (this one serves the mount): the kernel writes the
// pages back without a handle, and the tree is told the file was closed
// with the mapped bytes.
func TestOpenFreeSharedMapping(t *testing.T) {
	srv, tree, _, _ := mountOpenFree(t)
	if err := semfs.WriteFile(context.Background(), tree.FS, "/m", []byte("........"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FUSEFS_TEST_MMAP="+filepath.Join(srv.Dir(), "m"))
	if out, err := cmd.CombinedOutput(); err != nil || string(out) != "mapped\n" {
		t.Fatalf("mapping helper: %q, %v", out, err)
	}
	if _, ok := tree.waitClosed("/m", "mapped.."); !ok {
		t.Errorf("the tree saw no close of /m with the mapped bytes: %+v", tree.closed())
	}
}

// TestOpenFreeRemovedWhileOpen: a file opened (which sends nothing) and
// then removed through the mount is still read and fstat'ed through the
// descriptor, from a host file the removal kept open; that file is closed
// once the kernel forgets the inode.
func TestOpenFreeRemovedWhileOpen(t *testing.T) {
	srv, tree, _, _ := mountOpenFree(t)
	if err := semfs.WriteFile(context.Background(), tree.FS, "/u", []byte("still here"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(srv.Dir(), "u")
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 32)
	n, err := f.ReadAt(buf, 0)
	if string(buf[:n]) != "still here" {
		t.Errorf("read after the removal: %q, %v", buf[:n], err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil || st.Nlink != 0 || st.Size != 10 {
		t.Errorf("fstat after the removal: %+v, %v; want size 10, no links", st, err)
	}
	f.Close()
	deadline := time.Now().Add(reapDelay + 3*time.Second)
	for openFreeFiles(srv.t) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := openFreeFiles(srv.t); n != 0 {
		t.Errorf("%d host files open after the kernel forgot the removed file", n)
	}
}

// TestOpenFreeListings: where no listing differs by caller (no
// Options.Shared), the open-free mode opens directories without a request
// too, and the kernel keeps their listings: a second walk lists nothing
// in the tree, and a change through the mount or reported behind it is
// listed at once.
func TestOpenFreeListings(t *testing.T) {
	ctx := context.Background()
	host := t.TempDir()
	h, err := hostfs.Open(host, hostfs.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	tree := &listCountingFS{FS: h}
	for _, p := range []string{"/d/a", "/d/b"} {
		if err := semfs.WriteFile(ctx, h, p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := mountServer(t, tree, Options{KeepCache: true, OpenFree: true, AttrTimeout: time.Minute, EntryTimeout: time.Minute})
	list := func() []string {
		t.Helper()
		entries, err := os.ReadDir(filepath.Join(srv.Dir(), "d"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	if got := strings.Join(list(), ","); got != "a,b" {
		t.Fatalf("listed %s", got)
	}
	n := tree.lists.Load()
	if got := strings.Join(list(), ","); got != "a,b" || tree.lists.Load() != n {
		t.Errorf("second listing %s read the tree %d times more; want a,b from the kernel's cache", got, tree.lists.Load()-n)
	}
	if err := os.WriteFile(filepath.Join(srv.Dir(), "d", "c"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(list(), ","); got != "a,b,c" {
		t.Errorf("after a create through the mount: %s", got)
	}
	if err := semfs.WriteFile(ctx, h, "/d/e", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.Created("/d/e")
	if got := strings.Join(list(), ","); got != "a,b,c,e" {
		t.Errorf("after a reported create behind the mount: %s", got)
	}

	// A listing that takes several READDIRs is read from the tree once,
	// and a removal through the mount is listed at once.
	const many = 3000 // the kernel asks for 32 KiB of entries at a time
	os.Mkdir(filepath.Join(host, "big"), 0o755)
	for i := range many { // behind the mount, before it lists the directory
		if err := os.WriteFile(filepath.Join(host, "big", fmt.Sprintf("file-with-a-longer-name-%04d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n = tree.lists.Load()
	entries, err := os.ReadDir(filepath.Join(srv.Dir(), "big"))
	if err != nil || len(entries) != many {
		t.Fatalf("listed %d entries, %v; want %d", len(entries), err, many)
	}
	if got := tree.lists.Load() - n; got != 1 {
		t.Errorf("a listing of %d entries read the tree %d times; want once", many, got)
	}
	if err := os.Remove(filepath.Join(srv.Dir(), "big", "file-with-a-longer-name-0007")); err != nil {
		t.Fatal(err)
	}
	entries, err = os.ReadDir(filepath.Join(srv.Dir(), "big"))
	if err != nil || len(entries) != many-1 || slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == "file-with-a-longer-name-0007" }) {
		t.Errorf("after a removal through the mount: %d entries, %v", len(entries), err)
	}
}

// listCountingFS counts the directory listings the tree serves.
type listCountingFS struct {
	*hostfs.FS
	lists atomic.Int64
}

func (l *listCountingFS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	l.lists.Add(1)
	return l.FS.ReadDir(ctx, name)
}

// TestOpenFreeAfterClose: once the mount's host files were closed for the
// unmount (a lazily detached mount still serves its open descriptors), a
// file created or written is reported as soon as its request ends.
func TestOpenFreeAfterClose(t *testing.T) {
	srv, tree, _, _ := mountOpenFree(t)
	srv.t.free.close()
	if err := os.WriteFile(filepath.Join(srv.Dir(), "late"), []byte("late"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := tree.waitClosed("/late", "late"); !ok {
		t.Errorf("a file written after the close was not reported: %+v", tree.closed())
	}
	f, err := os.Create(filepath.Join(srv.Dir(), "empty")) // created, never written
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, ok := tree.waitClosed("/empty", ""); !ok {
		t.Errorf("a file created after the close was not reported: %+v", tree.closed())
	}
	if n := openFreeFiles(srv.t); n != 0 {
		t.Errorf("%d host files open after the close", n)
	}
}
