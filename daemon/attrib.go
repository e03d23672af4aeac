package daemon

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"

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

// Apps attributes processes to registered apps. Register records a process;
// Resolve finds the app of a process by walking its parent chain
// (/proc/PID/stat) up to the first registered ancestor. Results are cached
// per process and the cache is dropped on every registration.
type Apps struct {
	mu    sync.Mutex
	apps  map[procID]registration
	cache map[procID]registration
	// proc is the /proc directory; tests may point it elsewhere.
	proc string
}

// NewApps returns an empty attribution table.
func NewApps() *Apps {
	return &Apps{apps: map[procID]registration{}, cache: map[procID]registration{}, proc: "/proc"}
}

// Register attributes pid and its descendants to app.
func (a *Apps) Register(pid int32, app string) error {
	return a.register(pid, registration{app: app})
}

// register records reg for pid and its descendants.
func (a *Apps) register(pid int32, reg registration) error {
	_, start, err := a.stat(pid)
	if err != nil {
		return fmt.Errorf("register: process %d: %w", pid, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.apps[procID{pid, start}] = reg
	clear(a.cache)
	return nil
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
	ppid, start, err := a.stat(pid)
	if err != nil {
		return registration{}
	}
	self := procID{pid, start}
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
		pp, st, err := a.stat(curPPid)
		if err != nil {
			break
		}
		cur, curPPid = procID{curPPid, st}, pp
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
	reg := a.resolve(int32(pid))
	if reg.grant != nil {
		return reg.grant.principal(reg.app)
	}
	return semfs.Principal{ID: "uid:" + strconv.FormatUint(uint64(uid), 10), App: reg.app}
}

// stat reads the parent pid and start time of pid from /proc/PID/stat.
func (a *Apps) stat(pid int32) (ppid int32, start uint64, err error) {
	b, err := os.ReadFile(a.proc + "/" + strconv.Itoa(int(pid)) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	// The command name is in parentheses and may hold spaces: fields
	// start after the last ')'. Then: state ppid ... starttime (field 22).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return 0, 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	p, err := strconv.ParseInt(string(f[1]), 10, 32)
	if err != nil {
		return 0, 0, err
	}
	st, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return 0, 0, err
	}
	return int32(p), st, nil
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
