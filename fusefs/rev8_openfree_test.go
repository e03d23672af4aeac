package fusefs

// Open-free mode: a removal or rename over that the tree refuses keeps
// the file's later writes reported, and a removed file's kept writer
// serves only its own principal (review 8, R8-1 and R8-2).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

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

// TestOpenFreeWritesAfterRefusedChangeReported: the mount closes a
// file's writers before removing it or renaming over it (see
// freeFiles.keep); when the tree refuses the change, the file is still at
// its path, and what a program writes on must be reported as before, not
// go to a duplicate descriptor whose close reports nothing.
func TestOpenFreeWritesAfterRefusedChangeReported(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(mnt, p string) error
	}{
		{"remove", func(mnt, p string) error { return os.Remove(p) }},
		{"rename-over", func(mnt, p string) error { return os.Rename(filepath.Join(mnt, "src"), p) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, tree := mountRefusing(t)
			ctx := context.Background()
			for p, d := range map[string]string{"/w": "000000", "/src": "ssssss"} {
				if err := semfs.WriteFile(ctx, tree.FS, p, []byte(d), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p := filepath.Join(srv.Dir(), "w")
			f := openWritten(t, p, "before")
			tree.refuse.Store(true)
			if err := tc.change(srv.Dir(), p); err == nil {
				t.Fatalf("%s succeeded; want the tree's refusal", tc.name)
			}
			tree.refuse.Store(false)
			if _, ok := tree.waitClosed("/w", "before"); !ok {
				t.Fatalf("the write before the refused %s was not reported: %+v", tc.name, tree.closed())
			}
			if _, err := f.WriteAt([]byte("AFTER!"), 0); err != nil {
				t.Fatal(err)
			}
			if _, ok := tree.waitClosed("/w", "AFTER!"); !ok {
				t.Errorf("/w written after a refused %s was never reported to the tree (its bytes are not indexed): closes %+v", tc.name, tree.closed())
			}
		})
	}
}

// TestOpenFreeRemovedFileWritableOnlyByItsWriter: after a removal
// through the mount only a principal whose writer was open at the change
// can still write the file; another principal, whose writer never was,
// gets ESTALE rather than writing through the remover's kept descriptor.
func TestOpenFreeRemovedFileWritableOnlyByItsWriter(t *testing.T) {
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
	openWritten(t, p, "root")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	in.Write([]byte("go\n"))
	n, _ = outp.Read(buf)
	got := strings.TrimSpace(string(buf[:n]))
	if want := fmt.Sprint("errno ", int(syscall.ESTALE)); got != want {
		t.Errorf("uid %d, whose writer was never open, writing the removed file: %q; want %q", otherUID, got, want)
	}
}
