// Command benchmount measures file system workloads through a semfs mount
// side by side with the backing directory used directly, and prints a
// Markdown table (docs/bench/daemon.md). It runs a real daemon in-process
// (mount mode, metadata layer and SQLite index over a host directory) and
// must run as root or with fusermount3.
//
//	go run ./daemon/internal/benchmount -dir /tmp/semfs-bench
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/daemon"
)

var debugFlag = flag.Bool("debug", false, "log every FUSE request the daemon serves, and each walk as it starts (stderr)")

func main() {
	dir := flag.String("dir", "/tmp/semfs-bench", "scratch directory (wiped)")
	seqMiB := flag.Int("seq-mib", 256, "size of the sequential file in MiB")
	small := flag.Int("small", 10000, "number of small files")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (daemon and workload) to this file")
	streamprofile := flag.String("streamprofile", "", "write a CPU profile of the small-file stream through the mount (daemon and workload) to this file")
	passthrough := flag.Bool("passthrough", true, "let the kernel read and write backing files directly (FUSE passthrough)")
	only := flag.String("only", "", `run only these workloads: "walks" (the small files, then the tree walks; no sequential file)`)
	walkprofile := flag.String("walkprofile", "", "write a CPU profile of the tree walks through the mount (daemon and workload) to this file")
	rounds := flag.Int("rounds", 1, "run the tree walks this many times (a row per walk and round)")
	walks := flag.String("walks", "ls,find,grep", "the tree walks to run, comma-separated: ls (ls -R), find (find -type f), grep (grep -r)")
	openFree := flag.Bool("open-free", false, "serve the mount in the open-free mode (daemon -open-free): files opened and closed without a FUSE request, no passthrough")
	floor := flag.Bool("floor", false, "run the workloads on reference FUSE servers too (go-fuse's loopback with semfs's cache settings and with the most caching the protocol offers, an in-memory server), count their requests, and measure one request's round trip")
	samples := flag.String("samples", "", "append each side's time per workload to this file (tab-separated), for -summarize")
	summary := flag.String("summarize", "", "print the median time and ratio to native of each side per workload in these -samples files (comma-separated), and exit")
	flag.Parse()
	if *summary != "" {
		for _, p := range strings.Split(*summary, ",") {
			f, err := os.Open(p)
			must(err)
			defer f.Close()
			fmt.Printf("%s:\n\n", p)
			must(summarize(f, os.Stdout))
			fmt.Println()
		}
		return
	}
	if *only != "" && *only != "walks" {
		fatalf("-only %q: the only subset is walks", *only)
	}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		fatalf("benchmount: %v", <-sig)
	}()
	defer runCleanups()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		must(err)
		must(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	os.RemoveAll(*dir)
	native := filepath.Join(*dir, "native")
	os.MkdirAll(native, 0o755)

	cfg := daemon.DefaultConfig()
	cfg.Mode = daemon.ModeMount
	cfg.Mount = filepath.Join(*dir, "mnt")
	cfg.Data = filepath.Join(*dir, "data")
	cfg.Index = filepath.Join(*dir, "index", "index.db")
	cfg.Socket = filepath.Join(*dir, "semfs.sock")
	cfg.DropCaps = false // an in-process daemon cannot re-exec itself
	cfg.Passthrough = *passthrough
	cfg.OpenFree = *openFree
	cfg.Debug = *debugFlag
	d := &daemon.Main{Config: cfg, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if err := d.Start(context.Background()); err != nil {
		fatalf("%v", err)
	}
	atExit(func() { d.Close() })

	fmt.Printf("mount: open-free %v, passthrough asked %v; load average at start: %s\n\n", *openFree, *passthrough && !*openFree, loadavg())
	defer func() { fmt.Printf("\nload average at the end: %s\n", loadavg()) }()
	t := &table{sides: []side{{name: "native", root: native}}}
	semfsSide := side{name: "semfs default", root: cfg.Mount}
	if *openFree {
		semfsSide.name = "semfs open-free"
	}
	if *floor {
		mountFloor(t, *dir)
	}
	// The semfs side comes last: with the sides in order (the create
	// stream), the others do not run beside its indexing of the files.
	t.sides = append(t.sides, semfsSide)
	if *samples != "" {
		f, err := os.OpenFile(*samples, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		must(err)
		defer f.Close()
		t.samples = f
	}
	t.header()
	row := t.row
	defer t.printRequests()
	seq := int64(*seqMiB) << 20
	if *only == "walks" {
		seq = 0
	}
	if seq > 0 {
		seqRows(row, seq, *seqMiB)
	}
	// Start the small-file stream from a settled daemon: the sequential
	// file's close is still being hashed and indexed in the background,
	// which the native side never pays for (its cost is in the catch-up
	// rows below, as the stream's own is).
	ctx := context.Background()
	settle(ctx, d)
	fds := fdCount()
	var streamEnd time.Time
	var streamCPU time.Duration
	row(fmt.Sprintf("create+write+close %d files of 1 KiB", *small), func(root string) (time.Duration, string) {
		if root == cfg.Mount && *streamprofile != "" && *cpuprofile == "" {
			f, err := os.Create(*streamprofile)
			must(err)
			must(pprof.StartCPUProfile(f))
			defer pprof.StopCPUProfile()
		}
		c0 := cpuTime()
		d := createSmall(filepath.Join(root, "small"), *small)
		streamEnd, streamCPU = time.Now(), cpuTime()-c0
		return d, fmt.Sprintf("%.2f s (%.0f files/s, %.2f ms CPU/file)", d.Seconds(), float64(*small)/d.Seconds(),
			float64(streamCPU.Microseconds())/1000/float64(*small))
	})
	// The daemon indexes each written file when it is closed, and the
	// kernel's RELEASE requests (each holding a host file open) queue
	// behind that work; the drain workers then embed the files' vectors.
	// Measure both from the end of the stream, then go on from a settled
	// daemon.
	c0 := cpuTime()
	for fdsAbove(fds+20) && time.Since(streamEnd) < 10*time.Minute {
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Printf("| closes (RELEASE) still queued after the small-file stream, drained in | | %.2f s | |\n", time.Since(streamEnd).Seconds())
	for time.Since(streamEnd) < 10*time.Minute {
		if idle(ctx, d) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	caught := time.Since(streamEnd)
	fmt.Printf("| index caught up (rows, chunks, tag and content vectors) after the stream in | | %.2f s (%.2f ms CPU/file meanwhile; stream + catch-up %.2f ms CPU/file) | |\n",
		caught.Seconds(), float64((cpuTime()-c0).Microseconds())/1000/float64(*small),
		float64((cpuTime()-c0+streamCPU).Microseconds())/1000/float64(*small))
	row("stat p50 (warm)", func(root string) (time.Duration, string) {
		p50 := statP50(filepath.Join(root, "small"), *small)
		return p50, fmt.Sprintf("%.1f µs", float64(p50.Nanoseconds())/1000)
	})
	if *floor {
		rt, nat, per, err := roundTrip(filepath.Join(*dir, "roundtrip"), native)
		must(err)
		fmt.Printf("| one FUSE round trip: stat p50 of a file whose attributes are not cached (in-memory server, attribute timeout 0; %.2f requests per stat) | %.1f µs | %.1f µs (%.1f µs more than native) | |\n",
			per, float64(nat.Nanoseconds())/1000, float64(rt.Nanoseconds())/1000, float64((rt-nat).Nanoseconds())/1000)
	}
	// Tree walks, cold then warm. Cold: the kernel's caches are dropped
	// (pages, dentries, inodes: the mount's FUSE inodes are forgotten too)
	// before one run on each side. Warm: best of three runs right after.
	// They start from a quiet daemon: after the index caught up, the
	// embedding workers measure their similarity telemetry (a profile of
	// the walks found 250 ms of it running beside them).
	if q := quiesce(time.Minute); q > 0 {
		fmt.Printf("| daemon quiet (CPU below 5%% of a core) before the walks after | | %.2f s | |\n", q.Seconds())
	}
	if *walkprofile != "" && *cpuprofile == "" {
		f, err := os.Create(*walkprofile)
		must(err)
		must(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	var cmds [][]string
	for _, w := range strings.Split(*walks, ",") {
		c, ok := walkCmds[w]
		if !ok {
			fatalf("-walks: unknown walk %q (known: ls, find, grep)", w)
		}
		cmds = append(cmds, c)
	}
	t.rotate = true
	for _, c := range slices.Repeat(cmds, *rounds) {
		row("`"+joinArgs(c)+"` over the small files, cold", func(root string) (time.Duration, string) {
			dropCaches()
			// The kernel forgets the mount's inodes as it drops them
			// (FORGET requests the daemon serves): let that end
			// before either side's walk, which it would slow.
			quiesce(10 * time.Second)
			c0, f0 := cpuTime(), majorFaults()
			d, childFaults := runCmd(filepath.Join(root, "small"), c, 1)
			return d, walkResult(d, cpuTime()-c0, 1) + fmt.Sprintf(", major faults: daemon %d, walk %d", majorFaults()-f0, childFaults)
		})
		row("`"+joinArgs(c)+"` over the small files, warm", func(root string) (time.Duration, string) {
			c0 := cpuTime()
			d, _ := runCmd(filepath.Join(root, "small"), c, 3)
			return d, walkResult(d, cpuTime()-c0, 3)
		})
	}
}

// loadavg is the first three fields of /proc/loadavg.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// quiesce waits, at most max, until this process (the daemon; nothing
// else runs) used less than 5 % of a core over a quarter of a second, and
// returns how long it waited.
func quiesce(max time.Duration) time.Duration {
	const window = 250 * time.Millisecond
	t0 := time.Now()
	for time.Since(t0) < max {
		c0 := cpuTime()
		time.Sleep(window)
		if cpuTime()-c0 < window/20 {
			break
		}
	}
	return time.Since(t0)
}

// walkCmds are the tree walks by name (-walks); "." stands for the tree.
var walkCmds = map[string][]string{
	"ls":   {"ls", "-R", "."},
	"find": {"find", ".", "-type", "f"},
	"grep": {"grep", "-r", "needle-0042", "."},
}

// walkResult describes a walk that took d at best, and the CPU this
// process (the daemon; the walk runs in a child) used over its runs: on a
// shared machine the daemon's CPU per walk varies less than wall time.
func walkResult(d, cpu time.Duration, runs int) string {
	return fmt.Sprintf("%.1f ms (daemon CPU %.1f ms)", float64(d.Microseconds())/1000, float64(cpu.Microseconds())/1000/float64(runs))
}

// seqRows measures the sequential file: written, read cold and warm, and
// read at random offsets.
func seqRows(row func(string, func(string) (time.Duration, string)), seq int64, seqMiB int) {
	row(fmt.Sprintf("sequential write, 1 MiB blocks, %d MiB", seqMiB), func(root string) (time.Duration, string) {
		d := seqWrite(filepath.Join(root, "seq.bin"), seq)
		return d, mbps(seq, d)
	})
	row(fmt.Sprintf("sequential read, 1 MiB blocks, %d MiB, cold (caches dropped)", seqMiB), func(root string) (time.Duration, string) {
		dropCaches()
		d := seqRead(filepath.Join(root, "seq.bin"))
		return d, mbps(seq, d)
	})
	row(fmt.Sprintf("sequential read, 1 MiB blocks, %d MiB, warm", seqMiB), func(root string) (time.Duration, string) {
		seqRead(filepath.Join(root, "seq.bin")) // warm up
		d := seqRead(filepath.Join(root, "seq.bin"))
		return d, mbps(seq, d)
	})
	const reads = 20000
	row("random 4 KiB reads (IOPS)", func(root string) (time.Duration, string) {
		d := randRead(filepath.Join(root, "seq.bin"), seq, reads)
		return d, fmt.Sprintf("%.0f IOPS", reads/d.Seconds())
	})
}

// dropCaches writes back dirty pages and drops the kernel's page, dentry
// and inode caches (needs root), so that the next walk is cold on either
// side.
// settle waits (at most two minutes) until the daemon's index has caught
// up with every change.
func settle(ctx context.Context, d *daemon.Main) {
	for t0 := time.Now(); time.Since(t0) < 2*time.Minute; time.Sleep(50 * time.Millisecond) {
		if idle(ctx, d) {
			return
		}
	}
}

// idle reports whether the daemon's index has caught up: no closed file
// waits for its row in the metadata layer (a deferred close, which the
// store's backlog cannot see) and the backlog is empty.
func idle(ctx context.Context, d *daemon.Main) bool {
	for fsys := d.FS(); fsys != nil; {
		if u, ok := fsys.(interface{ Unflushed() int }); ok && u.Unflushed() > 0 {
			return false
		}
		w, ok := fsys.(semfs.Unwrapper)
		if !ok {
			break
		}
		fsys = w.Unwrap()
	}
	b, err := d.Backlog(ctx)
	must(err)
	return b.Idle()
}

func dropCaches() {
	syscall.Sync()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0); err != nil {
		fatalf("dropping the kernel's caches for a cold run (run as root): %v", err)
	}
}

// cpuTime is the CPU time (user + system) this process used so far: the
// daemon and the workload together. The machine is shared, so CPU per
// operation says more than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// majorFaults is the number of page faults of this process (the daemon;
// the walk runs in a child) that read from disk so far. A cold walk
// follows dropped caches, which dropped the daemon's own executable pages
// too: the code serving the walk's first requests is read back from disk.
func majorFaults() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Majflt
}

// maxOPath is the most O_PATH descriptors the mount keeps: one for each
// file it watches for writes through mappings (fusefs maxMapped).
const maxOPath = 256

// fdsAbove reports whether the process holds more than n descriptors
// that are not O_PATH ones (see fdCount). While far more are open, it
// only lists them: reading every descriptor's fdinfo, 10 000 reads every
// 20 ms while the closes of the stream were queued, cost the daemon
// serving those closes half a core.
func fdsAbove(n int) bool {
	e, _ := os.ReadDir("/proc/self/fd")
	if len(e) > n+maxOPath {
		return true
	}
	return fdCount() > n
}

// fdCount counts the process's open descriptors except O_PATH ones: the
// mount keeps an O_PATH descriptor for each file it watches for writes
// through mappings (at most maxOPath), which are not closes still queued.
func fdCount() int {
	e, _ := os.ReadDir("/proc/self/fd")
	n := 0
	for _, d := range e {
		info, err := os.ReadFile("/proc/self/fdinfo/" + d.Name())
		if err != nil {
			continue // closed meanwhile
		}
		if !isOPath(string(info)) {
			n++
		}
	}
	return n
}

// isOPath reports whether an fdinfo text has O_PATH (octal 010000000) in
// its flags line.
func isOPath(fdinfo string) bool {
	for line := range strings.Lines(fdinfo) {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			f, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && f&0o10000000 != 0
		}
	}
	return false
}

func joinArgs(a []string) string {
	s := a[0]
	for _, x := range a[1:] {
		s += " " + x
	}
	return s
}

func mbps(n int64, d time.Duration) string {
	return fmt.Sprintf("%.0f MB/s", float64(n)/d.Seconds()/1e6)
}

func must(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}

func seqWrite(p string, size int64) time.Duration {
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	start := time.Now()
	f, err := os.Create(p)
	must(err)
	for n := int64(0); n < size; n += int64(len(buf)) {
		_, err := f.Write(buf)
		must(err)
	}
	must(f.Sync())
	must(f.Close())
	return time.Since(start)
}

func seqRead(p string) time.Duration {
	buf := make([]byte, 1<<20)
	start := time.Now()
	f, err := os.Open(p)
	must(err)
	for {
		n, err := f.Read(buf)
		if n == 0 || err != nil {
			break
		}
	}
	f.Close()
	return time.Since(start)
}

func randRead(p string, size int64, n int) time.Duration {
	f, err := os.Open(p)
	must(err)
	defer f.Close()
	buf := make([]byte, 4096)
	r := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	for range n {
		off := r.Int64N(size/4096) * 4096
		_, err := f.ReadAt(buf, off)
		must(err)
	}
	return time.Since(start)
}

func createSmall(root string, n int) time.Duration {
	must(os.MkdirAll(root, 0o755))
	data := []byte(strings.Repeat("some text in a small file\n", 40)[:1024])
	start := time.Now()
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", i%100))
		if i < 100 {
			must(os.Mkdir(dir, 0o755))
		}
		copy(data, fmt.Sprintf("file %d needle-%04d\n", i, i%1000))
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("f%05d.txt", i)))
		must(err)
		_, err = f.Write(data)
		must(err)
		must(f.Close())
	}
	return time.Since(start)
}

