package daemon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/hostfs"
)

// TestPutWhileOpenThenWriteThroughMount: `semfs put` with SEMFS_DATA
// replaces a file in the daemon's data directory directly (hostfs over it,
// no report to the mount) while a reader holds the file open through the
// mount; a program then opens the file through the mount and writes. The
// write must reach the new file, not the replaced one the reader's
// passthrough handle is backed by.
func TestPutWhileOpenThenWriteThroughMount(t *testing.T) {
	for _, pt := range []bool{true, false} {
		t.Run(fmt.Sprintf("passthrough=%v", pt), func(t *testing.T) {
			mnt, _, _, _ := mountedInProcess(t, fmt.Sprintf("-passthrough=%v", pt))
			data := filepath.Join(filepath.Dir(mnt), "data")
			p := filepath.Join(mnt, "f.txt")
			if err := os.WriteFile(p, []byte("version one"), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			h, err := hostfs.Open(data, hostfs.ReadWrite) // what `semfs put` opens
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if err := semfs.WriteFile(context.Background(), h, "/f.txt", []byte("version two"), 0o644); err != nil {
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
			if got, _ := os.ReadFile(filepath.Join(data, "f.txt")); string(got) != "WRITTEN two" {
				t.Errorf("the data directory holds %q, not the acknowledged write through the mount", got)
			}
		})
	}
}
