package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/semfs/semfs"
)

// procID names one process for its lifetime: a pid plus its start time (in
// clock ticks since boot), so that a reused pid is not mistaken for the
// process that registered.
type procID struct {
	pid   int32
	start uint64
}

// registration is what a process registered as: an app, and the grant of
// the token it registered with (nil without one).
type registration struct {
	app   string
	grant *grant
}

// Apps attributes processes to registered apps. Register records a process
// by its procID; Resolve finds the app of a process by walking its parent
// chain (/proc/PID/stat) up to the first registered ancestor, matching
// each by pid and start time, so a registration never passes to a process
// that took the pid of one that exited. Results are cached per process;
// the cache is dropped on every registration and whenever registrations
// of processes that exited are dropped (on each registration, and at most
// a second after such a process is gone): a process acts as a registered
// one while that one runs and it descends from it.
type Apps struct {
	mu    sync.Mutex
	apps  map[procID]registration
	cache map[procID]registration
	// pruned is when registrations of exited processes were last dropped.
	pruned time.Time
	// proc is the /proc directory; tests may point it elsewhere.
	proc string
}

// NewApps returns an empty attribution table.
func NewApps() *Apps {
	return &Apps{apps: map[procID]registration{}, cache: map[procID]registration{}, proc: "/proc"}
}

// Register attributes pid and its descendants to app.
func (a *Apps) Register(pid int32, app string) error {
	st, err := a.stat(pid)
	if err != nil {
		return fmt.Errorf("register: process %d: %w", pid, err)
	}
	return a.register(procID{pid, st.start}, registration{app: app})
}

// errGone is the error of registering a process that has exited.
var errGone = errors.New("the process that opened this connection has exited (its pid may belong to another process now); register over a connection of the live process")

// register records reg for the process id and its descendants, provided
// it is still running, and drops the registrations of processes that are
// gone.
func (a *Apps) register(id procID, reg registration) error {
	if !a.alive(id) {
		return errGone
	}
	a.prune()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.apps[id] = reg
	clear(a.cache)
	return nil
}

// pruneEvery is how often resolving drops the registrations of processes
// that have exited.
const pruneEvery = time.Second

// prune drops the registrations of processes that have exited, and with
// any the cache, so that a descendant that resolved to one does not keep
// its principal once the registered process is gone (whether or not it
// was resolved before).
func (a *Apps) prune() {
	a.mu.Lock()
	a.pruned = time.Now()
	keys := slices.Collect(maps.Keys(a.apps))
	a.mu.Unlock()
	var gone []procID
	for _, k := range keys {
		if !a.alive(k) {
			gone = append(gone, k)
		}
	}
	if len(gone) == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range gone {
		delete(a.apps, k)
	}
	clear(a.cache)
}

// alive reports whether the process id is running: its pid is held by a
// process started at the same time that has not exited (a zombie has).
func (a *Apps) alive(id procID) bool {
	st, err := a.stat(id.pid)
	return err == nil && st.start == id.start && st.state != 'Z' && st.state != 'X'
}

// identify returns the procID of the process pid, which pidfd (when >= 0)
// refers to: the start time is read from /proc and then the pidfd is
// checked to still refer to a live process, so the time read is that
// process's and not the time of a later holder of the pid. ok is false
// when the process is gone.
func (a *Apps) identify(pid int32, pidfd int) (id procID, ok bool) {
	st, err := a.stat(pid)
	if err != nil || st.state == 'Z' || st.state == 'X' {
		return procID{}, false
	}
	if pidfd >= 0 {
		// Signal 0 checks only; EPERM still means the process exists.
		if err := unix.PidfdSendSignal(pidfd, 0, nil, 0); err != nil && !errors.Is(err, unix.EPERM) {
			return procID{}, false
		}
	}
	return procID{pid, st.start}, true
}

// Resolve returns the app pid is attributed to, or "" when neither it nor
// any ancestor registered. pid may be a thread id (FUSE reports the calling
// thread): it is mapped to its process first.
func (a *Apps) Resolve(pid int32) string {
	return a.resolve(pid).app
}

