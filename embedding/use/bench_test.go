package use

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var benchWords = strings.Fields(`the a of to and in is for on with file agent
search index vector memory model query result cache thread build test deploy
report user password account server config error network request response
meeting budget garden river music dinner window letter planet engine signal
fix read write open close update delete create find reset recover schedule`)

// shortTexts returns n deterministic texts of 5–12 words.
func shortTexts(n int) []string {
	r := rand.New(rand.NewPCG(7, 11))
	out := make([]string, n)
	for i := range out {
		w := make([]string, 5+r.IntN(8))
		for j := range w {
			w[j] = benchWords[r.IntN(len(benchWords))]
		}
		out[i] = strings.Join(w, " ")
	}
	return out
}

func BenchmarkEmbedShort(b *testing.B) {
	m := mustLoad(b)
	texts := shortTexts(1024)
	for _, bs := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch=%d", bs), func(b *testing.B) {
			ctx := context.Background()
			n := 0
			cpu0 := cpuTime()
			for b.Loop() {
				i := (n * bs) % (len(texts) - bs)
				if _, err := m.Embed(ctx, texts[i:i+bs]); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(n*bs)/b.Elapsed().Seconds(), "texts/s")
			// Texts per CPU-second is robust to other processes sharing
			// the machine; with 2 idle cores, texts/s approaches 2x it
			// for batches that split across both.
			b.ReportMetric(float64(n*bs)/(cpuTime()-cpu0).Seconds(), "texts/cpu-s")
		})
	}
}

// cpuTime is the user+system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEmbedChunk embeds content-sized texts (≈ 110 tokens, near the
// 128-token limit) 8 per call.
func BenchmarkEmbedChunk(b *testing.B) {
	m := mustLoad(b)
	short := shortTexts(1024)
	texts := make([]string, 64)
	for i := range texts {
		texts[i] = strings.Join(short[i*10:i*10+10], ". ")
	}
	if n := len(m.Tokenize(texts[0])); n < 80 || n > 128 {
		b.Fatalf("chunk text has %d tokens", n)
	}
	ctx := context.Background()
	n := 0
	cpu0 := cpuTime()
	for b.Loop() {
		i := (n * 8) % len(texts)
		if _, err := m.Embed(ctx, texts[i:i+8]); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n*8)/b.Elapsed().Seconds(), "texts/s")
	b.ReportMetric(float64(n*8)/(cpuTime()-cpu0).Seconds(), "texts/cpu-s")
}

func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := load(weightsFile, weightsSHA256); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLoadStats logs the load time and the memory the loaded model holds
// (run with -v; the numbers go to docs/bench/use.md).
func TestLoadStats(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rss0 := vmRSS()
	start := time.Now()
	m, err := load(weightsFile, weightsSHA256)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("load %v, model heap %.1f MiB, resident +%.1f MiB, weight file %.1f MiB", took.Round(time.Millisecond),
		float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), float64(vmRSS()-rss0)/(1<<20), float64(len(weightsFile))/(1<<20))
	// Load time depends on the machine's load (see BenchmarkLoad); the heap
	// does not: float16 panels + table ≈ 16 MiB.
	if heap := int64(after.HeapAlloc) - int64(before.HeapAlloc); heap > 40<<20 {
		t.Errorf("loaded model holds %.1f MiB of heap, want < 40", float64(heap)/(1<<20))
	}
	runtime.KeepAlive(m)
}

// vmRSS returns the process's resident set size in bytes (0 if unknown).
func vmRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
