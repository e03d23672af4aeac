package fusefs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs"
)

// TestChangesNotifiedAfterSecondLookup: once the kernel has looked a name up
// a second time (its entry expired and was revalidated), do reports of
// changes behind the mount still reach the kernel?
func TestChangesNotifiedAfterSecondLookup(t *testing.T) {
	for _, noPT := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoPassthrough=%v", noPT), func(t *testing.T) { notifyAfterSecondLookup(t, noPT) })
	}
}

func notifyAfterSecondLookup(t *testing.T, noPT bool) {
	ctx := context.Background()
	h := hostTree(t)
	srv := mountServer(t, h, Options{NoPassthrough: noPT, KeepCache: true, AttrTimeout: time.Minute, EntryTimeout: 200 * time.Millisecond})
	dir := srv.Dir()
	semfs.MkdirAll(ctx, h, "/d", 0o755)
	semfs.WriteFile(ctx, h, "/d/f", []byte("aaaa"), 0o644)
	semfs.WriteFile(ctx, h, "/d/g", []byte("g"), 0o644)
	p := filepath.Join(dir, "d", "f")
	if got, _ := os.ReadFile(p); string(got) != "aaaa" {
		t.Fatalf("read %q", got)
	}
	ls := func() string {
		ents, _ := os.ReadDir(filepath.Join(dir, "d"))
		var s []string
		for _, e := range ents {
			s = append(s, e.Name())
		}
		return strings.Join(s, " ")
	}
	ls()
	time.Sleep(300 * time.Millisecond)
	os.Stat(p) // the entries of d and d/f expired: LOOKUP again (same inodes)
	srv.t.mu.Lock()
	e := srv.t.inos["/d/f"]
	kernel := srv.t.live[1].GetChild("d").GetChild("f")
	same := srv.t.live[e.ino] == kernel
	srv.t.mu.Unlock()
	if !same {
		t.Errorf("after the second lookup the table holds an inode for /d/f that the kernel does not know")
	}

	w, err := h.OpenFile(ctx, "/d/f", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteAt([]byte("bbbbbb"), 0)
	w.Close()
	srv.Written("/d/f")
	if info, err := os.Stat(p); err != nil || info.Size() != 6 {
		t.Errorf("after a write behind the mount and Written, stat says size %d (%v); want 6", info.Size(), err)
	}
	if got, _ := os.ReadFile(p); string(got) != "bbbbbb" {
		t.Errorf("after a write behind the mount and Written, the mount reads %q; want \"bbbbbb\"", got)
	}

	a, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.Write([]byte("123"))
	a.Close()
	if got, _ := semfs.ReadFile(ctx, h, "/d/f"); string(got) != "bbbbbb123" {
		t.Errorf("an O_APPEND write through the mount after the write behind it left the tree holding %q; want \"bbbbbb123\"", got)
	}

	semfs.Remove(ctx, h, "/d/g")
	srv.Removed("/d/g")
	if got := ls(); got != "f" {
		t.Errorf("after a removal behind the mount and Removed, d lists %q; want \"f\"", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "d", "g")); err == nil {
		t.Errorf("stat of the removed d/g succeeds")
	}
}
