package main

import (
	"log"
	"os"
	"sync"
)

// The harness mounts file systems in this process; a run that fails or is
// interrupted must not leave them mounted (a dead FUSE mount fails every
// later access to its directory). log.Fatal would skip deferred calls, so
// failures go through fatalf, which runs the cleanups first.
var (
	cleanupMu sync.Mutex
	cleanups  []func()
)

// atExit registers f to run at the end of the run, failed or not, after
// those registered later.
func atExit(f func()) {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	cleanups = append(cleanups, f)
}

// runCleanups runs the registered cleanups, last registered first, once.
func runCleanups() {
	cleanupMu.Lock()
	fs := cleanups
	cleanups = nil
	cleanupMu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// fatalf logs, unmounts what the run mounted and exits with status 1.
func fatalf(format string, args ...any) {
	log.Printf(format, args...)
	runCleanups()
	os.Exit(1)
}
