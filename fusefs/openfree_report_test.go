package fusefs

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/semfs/semfs"
)

// TestOpenFreeRemovalReportsWrites: a file written without a handle and
// removed through the mount within the quiet period is reported to the
// tree before the removal, holding what was written (the report re-reads
// the path, which the removal ends); a program that still holds the file
// writes on and reads back what it wrote, as on a local file system.
func TestOpenFreeRemovalReportsWrites(t *testing.T) {
	srv, tree, _, _ := mountOpenFree(t)
	if err := semfs.WriteFile(context.Background(), tree.FS, "/w", []byte("000000"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(srv.Dir(), "w")
	f := openWritten(t, p, "before")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if w, ok := tree.waitClosed("/w", "before"); !ok {
		t.Errorf("the write before the removal was not reported while /w held it: closes %+v", tree.closed())
	} else if w.by != "uid:0" && os.Geteuid() == 0 {
		t.Errorf("reported as %q; want the writer, uid:0", w.by)
	}
	if _, err := f.WriteAt([]byte(" after"), 6); err != nil {
		t.Fatalf("write after the removal through the descriptor held: %v", err)
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("fsync after the removal: %v", err)
	}
	if _, err := f.WriteAt([]byte(" synced"), 12); err != nil {
		t.Fatalf("write after the removal and an fsync: %v", err)
	}
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	if string(buf[:n]) != "before after synced" {
		t.Errorf("read back after the removal: %q; want %q", buf[:n], "before after synced")
	}
}

// TestOpenFreeRenameOverReportsWrites: a file written without a handle
// and then renamed over within the quiet period is reported before the
// rename, holding its own bytes; no close is reported afterwards at its
// path holding the bytes of the file moved there.
func TestOpenFreeRenameOverReportsWrites(t *testing.T) {
	srv, tree, _, _ := mountOpenFree(t)
	ctx := context.Background()
	for p, data := range map[string]string{"/a": "aaaa", "/b": "bbbb"} {
		if err := semfs.WriteFile(ctx, tree.FS, p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := filepath.Join(srv.Dir(), "a")
	f, err := os.OpenFile(a, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("AA"), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Rename(filepath.Join(srv.Dir(), "b"), a); err != nil {
		t.Fatal(err)
	}
	if _, ok := tree.waitClosed("/a", "AAaa"); !ok {
		t.Errorf("the write to /a was not reported before it was renamed over: closes %+v", tree.closed())
	}
	// The kernel forgets the old /a, and its kept host files close.
	deadline := time.Now().Add(reapDelay + 3*time.Second)
	for openFreeFiles(srv.t) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	for _, w := range tree.closed() {
		if w.path == "/a" && w.data == "bbbb" {
			t.Errorf("a close was reported at /a holding the bytes moved there: %+v", w)
		}
	}
}
