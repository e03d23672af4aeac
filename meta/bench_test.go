package meta_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/memfs"
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
//
// small20k is 20 000 Markdown notes of 100-500 bytes (Zipf-distributed
// pseudo-words) in memory, where the cost per file dominates.
func BenchmarkIngest(b *testing.B) {
	for _, dir := range []string{"net", "cmd/compile", "src"} {
		b.Run(filepath.Base(dir), func(b *testing.B) {
			root := filepath.Join(runtime.GOROOT(), "src")
			if dir != "src" {
				root = filepath.Join(root, dir)
			}
			host, err := hostfs.Open(root, hostfs.ReadOnly)
			if err != nil {
				b.Fatal(err)
			}
			defer host.Close()
			benchIngest(b, host.Tree())
		})
	}
	b.Run("small20k", func(b *testing.B) {
		benchIngest(b, smallNotes(b, 20000))
	})
}

// smallNotes is a memfs of n short notes.
func smallNotes(b *testing.B, n int) semfs.FS {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	syl := []string{"ka", "lo", "mi", "ra", "te", "su", "no", "vi", "de", "pa", "gri", "ton", "bel", "sar"}
	vocab := make([]string, 5000)
	for i := range vocab {
		for range 2 + rng.IntN(3) {
			vocab[i] += syl[rng.IntN(len(syl))]
		}
	}
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1))
	base := memfs.New()
	for i := range n {
		var t strings.Builder
		for w := range 15 + rng.IntN(60) {
			if w > 0 {
				t.WriteByte(' ')
			}
			t.WriteString(vocab[zipf.Uint64()])
		}
		t.WriteString(".\n")
		p := fmt.Sprintf("/d%03d/%s-%d.md", i%500, vocab[rng.IntN(len(vocab))], i)
		if err := semfs.WriteFile(ctx, base, p, []byte(t.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return base
}

func benchIngest(b *testing.B, tree semfs.FS) {
	ctx := context.Background()
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
		f, _ := meta.New(tree, ix, meta.Options{Logger: quiet})
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
