package bench

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// cpuMeter reads the CPU time used so far by this process and, when a
// PostgreSQL server is measured, by every process of that server (its
// postmaster's children: backends, autovacuum, writers), so a query's CPU
// time can be told apart from the wall time a loaded machine inflates.
type cpuMeter struct {
	postmaster int // 0: no server
}

// newCPUMeter finds the postmaster of the server at dsn ("" for none).
func newCPUMeter(ctx context.Context, dsn string) (cpuMeter, error) {
	if dsn == "" {
		return cpuMeter{}, nil
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return cpuMeter{}, err
	}
	defer conn.Close(ctx)
	var backend int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		return cpuMeter{}, err
	}
	ppid, _ := statPPID(backend)
	return cpuMeter{postmaster: ppid}, nil
}

// statPPID returns the parent pid of pid from /proc/pid/stat.
func statPPID(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// server returns the CPU time of the server's processes, by pid
// (/proc/pid/schedstat: nanoseconds on a CPU).
func (m cpuMeter) server() map[int]time.Duration {
	out := map[int]time.Duration{}
	if m.postmaster == 0 {
		return out
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, ok := statPPID(pid); !ok || (pp != m.postmaster && pid != m.postmaster) {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/schedstat")
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			out[pid] = time.Duration(ns)
		}
	}
	return out
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs fn and returns its wall time and the CPU time this process
// and the server used meanwhile.
func (m cpuMeter) measure(fn func()) (wall, cpu time.Duration) {
	before := m.server()
	self := selfCPU()
	start := time.Now()
	fn()
	wall = time.Since(start)
	cpu = selfCPU() - self
	for pid, t := range m.server() {
		cpu += t - before[pid] // a process started meanwhile counts whole
	}
	return wall, cpu
}
