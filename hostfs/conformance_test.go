package hostfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/semfstest"
)

// seedFS writes files into a new host directory and opens it in mode.
func seedFS(mode Mode) func(tb semfstest.TB, files map[string][]byte) semfs.FS {
	return func(tb semfstest.TB, files map[string][]byte) semfs.FS {
		t := tb.(*testing.T)
		dir := t.TempDir()
		for p, data := range files {
			host := filepath.Join(dir, filepath.FromSlash(p[1:]))
			if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(host, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return open(t, dir, mode).Tree()
	}
}

func TestConformanceReadOnly(t *testing.T) {
	semfstest.Run(t, nil, semfstest.ReadOnly(), semfstest.Seed(seedFS(ReadOnly)))
}

// The writable runs read seeded trees: writing the suite's 1234-file
// directory with one fsynced WriteFile per file takes most of a minute
// under -race, and the write cases check what WriteFile wrote anyway.

func TestConformanceReadWrite(t *testing.T) {
	semfstest.Run(t, func(t *testing.T) semfs.FS { return open(t, t.TempDir(), ReadWrite) }, semfstest.Seed(seedFS(ReadWrite)))
}

func TestConformanceOverlay(t *testing.T) {
	semfstest.Run(t, func(t *testing.T) semfs.FS { return open(t, t.TempDir(), Overlay) })
}

// TestConformanceOverlaySeeded runs the suite over an overlay whose reads
// fall through to a seeded host directory.
func TestConformanceOverlaySeeded(t *testing.T) {
	// Two concurrent writers: the eight-writer case runs in TestConformanceOverlay.
	semfstest.Run(t, func(t *testing.T) semfs.FS { return open(t, t.TempDir(), Overlay) }, semfstest.Seed(seedFS(Overlay)), semfstest.Writers(2))
}

// TestConformanceRootOnly runs the suite with the openat2 fast path off.
func TestConformanceRootOnly(t *testing.T) {
	seed := func(tb semfstest.TB, files map[string][]byte) semfs.FS {
		f := seedFS(ReadWrite)(tb, files).(*FS)
		noFastPath(f, true)
		return f
	}
	// Two concurrent writers: the eight-writer case runs in TestConformanceReadWrite.
	semfstest.Run(t, func(t *testing.T) semfs.FS { return openMode(t, t.TempDir(), rootOnly) }, semfstest.Seed(seed), semfstest.Writers(2))
}
