package daemon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/semfs/semfs/embedding"
)

// TestDrainYieldsToMount: while a program keeps sending requests to the
// mount, the drain embeds at most a batch per second (it waits for the
// mount to be quiet, a second at most); once the requests stop, it
// drains the rest at once.
func TestDrainYieldsToMount(t *testing.T) {
	mnt, _, d, _ := mountInProcess(t, t.TempDir())
	const files = 200
	data := make([]byte, 512)
	for i := range files {
		copy(data, fmt.Sprintf("file %d is about subject %d and nothing else\n", i, i%13))
		if err := os.WriteFile(filepath.Join(mnt, fmt.Sprintf("f%03d.txt", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Negative lookups: each reaches the daemon (the kernel keeps no
	// negative names here) and none saves anything.
	var stop atomic.Bool
	var wg sync.WaitGroup
	var lookups atomic.Int64
	wg.Go(func() {
		for i := 0; !stop.Load(); i++ {
			os.Stat(filepath.Join(mnt, fmt.Sprintf("missing-%d", i)))
			lookups.Add(1)
		}
	})
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()
	ctx := context.Background()
	content := func() int {
		t.Helper()
		b, err := d.Backlog(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if b.PendingFiles > 0 {
			return -1
		}
		return b.Unembedded[embedding.SpaceTags]
	}
	u0 := content()
	for deadline := time.Now().Add(10 * time.Second); u0 < 0 && time.Now().Before(deadline); u0 = content() {
		time.Sleep(10 * time.Millisecond)
	}
	if u0 < files/2 {
		t.Fatalf("%d of %d files wait for tag vectors once stored; the drain ran before the test could hold it", u0, files)
	}
	const watch = 2 * time.Second
	n0 := lookups.Load()
	time.Sleep(watch)
	u1 := content()
	if n := lookups.Load() - n0; n < 100 {
		t.Fatalf("only %d lookups in %v: the mount was not busy", n, watch)
	}
	// At most one batch (25 rows) per second of the watch, plus the one
	// under way when it started.
	if done := u0 - u1; done > 3*25 {
		t.Errorf("the drain embedded %d rows in %v while the mount served lookups; want at most a batch a second", done, watch)
	}
	stop.Store(true)
	wg.Wait()
	for deadline := time.Now().Add(60 * time.Second); content() != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d rows still wait for tag vectors a minute after the mount went quiet", content())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
