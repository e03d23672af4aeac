package memfs_test

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/memfs"
)

func BenchmarkWriteRead(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			m := memfs.New()
			data := pattern(size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			defer cpuMeter(b)()
			for b.Loop() {
				if err := m.WriteFile(ctx, "/dir/file", data, 0o644); err != nil {
					b.Fatal(err)
				}
				got, err := m.ReadFile(ctx, "/dir/file")
				if err != nil || len(got) != size {
					b.Fatal(len(got), err)
				}
			}
		})
	}
}

// BenchmarkReadFileParallel reads 1 KiB files from every core at once.
func BenchmarkReadFileParallel(b *testing.B) {
	m := memfs.New()
	for i := range 100 {
		m.WriteFile(ctx, fmt.Sprintf("/d/f%03d", i), pattern(1<<10), 0o644)
	}
	b.SetBytes(1 << 10)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := m.ReadFile(ctx, fmt.Sprintf("/d/f%03d", i%100)); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

func BenchmarkStat(b *testing.B) {
	m := memfs.New()
	for i := range 10_000 {
		m.WriteFile(ctx, fmt.Sprintf("/proj/src/d%02d/file-%05d.go", i/100, i), nil, 0o644)
	}
	b.ReportAllocs()
	defer cpuMeter(b)()
	for b.Loop() {
		if _, err := m.Stat(ctx, "/proj/src/d42/file-04242.go"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadDir10k(b *testing.B) {
	m := memfs.New()
	for i := range 10_000 {
		m.WriteFile(ctx, fmt.Sprintf("/big/file-%05d", i), nil, 0o644)
	}
	b.ReportAllocs()
	defer cpuMeter(b)()
	for b.Loop() {
		entries, err := m.ReadDir(ctx, "/big")
		if err != nil || len(entries) != 10_000 {
			b.Fatal(len(entries), err)
		}
	}
}

// BenchmarkWriteAtMiddle writes 1 byte into the middle of a 16 MiB file.
func BenchmarkWriteAtMiddle(b *testing.B) {
	m := memfs.New()
	m.WriteFile(ctx, "/big", pattern(16<<20), 0o644)
	f, err := m.OpenFile(ctx, "/big", os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.ReportAllocs()
	defer cpuMeter(b)()
	for b.Loop() {
		f.WriteAt([]byte{'x'}, 8<<20)
	}
}

// BenchmarkSnapshotRestore snapshots and restores 10k files of 1 KiB.
func BenchmarkSnapshotRestore(b *testing.B) {
	m := memfs.New()
	for i := range 10_000 {
		m.WriteFile(ctx, fmt.Sprintf("/d%02d/f%05d", i/100, i), pattern(1<<10), 0o644)
	}
	var buf bytes.Buffer
	b.ReportAllocs()
	defer cpuMeter(b)()
	for b.Loop() {
		buf.Reset()
		if err := m.Snapshot(ctx, &buf); err != nil {
			b.Fatal(err)
		}
		if err := memfs.New().Restore(ctx, &buf); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

// BenchmarkMillionEmptyFiles builds a tree of 1M empty files (1000
// directories of 1000) and reports the heap it holds after a GC.
func BenchmarkMillionEmptyFiles(b *testing.B) {
	const n = 1_000_000
	defer cpuMeter(b)()
	for b.Loop() {
		before := heapInuse()
		m := memfs.New()
		for i := range n {
			if err := m.WriteFile(ctx, fmt.Sprintf("/d%04d/file-%07d.txt", i/1000, i), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		after := heapInuse()
		debug.FreeOSMemory()
		rss := residentBytes()
		runtime.KeepAlive(m)
		b.ReportMetric(float64(after-before)/1e6, "MB-heap")
		b.ReportMetric(float64(after-before)/n, "B/file")
		b.ReportMetric(float64(rss)/1e6, "MB-rss-process")
	}
}

// BenchmarkRandomInserts100k creates 100k files in random name order in one
// directory.
func BenchmarkRandomInserts100k(b *testing.B) {
	names := make([]string, 100_000)
	for i := range names {
		names[i] = fmt.Sprintf("/big/%08x", uint32(i)*2654435761)
	}
	defer cpuMeter(b)()
	for b.Loop() {
		m := memfs.New()
		for _, n := range names {
			if err := m.WriteFile(ctx, n, nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// residentBytes returns the resident set size of this process (Linux), or 0.
func residentBytes() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb)
			return kb << 10
		}
	}
	return 0
}

// cpuMeter locks the benchmark to its OS thread and, when the returned
// function is called after the loop, reports the CPU time that thread used
// per op (cpu-ns/op). On a machine shared with other work, wall time per op
// includes waiting for a core; this does not. Work the runtime does on other
// threads (most of the GC) is not counted.
func cpuMeter(b *testing.B) func() {
	runtime.LockOSThread()
	start := threadCPU()
	return func() {
		used := threadCPU() - start
		runtime.UnlockOSThread()
		if b.N > 0 {
			b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}

func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD on Linux
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkClone copies the structure of a tree of 10k files of 1 KiB
// (contents are shared copy-on-write).
func BenchmarkClone(b *testing.B) {
	m := memfs.New()
	for i := range 10_000 {
		m.WriteFile(ctx, fmt.Sprintf("/d%02d/f%05d", i/100, i), pattern(1<<10), 0o644)
	}
	b.ReportAllocs()
	defer cpuMeter(b)()
	for b.Loop() {
		if m.Clone() == nil {
			b.Fatal("nil clone")
		}
	}
}
