package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// BenchmarkPutSmall measures one durable metadata + derived-data write of a
// small file (one transaction), with synchronous=FULL (the default) and
// NORMAL for comparison.
func BenchmarkPutSmall(b *testing.B) {
	for _, mode := range []string{"FULL", "NORMAL"} {
		b.Run(mode, func(b *testing.B) {
			old := syncMode
			syncMode = mode
			defer func() { syncMode = old }()
			ix, err := Open(context.Background(), filepath.Join(b.TempDir(), "i.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			ctx := context.Background()
			i := 0
			for b.Loop() {
				it := item(fmt.Sprintf("/f%d.txt", i%1000), "a small note about the quarterly budget review\n", semfs.Tags{Task: "notes"})
				if err := ix.Put(ctx, it); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkSetEmbedding measures one drain-worker vector write.
func BenchmarkSetEmbedding(b *testing.B) {
	ix, err := Open(context.Background(), filepath.Join(b.TempDir(), "i.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	const n = 1000
	for i := range n {
		if err := ix.Put(ctx, item(fmt.Sprintf("/f%d.txt", i), "some text\n", semfs.Tags{})); err != nil {
			b.Fatal(err)
		}
	}
	vec := make([]float32, 100)
	vec[0] = 1
	i := 0
	for b.Loop() {
		p := fmt.Sprintf("/f%d.txt", i%n)
		if err := ix.SetEmbedding(ctx, "content", p+"#00000", "some text\n", vec); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkLookup measures a search and a grep candidate lookup on 2000
// small files: the in-memory postings plus the rows read with them in one
// read transaction.
func BenchmarkLookup(b *testing.B) {
	ctx := context.Background()
	ix, err := Open(ctx, filepath.Join(b.TempDir(), "i.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	var items []index.Item
	for i := range 2000 {
		items = append(items, item(fmt.Sprintf("/d%d/f%d.txt", i%20, i), fmt.Sprintf("note %d about the quarterly budget review of team %d\n", i, i%50), semfs.Tags{}))
	}
	if err := ix.Put(ctx, items...); err != nil {
		b.Fatal(err)
	}
	b.Run("search", func(b *testing.B) {
		for b.Loop() {
			if _, err := ix.SearchChunks(ctx, []string{"budget", "team"}, index.Filter{}, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("search-filtered", func(b *testing.B) {
		for b.Loop() {
			if _, err := ix.SearchChunks(ctx, []string{"budget"}, index.Filter{PathPrefix: "/d3"}, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
	q, _, _ := index.PlanGrep("team 4", false, false)
	b.Run("grep", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := ix.GrepCandidates(ctx, "/", q); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWriteBatch is the single writer's share of a small-file
// ingest: one Put of 8192 new notes of ~440 bytes, prepared (analysed,
// postings built) before the timer starts, into an empty index.
//
//	go test -run '^$' -bench 'WriteBatch' -count 5 ./index/sqlite
func BenchmarkWriteBatch(b *testing.B) {
	ctx := context.Background()
	words := strings.Fields("the quarterly budget review of team alpha covers hiring plans travel costs and the new office lease for next year while engineering reports latency regressions in search ranking")
	items := make([]index.Item, 8192)
	for i := range items {
		var sb strings.Builder
		for j := 0; sb.Len() < 440; j++ {
			sb.WriteString(words[(i*7+j*j)%len(words)])
			sb.WriteByte(" \n"[j%9/8])
		}
		items[i] = item(fmt.Sprintf("/notes/%d/%d.md", i%64, i), sb.String(), semfs.Tags{})
	}
	pre := prepare(items)
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		ix, err := Open(ctx, filepath.Join(b.TempDir(), "i.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c0 := cpuTime()
		if err := ix.putPrepared(ctx, items, pre); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - c0
		b.StopTimer()
		ix.Close()
		b.StartTimer()
	}
	b.ReportMetric(cpu.Seconds()*1e3/float64(b.N), "cpu-ms/op")
}

// cpuTime is the user+sys CPU time of this process so far (on a shared
// machine steadier than the wall clock).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
