package fusefs

import (
	"context"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/semfs/semfs"
)

// Writes through a shared mapping of a file open by passthrough reach the
// host file without the daemon: the kernel maps the backing file itself,
// so the mapping outlives close(2), and RELEASE — where the tree learns
// that the file was written (semfs.Fder: a writable file whose descriptor
// was handed out is re-read at Close) — arrives before the program writes
// through it and unmaps it. When the last writable passthrough handle of
// a file is released, the mount therefore watches the host file with
// inotify, and on IN_CLOSE_WRITE (the kernel closes a mapping's backing
// file when the mapping goes away) opens the file for writing through the
// tree, takes its descriptor and closes it, which makes the tree re-read
// and re-index it (and watches the file again). The watch ends when the file is opened for writing by
// passthrough again (that handle's close covers it), when it is removed,
// or when more than maxMapped files are watched (the oldest goes).
//
// Keeping writable opens off passthrough would avoid this, but a writer
// could then not open a file a reader holds by passthrough (the kernel
// refuses mixed modes on one inode), and the create stream through the
// mount is twice as fast with passthrough.

// maxMapped bounds the files watched for writes through mappings; each
// holds an O_PATH descriptor and an inotify watch.
const maxMapped = 256

type mapWatch struct {
	t    *tree
	once sync.Once
	ifd  *os.File // nil when inotify is unavailable

	mu     sync.Mutex
	closed bool
	byWd   map[int32]*watched
	byIno  map[uint64]*watched
	// order holds the watches in the order added, oldest first, for
	// evicting the oldest in constant time; entries no longer in byIno
	// are skipped when met, and dropped once they outnumber the rest.
	order []*watched
}

type watched struct {
	ino   uint64
	path  string // where the file was when watched; the table's if it still numbers it
	wd    int32
	opath int // O_PATH descriptor of the host file, to watch it again
	added time.Time
	stat  fileStamp // the file when watched
	// settling: watched at a release, whose handle's backing file the
	// kernel may close after the watch was added (see settle); the first
	// event only may be that close.
	settling bool
}

// fileStamp is what a write changes in a file's status.
type fileStamp struct {
	size         int64
	mtime, ctime syscall.Timespec
}

func stampOf(fd int) (fileStamp, bool) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return fileStamp{}, false
	}
	return fileStamp{st.Size, st.Mtim, st.Ctim}, true
}

// settle is how long after a watch is added at a release an IN_CLOSE_WRITE
// may be the kernel closing the backing file of the handle just released
// rather than a mapping going away: the kernel sends RELEASE before it
// drops that file (about one release in five of a stream of small files
// sees that close after the watch was added). The first event in that
// time re-reads the file only if its status changed; any later one, or
// one on a watch added again after a re-read, re-reads it. A status is
// no proof that a mapping wrote nothing: a write fault stamps the file's
// times before the bytes land, so a re-read in between reads the old
// bytes under the new times, and only the close at munmap tells that the
// bytes are there.
const settle = 250 * time.Millisecond

func (m *mapWatch) start() {
	m.once.Do(func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.byWd = map[int32]*watched{}
		m.byIno = map[uint64]*watched{}
		if m.closed { // a release after the unmount (a lazy detach leaves handles open)
			return
		}
		fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
		if err != nil {
			m.t.opts.logf("fusefs: inotify unavailable, writes through a mapping after close are not re-indexed: %v", err)
			return
		}
		m.ifd = os.NewFile(uintptr(fd), "inotify")
		go m.run(m.ifd)
	})
}