func statP50(root string, n int) time.Duration {
	var ds []time.Duration
	for round := range 2 { // the first round warms the caches
		ds = ds[:0]
		for i := range n {
			p := filepath.Join(root, fmt.Sprintf("d%03d", i%100), fmt.Sprintf("f%05d.txt", i))
			start := time.Now()
			_, err := os.Stat(p)
			ds = append(ds, time.Since(start))
			must(err)
		}
		_ = round
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// runCmd runs args, with "." standing for dir, runs times and returns the
// best time and the major page faults of the runs. The command gets dir as an argument rather than as its
// working directory: os/exec changes directory in the child between
// vfork and exec, where the child still borrows this process's thread, and
// a change into the mount this process serves can then wait forever on a
// daemon stopped for a garbage collection that waits on that thread.
func runCmd(dir string, args []string, runs int) (time.Duration, int64) {
	args = slices.Clone(args)
	for i, a := range args {
		if a == "." {
			args[i] = dir
		}
	}
	best := time.Duration(1 << 62)
	var faults int64
	for range runs {
		if *debugFlag {
			log.Printf("benchmount: running %v", args)
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stderr = os.Stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			fatalf("%v in %s: %v", args, dir, err)
		}
		best = min(best, time.Since(start))
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			faults += ru.Majflt
		}
	}
	return best, faults
}
