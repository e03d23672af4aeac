package meta_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/meta"
)

// BenchmarkIngest indexes a directory of GOROOT/src (read, hash, chunk,
// full text, grep trigrams, metadata rows — durable; no embedding) into a
// fresh index per iteration. Besides MB/s per wall second it reports MB per
// CPU second of the process (user+sys, getrusage), which a shared machine
// inflates much less:
//
//	go test -run '^$' -bench 'Ingest/net' -benchtime 3x ./meta     # 5 MB, for iterating
//	go test -run '^$' -bench 'Ingest/src$' -benchtime 1x ./meta    # all of GOROOT/src
func BenchmarkIngest(b *testing.B) {
	for _, dir := range []string{"net", "cmd/compile", "src"} {
		b.Run(filepath.Base(dir), func(b *testing.B) {
			root := filepath.Join(runtime.GOROOT(), "src")
			if dir != "src" {
				root = filepath.Join(root, dir)
			}
			benchIngest(b, root)
		})
	}
}

func benchIngest(b *testing.B, root string) {
	ctx := context.Background()
	host, err := hostfs.Open(root, hostfs.ReadOnly)
	if err != nil {
		b.Fatal(err)
	}
	defer host.Close()
	var bytes int64
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		b.StartTimer()
		c0 := cpuTime()
		ix, err := sqlite.Open(ctx, filepath.Join(dir, "i.db"))
		if err != nil {
			b.Fatal(err)
		}
		f, _ := meta.New(host.Tree(), ix, meta.Options{Logger: quiet})
		rep, err := f.Reconcile(ctx, meta.ReconcileOptions{})
		if err != nil {
			b.Fatal(err)
		}
		bytes = rep.Bytes
		f.Close()
		ix.Close()
		cpu += cpuTime() - c0
		b.StopTimer()
		os.RemoveAll(dir)
		b.StartTimer()
	}
	b.SetBytes(bytes)
	b.ReportMetric(float64(bytes)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

// cpuTime is the user+sys CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
