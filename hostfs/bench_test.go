package hostfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchTree is a host directory with a 4 KiB and a 1 MiB file at the top
// and a 4 KiB file three directories down.
func benchTree(b *testing.B) (string, *FS) {
	b.Helper()
	dir := b.TempDir()
	write := func(rel string, size int) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat("x", size)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("f4k", 4<<10)
	write("f1m", 1<<20)
	write("a/b/c/f4k", 4<<10)
	f, err := Open(dir, ReadOnly)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return dir, f
}

func benchRead(b *testing.B, name string, size int) {
	dir, f := benchTree(b)
	host := filepath.Join(dir, filepath.FromSlash(name))
	b.Run("os", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			data, err := os.ReadFile(host)
			if err != nil || len(data) != size {
				b.Fatal(err)
			}
		}
	})
	b.Run("hostfs", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			data, err := f.ReadFile(ctx, "/"+name)
			if err != nil || len(data) != size {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkReadFile4KiB(b *testing.B)       { benchRead(b, "f4k", 4<<10) }
func BenchmarkReadFile1MiB(b *testing.B)       { benchRead(b, "f1m", 1<<20) }
func BenchmarkReadFile4KiBDepth4(b *testing.B) { benchRead(b, "a/b/c/f4k", 4<<10) }

func benchStat(b *testing.B, name string) {
	dir, f := benchTree(b)
	host := filepath.Join(dir, filepath.FromSlash(name))
	b.Run("os", func(b *testing.B) {
		for b.Loop() {
			if _, err := os.Stat(host); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hostfs", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.Stat(ctx, "/"+name); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkStat(b *testing.B)       { benchStat(b, "f4k") }
func BenchmarkStatDepth4(b *testing.B) { benchStat(b, "a/b/c/f4k") }
