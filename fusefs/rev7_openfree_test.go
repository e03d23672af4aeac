package fusefs

// Open-free mode: fsync after the quiet period, removed writers, a
// detached mount and listings (review 7, R2, R3, R4, R7).

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs"
)

// pyAs runs a python3 script (/usr/bin/python3, reachable by any user) as
// uid (0: as root), with the mount path in argv[1].
func pyAs(uid int, script string, args ...string) *exec.Cmd {
	cmd := exec.Command("/usr/bin/python3", append([]string{"-c", script}, args...)...)
	if uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	return cmd
}

// Review 7, R1 (mapped pages written back with pid 0 run as the file's
// last caller, who may be another principal): the evidence tests
// TestRev7MappedWritebackRunsAsLastCaller and
// TestRev7MappedWritebackLostToReader ran over closedFS, a tree that
// refuses one caller writes it lets another make. The mode cannot tell who
// mapped a file, so Options.OpenFree now requires of the caller that no
// such tree is served (every caller who can see a file may write it if
// any may), and the daemon refuses the mode where its tokens would break
// that: daemon TestOpenFreeRefusedWhereWritesDiffer. Over closedFS the
// two tests show what the contract rules out, so they are not kept here.

// syncFS records the Sync calls writers of the tree receive.
type syncFS struct {
	*closedFS
	mu    sync.Mutex
	syncs []string
}

func (s *syncFS) OpenFile(ctx context.Context, name string, flag int, perm os.FileMode) (semfs.RWFile, error) {
	f, err := s.closedFS.OpenFile(ctx, name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &syncFile{RWFile: f, s: s, name: name}, nil
}

type syncFile struct {
	semfs.RWFile
	s    *syncFS
	name string
}

func (f *syncFile) HostFd() (int, bool) { return semfs.HostFd(f.RWFile) }

func (f *syncFile) Sync() error {
	f.s.mu.Lock()
	f.s.syncs = append(f.s.syncs, f.name)
	f.s.mu.Unlock()
	return f.RWFile.Sync()
}

func (s *syncFS) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.syncs)
}

