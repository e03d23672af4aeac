package fusefs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/semfs/semfs"
)

// TestPassthroughOpenAfterUnreportedReplace: a reader holds f open by passthrough;
// f is replaced whole behind the mount (hostfs writes a temporary file and
// renames it over f), and before the report reaches the Server — the
// window between meta's base write and its Changed call, or an edit in the
// backing directory — a writer opens f through the mount and writes.
func TestPassthroughOpenAfterUnreportedReplace(t *testing.T) {
	for _, noPT := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoPassthrough=%v", noPT), func(t *testing.T) { openAfterUnreportedReplace(t, noPT) })
	}
}

func openAfterUnreportedReplace(t *testing.T, noPT bool) {
	ctx := context.Background()
	h := hostTree(t)
	srv := mountServer(t, h, Options{NoPassthrough: noPT, KeepCache: true, AttrTimeout: time.Minute, EntryTimeout: time.Minute})
	p := filepath.Join(srv.Dir(), "f")
	if err := semfs.WriteFile(ctx, h, "/f", []byte("version one"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := os.Open(p) // passthrough; registers the backing file
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := semfs.WriteFile(ctx, h, "/f", []byte("version two"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt([]byte("WRITTEN"), 0); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := semfs.ReadFile(ctx, h, "/f"); string(got) != "WRITTEN two" {
		t.Errorf("the tree holds %q, not the acknowledged write through the mount: it went to the replaced (unlinked) host file", got)
	}
	srv.Replaced("/f")
	if got, _ := os.ReadFile(p); string(got) != "WRITTEN two" {
		t.Errorf("the mount reads %q; want \"WRITTEN two\"", got)
	}
	// The reader still reads the file it opened, as on a local file system.
	buf := make([]byte, 32)
	if n, _ := r.ReadAt(buf, 0); string(buf[:n]) != "version one" {
		t.Errorf("the reader opened before the replacement reads %q; want \"version one\"", buf[:n])
	}
}