// prepare returns an O_PATH descriptor of the host file open at fd (or -1),
// for add. It is taken before the handle's file is closed, and the watch
// added after, so that the tree's own close is not taken for a mapping's.
func (m *mapWatch) prepare(fd int) int {
	opath, err := syscall.Open(fmt.Sprintf("/proc/self/fd/%d", fd), unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return opath
}

// add watches the file held by opath (from prepare, closed by add when it
// is not kept). When before is given — the file as it was before the tree
// closed the handle that left it watched — and the file changed since, it
// is re-read once: a mapping written and unmapped between the tree's
// re-read at Close and the watch closed its backing file unwatched.
func (m *mapWatch) add(ino uint64, p string, opath int, before *fileStamp) {
	if w := m.watch(ino, p, opath, true); w != nil && before != nil && w.stat != *before {
		m.mu.Lock()
		if m.byIno[ino] != w || m.closed {
			m.mu.Unlock()
			return
		}
		m.reread(w)
	}
}

// watch is add without the check, returning what it watches or nil;
// settling: the watch is added at a release (see settle).
func (m *mapWatch) watch(ino uint64, p string, opath int, settling bool) *watched {
	if opath < 0 {
		return nil
	}
	m.start()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ifd == nil || m.closed {
		syscall.Close(opath)
		return nil
	}
	if old := m.byIno[ino]; old != nil {
		m.removeLocked(old)
	}
	wd, err := syscall.InotifyAddWatch(int(m.ifd.Fd()), fmt.Sprintf("/proc/self/fd/%d", opath), syscall.IN_CLOSE_WRITE)
	if err != nil {
		syscall.Close(opath)
		m.t.opts.logf("fusefs: watching %s for writes through a mapping: %v", p, err)
		return nil
	}
	if old := m.byWd[int32(wd)]; old != nil { // the same host file under another number
		m.removeLocked(old)
	}
	w := &watched{ino: ino, path: p, wd: int32(wd), opath: opath, added: time.Now(), settling: settling}
	w.stat, _ = stampOf(opath)
	m.byWd[w.wd], m.byIno[ino] = w, w
	m.order = append(m.order, w)
	if len(m.byIno) > maxMapped {
		m.removeLocked(m.oldestLocked())
	}
	if len(m.order) > 2*maxMapped && len(m.order) > 2*len(m.byIno) {
		live := m.order[:0]
		for _, v := range m.order {
			if m.byIno[v.ino] == v {
				live = append(live, v)
			}
		}
		clear(m.order[len(live):])
		m.order = live
	}
	if m.byIno[ino] != w {
		return nil
	}
	return w
}

// watching reports whether number ino is watched: it may be mapped for
// writing. The caller may hold t.mu.
func (m *mapWatch) watching(ino uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byIno[ino] != nil
}

// drop ends the watch of number ino, if any: it is open for writing by
// passthrough again, or was removed or replaced. The caller may hold t.mu
// (m.mu is never held while taking it).
func (m *mapWatch) drop(ino uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w := m.byIno[ino]; w != nil && !m.closed {
		m.removeLocked(w)
	}
}

// oldestLocked returns the watch added first of those in byIno (which
// holds one at least), and forgets it and the stale entries before it.
func (m *mapWatch) oldestLocked() *watched {
	for i, v := range m.order {
		if m.byIno[v.ino] == v {
			clear(m.order[:i+1])
			m.order = m.order[i+1:]
			return v
		}
	}
	panic("fusefs: mapWatch.order lost a watch")
}

func (m *mapWatch) removeLocked(w *watched) {
	if m.byWd[w.wd] == w {
		delete(m.byWd, w.wd)
		syscall.InotifyRmWatch(int(m.ifd.Fd()), uint32(w.wd))
	}
	if m.byIno[w.ino] == w {
		delete(m.byIno, w.ino)
	}
	syscall.Close(w.opath)
}

// close stops watching (at unmount), for good: a watch is not started
// after it.
func (m *mapWatch) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.closed = true
	if m.ifd == nil {
		return
	}
	for _, w := range m.byIno {
		syscall.Close(w.opath)
	}
	m.byIno, m.byWd, m.order = map[uint64]*watched{}, map[int32]*watched{}, nil
	m.ifd.Close()
}