// resolve returns the registration of pid or its nearest registered
// ancestor (the zero registration when there is none).
func (a *Apps) resolve(pid int32) registration {
	if pid <= 0 {
		return registration{}
	}
	a.mu.Lock()
	empty := len(a.apps) == 0
	a.mu.Unlock()
	if empty {
		return registration{}
	}
	pid = a.tgid(pid)
	st, err := a.stat(pid)
	if err != nil {
		return registration{}
	}
	return a.resolveFrom(procID{pid, st.start}, st.ppid)
}

// resolveProc is resolve for the process id: the zero registration and
// false when that process is gone.
func (a *Apps) resolveProc(id procID) (registration, bool) {
	st, err := a.stat(id.pid)
	if err != nil || st.start != id.start || st.state == 'Z' || st.state == 'X' {
		return registration{}, false
	}
	a.mu.Lock()
	empty := len(a.apps) == 0
	a.mu.Unlock()
	if empty {
		return registration{}, true
	}
	return a.resolveFrom(id, st.ppid), true
}

// resolveFrom walks up from the process self, whose parent is ppid.
func (a *Apps) resolveFrom(self procID, ppid int32) registration {
	a.mu.Lock()
	due := time.Since(a.pruned) >= pruneEvery
	a.mu.Unlock()
	if due {
		a.prune()
	}
	a.mu.Lock()
	if reg, ok := a.cache[self]; ok {
		a.mu.Unlock()
		return reg
	}
	a.mu.Unlock()

	var found registration
	cur, curPPid := self, ppid
	for range 64 { // a parent chain is short; bound it anyway
		a.mu.Lock()
		reg, ok := a.apps[cur]
		a.mu.Unlock()
		if ok {
			found = reg
			break
		}
		if curPPid <= 1 {
			break
		}
		st, err := a.stat(curPPid)
		if err != nil {
			break
		}
		cur, curPPid = procID{curPPid, st.start}, st.ppid
	}
	a.mu.Lock()
	if len(a.cache) > 1<<14 {
		clear(a.cache) // short-lived processes come and go; stay bounded
	}
	a.cache[self] = found
	a.mu.Unlock()
	return found
}

// Principal is the principal of a request from pid/uid/gid: for a process
// registered with a token (or descended from one), the token's principal
// under the registered app; otherwise the registered app if any, and the
// uid as the ID with no groups, so unregistered writers are recorded
// honestly as "uid:N" and never as another app.
func (a *Apps) Principal(pid, uid, gid uint32) semfs.Principal {
	return principalOf(a.resolve(int32(pid)), uid)
}

// principalOf is the principal of a process of uid registered as reg.
func principalOf(reg registration, uid uint32) semfs.Principal {
	if reg.grant != nil {
		return reg.grant.principal(reg.app)
	}
	return semfs.Principal{ID: uidID(uid), App: reg.app}
}

// uidID is the principal ID of a caller of uid without a token.
func uidID(uid uint32) string { return "uid:" + strconv.FormatUint(uint64(uid), 10) }

// procStat is what attribution reads of /proc/PID/stat.
type procStat struct {
	state byte // R, S, D, Z (exited, not yet reaped), ...
	ppid  int32
	start uint64 // clock ticks since boot (field 22)
}

// stat reads the state, parent pid and start time of pid from
// /proc/PID/stat.
func (a *Apps) stat(pid int32) (procStat, error) {
	b, err := os.ReadFile(a.proc + "/" + strconv.Itoa(int(pid)) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	// The command name is in parentheses and may hold spaces: fields
	// start after the last ')'. Then: state ppid ... starttime (field 22).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	p, err := strconv.ParseInt(string(f[1]), 10, 32)
	if err != nil {
		return procStat{}, err
	}
	st, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return procStat{}, err
	}
	return procStat{state: f[0][0], ppid: int32(p), start: st}, nil
}

// tgid maps a thread id to its process id (itself for a main thread).
func (a *Apps) tgid(tid int32) int32 {
	b, err := os.ReadFile(a.proc + "/" + strconv.Itoa(int(tid)) + "/status")
	if err != nil {
		return tid
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("Tgid:")); ok {
			if n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 32); err == nil {
				return int32(n)
			}
			break
		}
	}
	return tid
}