// TestOpenFreeFsyncAfterQuietPeriodSyncs: a program writes a file
// through the mount and calls fsync(2) a moment later. In the default
// mode the FSYNC reaches the handle and syncs the host file. In the
// open-free mode the writer was closed by the reap after freeQuiet
// (200 ms; a host close does not sync), and freeFiles.fsync finds no
// writer: fsync(2) returns success and the host file was never synced.
func TestOpenFreeFsyncAfterQuietPeriodSyncs(t *testing.T) {
	ctx := context.Background()
	tree := &closedFS{FS: hostTree(t)}
	st := &syncFS{closedFS: tree}
	srv2 := mountServer(t, st, Options{KeepCache: true, OpenFree: true})
	if err := semfs.WriteFile(ctx, tree.FS, "/db", []byte("0000"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(srv2.Dir(), "db"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("11"), 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(freeQuiet + 400*time.Millisecond) // e.g. the program prepares its next record
	before := st.count()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if st.count() == before {
		t.Errorf("fsync(2) returned success %v after a write, but no host file of /db was synced (the writer was closed unsynced by the idle reap)", freeQuiet+400*time.Millisecond)
	}
}

// TestOpenFreeRemovedWriterNotReportedAtNewFile: root rewrites /pub/f through
// the mount and removes it at once (write; close; rm — nothing reaches
// the daemon at close(2) in this mode). The writer host file of the
// removed file is orphaned, kept open until the kernel forgets the inode
// and reaped reapDelay later. Meanwhile another user creates a new /pub/f
// and writes it for two seconds. The removed file's writer is then closed
// and reported to the tree as a write of /pub/f by root: the metadata
// layer re-reads the path (writtenBehind) and, the new file having no row
// yet, records root as the new file's created_by (seed 000: created_by is
// the first writer and never changes). In the default mode RELEASE closes
// the writer at close(2), before the removal.
func TestOpenFreeRemovedWriterNotReportedAtNewFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (runs a command as another user)")
	}
	ctx := context.Background()
	srv, tree, _, _ := mountOpenFree(t)
	if err := semfs.WriteFile(ctx, tree.FS, "/pub/f", []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(srv.Dir(), "pub", "f")
	if err := os.WriteFile(p, []byte("root's rewrite"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	n := len(tree.closed())
	out, err := pyAs(otherUID, `
import sys, time
f = open(sys.argv[1], 'w')
for i in range(20):
    f.write('line %d by the other user\n' % i); f.flush(); time.sleep(0.1)
f.close()
print('done')
`, p).CombinedOutput()
	if err != nil {
		t.Fatalf("other user: %s %v", out, err)
	}
	time.Sleep(time.Second)
	root := "uid:0"
	for _, w := range tree.closed()[n:] {
		t.Logf("close after the removal: path=%s by=%s data=%.30q", w.path, w.by, w.data)
		if w.path == "/pub/f" && w.by == root && strings.Contains(w.data, "by the other user") {
			t.Errorf("the removed file's writer (root) was reported closed at /pub/f while the other user's new file stood there: the new file's row would name root as created_by")
		}
	}
}

// TestOpenFreeDetachedMountReportsPending: the daemon started as root with
// DropCaps (the default) does not call Server.Unmount at shutdown: its
// unmount helper detaches the mount (MNT_DETACH) and the daemon calls
// Server.Wait, then closes the metadata layer (daemon.Main.Close). Only
// Unmount runs freeFiles.close, which reports the files written without
// a handle. After a detach and Wait, a file written a moment before is
// not reported, so the daemon closes its index before the write is
// indexed (and a file created then loses its created_by for good:
// Reconcile at the next start records none).
func TestOpenFreeDetachedMountReportsPending(t *testing.T) {
	ctx := context.Background()
	tree := &closedFS{FS: hostTree(t)}
	semfs.WriteFile(ctx, tree.FS, "/g", []byte("0000"), 0o644)
	dir := t.TempDir()
	srv, err := Mount(dir, tree, Options{KeepCache: true, OpenFree: true, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "g"), []byte("22"), 0o644); err != nil {
		syscall.Unmount(dir, syscall.MNT_DETACH)
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "new"), []byte("created"), 0o644); err != nil {
		syscall.Unmount(dir, syscall.MNT_DETACH)
		t.Fatal(err)
	}
	// What the unmount helper does, then what Main.Close does.
	if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
		t.Fatal(err)
	}
	srv.Wait()
	seen := map[string]bool{}
	for _, w := range tree.closed() {
		seen[w.path+"="+w.data] = true
	}
	if !seen["/g=22"] || !seen["/new=created"] {
		t.Errorf("after the helper's detach and Wait (where the daemon closes its index) the tree saw %+v; want closes of /g holding 22 and /new holding created", tree.closed())
	}
}

// TestOpenFreeListsOncePerReaddirSequence: without OPENDIR (dirFree), every
// READDIR chunk opens a fresh directory handle, which lists the whole
// directory from the tree again to serve one chunk: listing a directory
// of n entries reads the tree about n/100 times (quadratic work). Not a
// correctness bug; noted for the record.
func TestOpenFreeListsOncePerReaddirSequence(t *testing.T) {
	ctx := context.Background()
	h := hostTree(t)
	tree := &listCountingFS{FS: h}
	const n = 5000
	for i := range n {
		if err := semfs.WriteFile(ctx, h, "/d/"+strings.Repeat("x", 40)+string(rune('a'+i%26))+time.Duration(i).String(), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := mountServer(t, tree, Options{KeepCache: true, OpenFree: true})
	entries, err := os.ReadDir(filepath.Join(srv.Dir(), "d"))
	if err != nil || len(entries) != n {
		t.Fatalf("listed %d, %v", len(entries), err)
	}
	if got := tree.lists.Load(); got > 2 {
		t.Errorf("one listing of %d entries read the directory from the tree %d times", n, got)
	}
}
