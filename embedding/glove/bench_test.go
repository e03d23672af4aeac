package glove

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// shortTexts are the calibration sentences and tag strings: 2 to 15 words.
func shortTexts(b testing.TB) []string {
	b.Helper()
	a, p := pairs(b, "../testdata/paraphrase.tsv")
	ta, tb := pairs(b, "../testdata/tags.tsv")
	return slices.Concat(a, p, ta, tb)
}

func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := parse(weights, WeightsSHA256); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbedSingle embeds one short text per call on one goroutine.
func BenchmarkEmbedSingle(b *testing.B) {
	m := load(b)
	texts := shortTexts(b)
	ctx := context.Background()
	i := 0
	cpu := cpuSeconds()
	for b.Loop() {
		if _, err := m.Embed(ctx, texts[i%len(texts):i%len(texts)+1]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	report(b, b.N, cpu)
}

// BenchmarkEmbedSingleParallel is one-text calls from GOMAXPROCS goroutines,
// as concurrent saves would make them.
func BenchmarkEmbedSingleParallel(b *testing.B) {
	m := load(b)
	texts := shortTexts(b)
	ctx := context.Background()
	cpu := cpuSeconds()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := m.Embed(ctx, texts[i%len(texts):i%len(texts)+1]); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
	report(b, b.N, cpu)
}

// report records wall-clock throughput and throughput per CPU-second. The
// second does not depend on what else the machine runs: an idle machine's
// capacity is about texts/cpu-s times its cores.
func report(b *testing.B, texts int, cpuStart float64) {
	b.ReportMetric(float64(texts)/b.Elapsed().Seconds(), "texts/s")
	if cpu := cpuSeconds() - cpuStart; cpu > 0 {
		b.ReportMetric(float64(texts)/cpu, "texts/cpu-s")
	}
}

// BenchmarkEmbedBatch embeds batches of 25 (the drain's default, serial) and
// 1024 short texts (parallel over all CPUs).
func BenchmarkEmbedBatch(b *testing.B) {
	m := load(b)
	all := shortTexts(b)
	for len(all) < 1024 {
		all = append(all, all...)
	}
	ctx := context.Background()
	for _, n := range []int{25, 1024} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			texts := all[:n]
			cpu := cpuSeconds()
			for b.Loop() {
				if _, err := m.Embed(ctx, texts); err != nil {
					b.Fatal(err)
				}
			}
			report(b, b.N*n, cpu)
		})
	}
}

// TestLoadCost measures what loading adds to the process: heap allocated by
// the index built at load, and resident memory (the embedded weights are
// paged in by the checksum). Run it alone, where Load has not run yet:
//
//	go test -run TestLoadCost -v ./embedding/glove/
func TestLoadCost(t *testing.T) {
	if loaded != nil {
		t.Skip("the model is already loaded in this process; run this test alone")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rssBefore := rssKB(t)
	start := time.Now()
	m := load(t)
	took := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	rssAfter := rssKB(t)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("first Load %v: heap +%.2f MB, resident +%.2f MB (weights file %.2f MB), %d words", took, float64(heap)/1e6, float64(rssAfter-rssBefore)/1e3, float64(len(weights))/1e6, m.count)
	// offsets + weights (8 bytes a word) + a half-full table of uint32.
	if limit := int64(16*m.count + 1<<20); heap > limit {
		t.Errorf("loading allocated %d heap bytes, want at most %d: rows must stay in the embedded bytes", heap, limit)
	}
	runtime.KeepAlive(m)
}

func rssKB(t *testing.T) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status:", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	t.Skip("no VmRSS")
	return 0
}
