package meta_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/meta"
)

// BenchmarkCloseStream creates, writes and closes 1 KiB files one after
// another through the layer over a host directory and a SQLite index —
// benchmount's small-file stream without the mount — with closes stored
// at Close (sync) or deferred and batched (deferred, CloseDelay 100 ms,
// with a close journal). Each op is one file; the deferred case's time
// includes storing every row (Flush at the end). Besides ns/op it reports
// the process's CPU per file, which a shared machine inflates much less:
//
//	go test -run '^$' -bench CloseStream -benchtime 5000x -count 3 ./meta
func BenchmarkCloseStream(b *testing.B) {
	for _, mode := range []string{"sync", "deferred"} {
		b.Run(mode, func(b *testing.B) {
			dir := b.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
				b.Fatal(err)
			}
			host, err := hostfs.Open(filepath.Join(dir, "data"), hostfs.ReadWrite)
			if err != nil {
				b.Fatal(err)
			}
			ix, err := sqlite.Open(context.Background(), filepath.Join(dir, "index.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			opts := meta.Options{Logger: quiet}
			if mode == "deferred" {
				opts.CloseDelay = meta.DefaultCloseDelay
				opts.CloseJournal = filepath.Join(dir, "closes.journal")
			}
			f, err := meta.New(host, ix, opts)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			ctx := semfs.WithPrincipal(context.Background(), semfs.Principal{App: "bench"})
			for d := range 100 {
				if err := f.Mkdir(ctx, fmt.Sprintf("/d%03d", d), 0o755); err != nil {
					b.Fatal(err)
				}
			}
			data := []byte(strings.Repeat("some text in a small file\n", 40)[:1024])
			b.ResetTimer()
			c0 := cpuTime()
			start := time.Now()
			for i := range b.N {
				copy(data, fmt.Sprintf("file %d needle-%04d\n", i, i%1000))
				w, err := f.OpenFile(ctx, fmt.Sprintf("/d%03d/f%07d.txt", i%100, i), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := w.Write(data); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			closed := time.Since(start)
			if err := f.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-c0).Microseconds())/float64(b.N), "cpu-µs/file")
			b.ReportMetric(float64(closed.Microseconds())/float64(b.N), "close-loop-µs/file")
			if n := f.Unflushed(); n != 0 {
				b.Fatalf("%d closes unstored after Flush", n)
			}
		})
	}
}
