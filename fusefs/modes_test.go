package fusefs

import (
	"os"
	"path/filepath"
	"testing"
	"time"
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
