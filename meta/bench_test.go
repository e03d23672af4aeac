package meta_test

import (
	"context"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/meta"
)

// BenchmarkIngest indexes GOROOT/src/net (read, hash, chunk, FTS5, trigrams;
// no embedding) into a fresh index per iteration.
func BenchmarkIngest(b *testing.B) {
	ctx := context.Background()
	host, err := hostfs.Open(filepath.Join(runtime.GOROOT(), "src", "net"), hostfs.ReadOnly)
	if err != nil {
		b.Fatal(err)
	}
	defer host.Close()
	var bytes int64
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	defer func() {
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
		b.ReportMetric(float64(bytes)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}()
	for i := 0; i < b.N; i++ {
		ix, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "i.db"))
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
	}
	b.SetBytes(bytes)
}

var _ = semfs.Clean
