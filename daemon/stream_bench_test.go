package daemon_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/daemon"
	"github.com/semfs/semfs/embedding"
)

// BenchmarkCreateAfterBurst: an agent writes in bursts. A first burst of
// 2000 files leaves the drain workers their tag vectors (a transformer
// forward pass each); a pause lets the drain start; then the measured
// stream creates, writes 1 KiB to and closes b.N files in 100
// directories through the mount of an in-process daemon, while the drain
// has work. Reported: CPU of the whole process per file during the stream
// (daemon, drain and this program), about how many vectors the drain
// made meanwhile (drained-during), and the seconds from the stream's end
// until the index has caught up (catchup-s). Compare binaries side by
// side (go test -c of each commit).
func BenchmarkCreateAfterBurst(b *testing.B) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		b.Skip("skipping: /dev/fuse is missing")
	}
	dir := b.TempDir()
	mnt := filepath.Join(dir, "mnt")
	cfg, err := daemon.ParseConfig([]string{"-mode", "mount", "-mount", mnt, "-drop-caps=false", "-data", dir + "/data",
		"-index", dir + "/index/index.db", "-socket", dir + "/run/semfs.sock"}, func(string) string { return "" }, os.Stderr)
	if err != nil {
		b.Fatal(err)
	}
	d := &daemon.Main{Config: cfg, Logger: slog.New(slog.DiscardHandler)}
	if err := d.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	data := make([]byte, 1024)
	create := func(root string, n int) {
		for i := range 100 {
			if err := os.MkdirAll(filepath.Join(root, fmt.Sprintf("d%03d", i)), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		for i := range n {
			copy(data, fmt.Sprintf("file %d needle-%04d\n", i, i%1000))
			f, err := os.Create(filepath.Join(root, fmt.Sprintf("d%03d", i%100), fmt.Sprintf("f%05d.txt", i)))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.Write(data); err != nil {
				b.Fatal(err)
			}
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
	create(filepath.Join(mnt, "burst"), 2000)
	time.Sleep(time.Second) // the drain is woken once saves pause
	ctx := context.Background()
	// tags counts the rows waiting for a tag vector (a forward pass of
	// the transformer each, the drain's heaviest work), once every
	// closed file's row is stored.
	tags := func() int {
		for {
			bl, err := d.Backlog(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if bl.PendingFiles == 0 {
				return bl.Unembedded[embedding.SpaceTags]
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	u0 := tags()
	c0 := cpuTime()
	b.ResetTimer()
	create(filepath.Join(mnt, "stream"), b.N)
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	end := time.Now()
	// The tag vectors the drain made while the stream ran (each file
	// of the stream adds a row).
	b.ReportMetric(float64(u0+b.N-tags()), "drained-during")
	for {
		bl, err := d.Backlog(ctx)
		if err != nil {
			b.Fatal(err)
		}
		idle := bl.PendingFiles == 0
		for _, n := range bl.Unembedded {
			idle = idle && n == 0
		}
		if idle {
			break
		}
		if time.Since(end) > 10*time.Minute {
			b.Fatalf("index not caught up 10 minutes after the stream: %+v", bl)
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.ReportMetric(time.Since(end).Seconds(), "catchup-s")
}

// cpuTime is the CPU time (user + system) this process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