func (m *mapWatch) run(f *os.File) {
	buf := make([]byte, 64*(syscall.SizeofInotifyEvent+syscall.NAME_MAX+1))
	for {
		n, err := f.Read(buf)
		if err != nil {
			return // closed at unmount
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			off += syscall.SizeofInotifyEvent + int(ev.Len)
			m.event(ev.Wd, ev.Mask)
		}
	}
}

func (m *mapWatch) event(wd int32, mask uint32) {
	m.mu.Lock()
	w := m.byWd[wd]
	if w == nil || m.closed {
		m.mu.Unlock()
		return
	}
	if mask&syscall.IN_IGNORED != 0 { // the file is gone
		delete(m.byWd, wd)
		if m.byIno[w.ino] == w {
			delete(m.byIno, w.ino)
		}
		syscall.Close(w.opath)
		m.mu.Unlock()
		return
	}
	if mask&syscall.IN_CLOSE_WRITE == 0 {
		m.mu.Unlock()
		return
	}
	if w.settling {
		w.settling = false
		if time.Since(w.added) < settle {
			if now, ok := stampOf(w.opath); ok && now == w.stat {
				m.debugf("fusefs: %s: a close %v after the release, status unchanged: taken for the released handle's", w.path, time.Since(w.added))
				m.mu.Unlock()
				if testHookKept != nil {
					testHookKept(w.path)
				}
				return
			}
		}
	}
	m.debugf("fusefs: %s: a close %v after the watch: re-reading", w.path, time.Since(w.added))
	m.reread(w)
}

// reread has the tree re-read the file w watches. The caller holds m.mu,
// which reread releases.
func (m *mapWatch) reread(w *watched) {
	// The re-index below opens and closes the file for writing: unwatch
	// it meanwhile, and watch it again after (another mapping may live).
	delete(m.byWd, w.wd)
	syscall.InotifyRmWatch(int(m.ifd.Fd()), uint32(w.wd))
	m.mu.Unlock()

	p := w.path
	if now, ok := m.t.pathOf(w.ino); ok {
		p = now
	}
	m.t.reindex(p)

	m.mu.Lock()
	kept := m.byIno[w.ino] == w
	if kept {
		delete(m.byIno, w.ino)
	}
	m.mu.Unlock()
	if kept { // else dropped meanwhile, its descriptor closed
		// Not settling: the re-read's own close came before the watch,
		// and a mapping's write may have stamped the file before the
		// re-read and landed after it.
		m.watch(w.ino, w.path, w.opath, false)
	}
}

// debugf logs a decision of the watch when SEMFS_DEBUG_MAPPED is set (read
// at each event, at most one per release, so that a test can set it).
func (m *mapWatch) debugf(format string, args ...any) {
	if os.Getenv("SEMFS_DEBUG_MAPPED") != "" {
		m.t.opts.logf(format, args...)
	}
}

// reindex makes the tree re-read p: it opens p for writing, takes the
// descriptor (which marks the file written, semfs.Fder) and closes it.
func (t *tree) reindex(p string) {
	if testHookReindex != nil {
		testHookReindex(p)
	}
	ctx := context.Background()
	t.ns.RLock()
	defer t.ns.RUnlock()
	rw, err := semfs.OpenFile(ctx, t.fsys, p, os.O_WRONLY, 0)
	if err != nil {
		if !semfs.IsAbsence(err) {
			t.opts.logf("fusefs: re-reading %s after writes through a mapping: %v", p, err)
		}
		return
	}
	semfs.HostFd(rw)
	if err := rw.Close(); err != nil {
		t.opts.logf("fusefs: re-reading %s after writes through a mapping: %v", p, err)
	}
}

// testHookKept, when set by a test, runs when a close of a watched file
// is taken for the kernel's close of the released handle's backing file.
var testHookKept func(p string)

// testHookReindex, when set by a test, runs on every re-index after a
// write through a mapping.
var testHookReindex func(p string)
