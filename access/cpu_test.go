package access_test

import (
	"runtime"
	"syscall"
	"testing"
)

// threadCPU returns the CPU time the calling OS thread has used.
func threadCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD, Linux
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
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
