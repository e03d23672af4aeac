package fusefs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/hostfs"
)

// BenchmarkOpenReadClose opens, reads and closes small files of a
// mounted host tree whose pages the kernel holds — what grep -r does per
// file on a warm tree: an OPEN and a RELEASE round trip each — and
// reports the CPU time of the whole process (the serving daemon and the
// reading program) per file beside the wall time, and the same on the
// host directory. Compare binaries side by side (go test -c of each
// commit).
func BenchmarkOpenReadClose(b *testing.B) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		b.Skip("skipping: /dev/fuse is missing")
	}
	dir := b.TempDir()
	const files = 1000
	data := make([]byte, 1024)
	for i := range files {
		copy(data, fmt.Sprintf("file %d\n", i))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	srv := benchMount(b, dir)
	for _, side := range []struct{ name, dir string }{{"native", dir}, {"mount", srv.Dir()}} {
		b.Run(side.name, func(b *testing.B) { benchOpenReadClose(b, side.dir, files) })
	}
}

// benchOpenReadClose opens, fstats, reads and closes the files of dir in
// turn.
func benchOpenReadClose(b *testing.B, dir string, files int) {
	buf := make([]byte, 64<<10)
	read := func(i int) {
		f, err := os.Open(filepath.Join(dir, fmt.Sprintf("f%04d", i%files)))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Stat(); err != nil {
			b.Fatal(err)
		}
		for {
			n, err := f.Read(buf)
			if err == io.EOF || n == 0 {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		f.Close()
	}
	for range 2 { // load the pages; the first read marks the access time stale
		for i := range files {
			read(i)
		}
	}
	c0 := cpuTime()
	i := 0
	for b.Loop() {
		read(i)
		i++
	}
	b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time (user + system) this process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCreateWriteClose creates, writes 1 KiB to and closes new files
// in 100 directories of a mounted host tree (passthrough on, as the daemon
// mounts a backing directory) — the small-file stream of issue 5 without
// the metadata layer: LOOKUP, CREATE, FLUSH and RELEASE per file — and
// reports the CPU time of the whole process per file (cpu-ns/op) beside
// the wall time, and the same on the host directory.
func BenchmarkCreateWriteClose(b *testing.B) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		b.Skip("skipping: /dev/fuse is missing")
	}
	dir := b.TempDir()
	srv := benchMount(b, dir)
	for _, side := range []struct{ name, dir string }{{"native", filepath.Join(dir, "native")}, {"mount", filepath.Join(srv.Dir(), "mount")}} {
		b.Run(side.name, func(b *testing.B) { benchCreateWriteClose(b, side.dir) })
	}
}

// benchCreateWriteClose creates files under a fresh directory of root, as
// the daemon's benchmark harness does.
func benchCreateWriteClose(b *testing.B, root string) {
	data := make([]byte, 1024)
	for i := range 100 {
		if err := os.MkdirAll(filepath.Join(root, fmt.Sprintf("d%03d", i)), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	c0 := cpuTime()
	i := 0
	for b.Loop() {
		copy(data, fmt.Sprintf("file %d\n", i))
		f, err := os.Create(filepath.Join(root, fmt.Sprintf("d%03d", i%100), fmt.Sprintf("f%07d", i)))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(data); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// benchMount mounts the host directory dir as the benchmarks do (kept
// pages, names and attributes cached for a minute), unmounted when b ends.
func benchMount(b *testing.B, dir string) *Server {
	b.Helper()
	h, err := hostfs.Open(dir, hostfs.ReadWrite)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := Mount(b.TempDir(), h, Options{KeepCache: true, AttrTimeout: time.Minute, EntryTimeout: time.Minute, Logf: b.Logf})
	if err != nil {
		h.Close()
		b.Fatal(err)
	}
	b.Cleanup(func() {
		srv.Unmount()
		srv.Wait()
		h.Close()
	})
	return srv
}
