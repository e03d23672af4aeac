package hostfs

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The benchmarks compare hostfs with the os package on the same host file.
// Each iteration makes one os call and one hostfs call, in alternating
// order, and times each, so that load from other processes on the machine
// falls on both sides alike. Each benchmark reports os-ns/op, hostfs-ns/op
// (medians over the iterations) and ratio = os/hostfs (1.0 is parity, above
// 1 hostfs is faster). ns/op is the time of the pair.

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

// pair runs osCall and fsCall once per iteration and reports their medians.
func pair(b *testing.B, osCall, fsCall func() error) {
	var osT, fsT []time.Duration
	i := 0
	for b.Loop() {
		first, second := osCall, fsCall
		if i%2 == 1 {
			first, second = fsCall, osCall
		}
		t0 := time.Now()
		if err := first(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := second(); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if i%2 == 0 {
			osT, fsT = append(osT, t1.Sub(t0)), append(fsT, t2.Sub(t1))
		} else {
			fsT, osT = append(fsT, t1.Sub(t0)), append(osT, t2.Sub(t1))
		}
		i++
	}
	om, fm := median(osT), median(fsT)
	b.ReportMetric(om, "os-ns/op")
	b.ReportMetric(fm, "hostfs-ns/op")
	if fm > 0 {
		b.ReportMetric(om/fm, "ratio")
	}
}

func median(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return float64(d[len(d)/2])
}

func benchRead(b *testing.B, name string, size int, rootOnly bool) {
	dir, f := benchTree(b)
	noFastPath(f, rootOnly)
	host := filepath.Join(dir, filepath.FromSlash(name))
	tree := "/" + name
	b.SetBytes(int64(2 * size))
	pair(b, func() error {
		data, err := os.ReadFile(host)
		if err == nil && len(data) != size {
			b.Fatalf("os read %d bytes", len(data))
		}
		return err
	}, func() error {
		data, err := f.ReadFile(ctx, tree)
		if err == nil && len(data) != size {
			b.Fatalf("hostfs read %d bytes", len(data))
		}
		return err
	})
}

func BenchmarkReadFile4KiB(b *testing.B)       { benchRead(b, "f4k", 4<<10, false) }
func BenchmarkReadFile1MiB(b *testing.B)       { benchRead(b, "f1m", 1<<20, false) }
func BenchmarkReadFile4KiBDepth4(b *testing.B) { benchRead(b, "a/b/c/f4k", 4<<10, false) }

// The RootOnly variants turn the openat2 fast path off, to show what it
// buys over os.Root alone.
func BenchmarkReadFile4KiBRootOnly(b *testing.B)       { benchRead(b, "f4k", 4<<10, true) }
func BenchmarkReadFile1MiBRootOnly(b *testing.B)       { benchRead(b, "f1m", 1<<20, true) }
func BenchmarkReadFile4KiBDepth4RootOnly(b *testing.B) { benchRead(b, "a/b/c/f4k", 4<<10, true) }

func benchStat(b *testing.B, name string, rootOnly bool) {
	dir, f := benchTree(b)
	noFastPath(f, rootOnly)
	host := filepath.Join(dir, filepath.FromSlash(name))
	tree := "/" + name
	pair(b, func() error {
		_, err := os.Stat(host)
		return err
	}, func() error {
		_, err := f.Stat(ctx, tree)
		return err
	})
}

func BenchmarkStat(b *testing.B)               { benchStat(b, "f4k", false) }
func BenchmarkStatDepth4(b *testing.B)         { benchStat(b, "a/b/c/f4k", false) }
func BenchmarkStatDepth4RootOnly(b *testing.B) { benchStat(b, "a/b/c/f4k", true) }

// BenchmarkFiles lists every regular file below GOROOT/src/net, sorted:
// filepath.WalkDir + sort vs hostfs Files (which also checks every entry
// is a valid tree name, hides bookkeeping, resolves links and sorts).
func BenchmarkFiles(b *testing.B) {
	src := filepath.Join(runtime.GOROOT(), "src", "net")
	f, err := Open(src, ReadOnly)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var want int
	pair(b, func() error {
		var files []string
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				files = append(files, p)
			}
			return err
		})
		slices.Sort(files)
		want = len(files)
		return err
	}, func() error {
		n := 0
		for _, err := range f.Files(ctx, "/") {
			if err != nil {
				return err
			}
			n++
		}
		if want != 0 && n != want {
			b.Fatalf("Files found %d, WalkDir %d", n, want)
		}
		return nil
	})
}

// benchCreate creates, writes (1 KiB) and closes a new small file per
// iteration, below dir ("" or "a/b/c"): os.OpenFile of the host path vs
// hostfs OpenFile in ReadWrite mode, each in its own directory.
func benchCreate(b *testing.B, dir string, rootOnly bool) {
	host := b.TempDir()
	for _, side := range []string{"os", "fs"} {
		if err := os.MkdirAll(filepath.Join(host, side, dir), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	f, err := Open(host, ReadWrite)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	noFastPath(f, rootOnly)
	data := []byte(strings.Repeat("x", 1<<10))
	const flag = os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	osN, fsN := 0, 0
	pair(b, func() error {
		osN++
		h, err := os.OpenFile(filepath.Join(host, "os", dir, "f"+strconv.Itoa(osN)), flag, 0o644)
		if err != nil {
			return err
		}
		if _, err := h.Write(data); err != nil {
			h.Close()
			return err
		}
		return h.Close()
	}, func() error {
		fsN++
		h, err := f.OpenFile(ctx, "/"+path.Join("fs", dir, "f"+strconv.Itoa(fsN)), flag, 0o644)
		if err != nil {
			return err
		}
		if _, err := h.Write(data); err != nil {
			h.Close()
			return err
		}
		return h.Close()
	})
}

func BenchmarkCreate1KiB(b *testing.B)               { benchCreate(b, "", false) }
func BenchmarkCreate1KiBDepth4(b *testing.B)         { benchCreate(b, "a/b/c", false) }
func BenchmarkCreate1KiBRootOnly(b *testing.B)       { benchCreate(b, "", true) }
func BenchmarkCreate1KiBDepth4RootOnly(b *testing.B) { benchCreate(b, "a/b/c", true) }
