package access_test

import (
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// threadCPU returns the CPU time the calling OS thread has used, from
// clock_gettime(CLOCK_THREAD_CPUTIME_ID) (Linux): exact to the nanosecond,
// where getrusage(RUSAGE_THREAD) moves in scheduler ticks.
func threadCPU(b *testing.B) int64 {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		b.Fatal(errno)
	}
	return ts.Nano()
}

// loop runs fn b.N times and reports, besides wall time, the CPU time of
// the benchmark's thread per op: on a machine shared with other work, wall
// time includes waiting for a core, CPU time does not.
func loop(b *testing.B, fn func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU(b)
	n := 0
	for b.Loop() {
		fn()
		n++
	}
	b.ReportMetric(float64(threadCPU(b)-start)/float64(n), "cpu-ns/op")
}

// blockRatio runs bare and layer in alternating blocks of calls (which goes
// first alternates too) on one locked thread, and reports the median CPU
// time per call of each and the median of the pairs' ratios. Each iteration of b
// is one pair of blocks; a block lasts about a millisecond of the bare call.
func blockRatio(b *testing.B, bare, layer func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := 1
	for {
		start := time.Now()
		for range n {
			bare()
		}
		if time.Since(start) > time.Millisecond {
			break
		}
		n *= 2
	}
	block := func(fn func()) float64 {
		start := threadCPU(b)
		for range n {
			fn()
		}
		return float64(threadCPU(b)-start) / float64(n)
	}
	var bs, ls []float64
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			bs = append(bs, block(bare))
			ls = append(ls, block(layer))
		} else {
			ls = append(ls, block(layer))
			bs = append(bs, block(bare))
		}
		i++
	}
	rs := make([]float64, len(bs))
	for i := range bs {
		rs[i] = ls[i] / bs[i]
	}
	b.ReportMetric(median(bs), "bare-cpu-ns/op")
	b.ReportMetric(median(ls), "layer-cpu-ns/op")
	b.ReportMetric(median(rs), "ratio")
}

func median(xs []float64) float64 {
	xs = slices.Sorted(slices.Values(xs))
	return xs[len(xs)/2]
}
