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

// TestMmapWriteSoonAfterCloseIndexed is TestMmapWriteAfterCloseIndexed
// with the mapping written and unmapped from 0 to 40 ms after close(2),
// while the daemon may still be re-reading the file at RELEASE: the row
// must get the hash of the bytes on disk whenever the write lands.
func TestMmapWriteSoonAfterCloseIndexed(t *testing.T) {
	mnt, _, c, _ := mountedInProcess(t, "-passthrough=true")
	for i, d := range []time.Duration{0, 0, 1 * time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 5 * time.Millisecond, 8 * time.Millisecond, 12 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond} {
		name := fmt.Sprintf("/m%d.txt", i)
		p := filepath.Join(mnt, name)
		v1 := []byte(strings.Repeat("plain words in a mapped file\n", 200))
		if err := os.WriteFile(p, v1, 0o644); err != nil {
			t.Fatal(err)
		}
		waitHash(t, c, name, v1)
		time.Sleep(300 * time.Millisecond) // past the mapping watch's settling time
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		m, err := syscall.Mmap(int(f.Fd()), 0, len(v1), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		time.Sleep(d)
		copy(m[100:], "quetzalcoatl")
		syscall.Munmap(m)
		v2 := bytes.Clone(v1)
		copy(v2[100:], "quetzalcoatl")
		sum := sha256.Sum256(v2)
		want := hex.EncodeToString(sum[:])
		deadline := time.Now().Add(3 * time.Second)
		ok := false
		var last string
		for time.Now().Before(deadline) {
			st, err := c.Stat(context.Background(), name)
			if err == nil && st.Meta != nil {
				last = st.Meta.Hash
				if last == want {
					ok = true
					break
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("delay %v: indexed=%v", d, ok)
		if !ok {
			t.Errorf("delay %v: after 3s row hash %.12s, bytes on disk %.12s", d, last, want)
		}
	}
}
