package daemon_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMmapWriteAfterCloseIndexed opens a file through the mount for
// writing, maps it shared, closes the descriptor (RELEASE reaches the
// daemon, which indexes the file then), writes through the mapping and
// unmaps it. The file's row must get the hash of the bytes on disk: under
// passthrough the mapped writes never pass through the daemon.
func TestMmapWriteAfterCloseIndexed(t *testing.T) {
	for _, pt := range []bool{true, false} {
		t.Run(fmt.Sprintf("passthrough=%v", pt), func(t *testing.T) {
			mnt, _, c, _ := mountedInProcess(t, fmt.Sprintf("-passthrough=%v", pt))
			p := filepath.Join(mnt, "m.txt")
			v1 := []byte(strings.Repeat("plain words in a mapped file\n", 200))
			if err := os.WriteFile(p, v1, 0o644); err != nil {
				t.Fatal(err)
			}
			waitHash(t, c, "/m.txt", v1)
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			m, err := syscall.Mmap(int(f.Fd()), 0, len(v1), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			time.Sleep(300 * time.Millisecond) // RELEASE reaches the daemon
			copy(m[100:], "quetzalcoatl")
			if err := syscall.Munmap(m); err != nil {
				t.Fatal(err)
			}
			v2 := bytes.Clone(v1)
			copy(v2[100:], "quetzalcoatl")
			sum := sha256.Sum256(v2)
			want := hex.EncodeToString(sum[:])
			deadline := time.Now().Add(5 * time.Second)
			for {
				st, err := c.Stat(context.Background(), "/m.txt")
				if err == nil && st.Meta != nil && st.Meta.Hash == want {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("after 5s the row of /m.txt has %+v, %v; not the hash of the bytes on disk %v", st.Meta, err, want[:12])
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}
