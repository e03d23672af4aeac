package fusefs

// Open-free mode: a removal or rename over that the tree refuses keeps
// the file's later writes reported, and a removed file's kept writer
// serves only its own principal (review 8, R8-1 and R8-2).

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/hostfs"
)

// refusingFS is closedFS whose Remove and Rename fail (as a tree may:
// the caller may not remove the file, the store is busy, the source was
// removed behind the mount meanwhile).
type refusingFS struct {
	*closedFS
	refuse atomic.Bool
}

func (r *refusingFS) Remove(ctx context.Context, name string) error {
	if r.refuse.Load() {
		return &os.PathError{Op: "remove", Path: name, Err: syscall.EIO}
	}
	return r.closedFS.FS.Remove(ctx, name)
}

func (r *refusingFS) Rename(ctx context.Context, o, n string) error {
	if r.refuse.Load() {
		return &os.PathError{Op: "rename", Path: o, Err: syscall.EIO}
	}
	return r.closedFS.FS.Rename(ctx, o, n)
}

func mountRefusing(t *testing.T) (*Server, *refusingFS) {
	t.Helper()
	h, err := hostfs.Open(t.TempDir(), hostfs.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	tree := &refusingFS{closedFS: &closedFS{FS: h}}
	srv := mountServer(t, tree, Options{KeepCache: true, OpenFree: true, AllowOther: true,
		Shared: func(ctx context.Context, p string, listing bool) bool { return !semfs.HasPrefix(p, "/secret") }})
	return srv, tree
}

// TestRev8FailedRemoveLosesLaterWrites: keep (run before the removal)
// replaces the writer's host file with a raw duplicate of its
// descriptor. When the removal then fails, the file is still at its
// path and the number is not orphaned, so the next writes by the same
// caller are served by that duplicate, whose close reports nothing to
// the tree: the file's new bytes are never indexed.
func TestRev8FailedRemoveLosesLaterWrites(t *testing.T) {
	srv, tree := mountRefusing(t)
	if err := semfs.WriteFile(context.Background(), tree.FS, "/w", []byte("000000"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(srv.Dir(), "w")
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("before"), 0); err != nil {
		t.Fatal(err)
	}
	tree.refuse.Store(true)
	if err := os.Remove(p); err == nil {
		t.Fatal("remove succeeded; want the tree's refusal")
	}
	tree.refuse.Store(false)
	if _, ok := tree.waitClosed("/w", "before"); !ok {
		t.Fatalf("the write before the removal was not reported: %+v", tree.closed())
	}
	// The file is still at /w; a program writes on.
	if _, err := f.WriteAt([]byte("AFTER!"), 0); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(srv.Dir(), "w")); !strings.HasPrefix(string(got), "AFTER!") {
		t.Logf("read back through the mount: %q", got)
	}
	if _, ok := tree.waitClosed("/w", "AFTER!"); !ok {
		t.Errorf("/w written after a failed removal was never reported to the tree (its bytes are not indexed): closes %+v", tree.closed())
	}
}

// TestRev8FailedRenameOverLosesLaterWrites: the same through a rename
// over /w that the tree refuses.
func TestRev8FailedRenameOverLosesLaterWrites(t *testing.T) {
	srv, tree := mountRefusing(t)
	ctx := context.Background()
	for p, d := range map[string]string{"/w": "000000", "/src": "ssssss"} {
		if err := semfs.WriteFile(ctx, tree.FS, p, []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(srv.Dir(), "w")
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("before"), 0); err != nil {
		t.Fatal(err)
	}
	tree.refuse.Store(true)
	if err := os.Rename(filepath.Join(srv.Dir(), "src"), p); err == nil {
		t.Fatal("rename succeeded; want the tree's refusal")
	}
	tree.refuse.Store(false)
	if _, ok := tree.waitClosed("/w", "before"); !ok {
		t.Fatalf("the write before the rename was not reported: %+v", tree.closed())
	}
	if _, err := f.WriteAt([]byte("AFTER!"), 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if _, ok := tree.waitClosed("/w", "AFTER!"); !ok {
		t.Errorf("/w written after a failed rename over it was never reported to the tree: closes %+v", tree.closed())
	}
}

// TestRev8OrphanWriteByOtherPrincipal: 464f9d0 documents that after a
// removal through the mount only a principal whose writer was open at
// the change can still write the file (others get ESTALE). orphanFile
// hands any kept writer to any caller, so another principal, whose own
// writer was never open, writes through the remover's duplicated
// descriptor (opened by the tree as the first principal).
func TestRev8OrphanWriteByOtherPrincipal(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a second principal")
	}
	srv, tree, host, _ := mountOpenFree(t)
	if err := semfs.WriteFile(context.Background(), tree.FS, "/w", []byte("000000000000"), 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(host, "w"), 0o666)
	p := filepath.Join(srv.Dir(), "w")
	// The other principal opens the file for writing (no OPEN reaches
	// the mount) and waits.
	cmd := pyAs(otherUID, `
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
print("open", flush=True)
sys.stdin.readline()
try:
    os.pwrite(fd, b"OTHER", 6)
    print("wrote", flush=True)
except OSError as e:
    print("errno", e.errno, flush=True)
`, p)
	in, _ := cmd.StdinPipe()
	outp, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	buf := make([]byte, 64)
	n, _ := outp.Read(buf)
	if !strings.HasPrefix(string(buf[:n]), "open") {
		t.Fatalf("other principal: %q", buf[:n])
	}
	// Root writes (its writer is open at the removal) and removes it.
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("root"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	in.Write([]byte("go\n"))
	n, _ = outp.Read(buf)
	got := strings.TrimSpace(string(buf[:n]))
	if got == "wrote" {
		t.Errorf("uid %d, whose writer was never open, wrote the removed file through uid 0's kept descriptor; docs (464f9d0) say it gets ESTALE", otherUID)
	} else {
		t.Logf("other principal: %s", got)
	}
}
