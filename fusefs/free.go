package fusefs

import (
	"container/list"
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/semfs/semfs"
)

// Open-free mode (Options.OpenFree). OPEN answers ENOSYS, which the kernel
// takes as "this file system needs no OPEN": from then on it opens and
// closes existing files of the mount without a request (no OPEN, no
// RELEASE), gives them no handle (fh 0) and keeps their pages across
// opens (FOPEN_KEEP_CACHE). CREATE still creates and opens with a handle,
// which RELEASE closes as in the default mode.
//
// Reads and writes without a handle are served here, from host files the
// mount opens itself: one per file and principal (and per direction: a
// writer is opened write-only), opened through the tree as the caller of
// the first READ or WRITE that needs it — so the tree checks that caller's
// access then, as it would at an open — and closed once unused for a
// while (freeIdle for readers, freeQuiet for writers), at fsync(2) for
// writers, at unmount, or when more than maxFree are open (the least
// recently used idle one goes). Closing a writer is what reports the
// file written to the tree (the metadata layer re-reads and indexes it
// at Close), so a file written without a handle is indexed a quiet
// period after its last write rather than at close(2), which sends
// nothing.
//
// The first host file opened for a number fixes its identity (device and
// inode): a later open through the number that finds another host file at
// the path (the file was replaced behind the mount and the change is not
// reported yet) answers ESTALE and drops the number and the kernel's
// name, as a reported replacement does; the caller's descriptor then
// stays stale, as on NFS, and a new open(2) reads the new file.
//
// A number renamed over or removed through the mount has no path, yet
// programs may hold it open (the mount cannot know: opens send nothing).
// Before such a change the mount therefore closes the number's writers,
// which reports the writes made so far while the path still names the
// file, and, if the kernel holds the inode, keeps host files of it until
// the kernel forgets the inode (it does once no descriptor and no name
// holds it): the file opened for reading as the caller making the change,
// and a duplicate of each closed writer's host descriptor. Reads, writes
// by a principal whose writer was open at the change (not reported: no
// path names the file) and fstat(2) (with no links) keep being served
// from them, as on a local file system; a principal whose writer was
// reaped before the change gets ESTALE for its writes. A number dropped by a
// report (Server.Removed, Replaced, Renamed) keeps only the host files
// already open; without one, its reads answer ESTALE.

// freeQuiet is how long a host file written without a handle stays open
// after its last write: its close reports the file written to the tree.
const freeQuiet = 200 * time.Millisecond

// freeIdle is how long a host file read without a handle stays open after
// its last read.
const freeIdle = time.Second

// maxFree bounds the host files open for reads and writes without a
// handle; beyond it the least recently used idle one is closed.
const maxFree = 256

// freeFiles are the host files of the open-free mode.
type freeFiles struct {
	t *tree

	mu    sync.Mutex
	files map[uint64]*freeFile // by number
	open  int                  // host files open
	// lru holds the host files closed when idle (all but those of
	// orphaned numbers), most recently used first.
	lru     *list.List
	reaping bool // a reap is scheduled
	closed  bool // unmounted: files are closed when unused
}

// freeFile is what the mode holds for one number.
type freeFile struct {
	id    fileID // the host file the number stands for, once known
	known bool
	// orphaned: the number was dropped (removed or renamed over); its
	// host files stay open until the kernel forgets it.
	orphaned bool
	handles  []*freeHandle
	// last is the context of the last caller with a pid who read or
	// wrote the file: the kernel writes back a shared mapping's pages
	// with pid 0, for the program that mapped (and so first read) them.
	last context.Context
}

// freeHandle is one open host file of the mode.
type freeHandle struct {
	h       *handle
	ctx     context.Context // the tree context it was opened as
	key     string          // the principal it was opened as (principalKey)
	write   bool
	busy    int           // requests using it
	used    time.Time     // end of the last use
	retired bool          // closed when busy drops to 0
	elem    *list.Element // in freeFiles.lru, or nil
}

func (f *freeFiles) init(t *tree) {
	f.t = t
	f.files = map[uint64]*freeFile{}
	f.lru = list.New()
}

// principalKey names a principal for the handle table: two callers share
// a host file only when everything the tree may decide by is the same.
func principalKey(ctx context.Context) string {
	p, _ := semfs.PrincipalFrom(ctx)
	var b strings.Builder
	b.WriteString(p.ID)
	b.WriteByte(0)
	b.WriteString(p.App)
	b.WriteByte(0)
	b.WriteString(strconv.FormatBool(p.Admin))
	for _, g := range p.Groups {
		b.WriteByte(0)
		b.WriteString(g)
	}
	return b.String()
}

// caller returns the tree context of a request on number ino: the
// caller's (own), or for a request the kernel makes itself (pid 0:
// writeback of a mapping's pages) that of the last caller who used the
// file.
//
// Without OPEN the mount cannot know who mapped a file or dirtied its
// pages (a mapper whose pages are cached sends nothing), so a writeback
// runs as whoever touched the file last, who may be another principal.
// That is safe only because the mode requires (Options.OpenFree) that
// every caller who can see a file may write it if any may: the tree then
// accepts or refuses the writeback alike for the mapper and for the last
// caller, and only created_by of a file first written by a mapping can
// name the wrong one. Where write access differs between callers, this
// would write a reader's stores as a writer, or refuse a writer's.
func (f *freeFiles) caller(ctx context.Context, ino uint64) (tctx context.Context, own bool) {
	if c, ok := fuse.FromContext(ctx); ok && c.Pid == 0 {
		f.mu.Lock()
		var last context.Context
		if e := f.files[ino]; e != nil {
			last = e.last
		}
		f.mu.Unlock()
		if last != nil {
			return last, false
		}
	}
	return f.t.ctx(ctx), true
}

// read serves a READ of number ino without a handle.
func (f *freeFiles) read(ctx context.Context, ino uint64, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	tctx, own := f.caller(ctx, ino)
	fh, errno := f.acquire(tctx, ino, false, own)
	if errno != 0 {
		return nil, errno
	}
	defer f.release(fh)
	return fh.h.Read(ctx, dest, off)
}

// write serves a WRITE of number ino without a handle.
func (f *freeFiles) write(ctx context.Context, ino uint64, data []byte, off int64) (uint32, syscall.Errno) {
	tctx, own := f.caller(ctx, ino)
	fh, errno := f.acquire(tctx, ino, true, own)
	if errno != 0 {
		return 0, errno
	}
	defer f.release(fh)
	return fh.h.Write(ctx, data, off)
}

// writer runs fn on a host file of number ino open for writing as the
// caller in ctx (truncate, fallocate without a handle).
func (f *freeFiles) writer(ctx context.Context, ino uint64, fn func(h *handle) syscall.Errno) syscall.Errno {
	fh, errno := f.acquire(ctx, ino, true, true)
	if errno != 0 {
		return errno
	}
	defer f.release(fh)
	return fn(fh.h)
}

// acquire returns a host file of number ino open as the caller in ctx,
// for writing or for reading, opening one if there is none. own says
// that ctx is the caller's own (not the kernel's, see caller): it is
// remembered as the file's last caller.
func (f *freeFiles) acquire(ctx context.Context, ino uint64, write, own bool) (*freeHandle, syscall.Errno) {
	key := principalKey(ctx)
	if fh := f.find(ctx, ino, key, write, own); fh != nil {
		return fh, 0
	}
	h, id, known, errno := f.openHost(ctx, ino, write)
	if errno == syscall.ESTALE {
		if fh := f.orphanFile(ino, write, key, own); fh != nil {
			return fh, 0
		}
	}
	if errno != 0 {
		return nil, errno
	}
	f.mu.Lock()
	e := f.files[ino]
	if e == nil {
		e = &freeFile{}
		f.files[ino] = e
	}
	if known {
		if e.known && e.id != id {
			f.mu.Unlock()
			h.file().Close()
			// Another file stands at the name: drop the number, and
			// the kernel's name (outside this request), so that the next
			// open(2) looks it up again.
			p, named := f.t.pathOf(ino)
			f.t.dropNumber(ino)
			if named {
				go (&Server{t: f.t}).Replaced(p)
			}
			return nil, syscall.ESTALE
		}
		e.id, e.known = id, true
	}
	if own || e.last == nil {
		e.last = ctx
	}
	if fh := e.find(key, write); fh != nil { // opened meanwhile by another request
		fh.busy++
		f.mu.Unlock()
		h.file().Close()
		return fh, 0
	}
	fh := &freeHandle{h: h, ctx: ctx, key: key, write: write, busy: 1}
	f.addLocked(e, fh)
	victims := f.overLimitLocked()
	f.scheduleLocked()
	f.mu.Unlock()
	closeAll(f.t, victims)
	return fh, 0
}

// adopt keeps h, the file just created as the caller in ctx, as that
// caller's host file of its number: the creator's writes go to it, and
// its close, a quiet period after the last, reports the new file to the
// tree.
func (f *freeFiles) adopt(ctx context.Context, h *handle, write bool) {
	key := principalKey(ctx)
	var id fileID
	known := false
	if fd, ok := semfs.HostFd(h.file()); ok {
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) == nil {
			id, known = fileID{uint64(st.Dev), st.Ino}, true
		}
	}
	f.mu.Lock()
	if f.closed { // a create served after the unmount (a lazy detach)
		f.mu.Unlock()
		closeAll(f.t, []*freeHandle{{h: h}})
		return
	}
	e := f.files[h.ino]
	if e == nil {
		e = &freeFile{}
		f.files[h.ino] = e
	}
	e.id, e.known = id, known // the file the number stands for from now on
	e.last = ctx
	var old *freeHandle
	if o := e.find(key, write); o != nil && o.busy == 0 {
		f.detachLocked(o)
		old = o
	}
	f.addLocked(e, &freeHandle{h: h, ctx: ctx, key: key, write: write, used: time.Now()})
	victims := f.overLimitLocked()
	if old != nil {
		victims = append(victims, old)
	}
	f.scheduleLocked()
	f.mu.Unlock()
	closeAll(f.t, victims)
}

// find returns the open host file of number ino for key, marked busy, or
// nil; with own, ctx becomes the file's last caller.
func (f *freeFiles) find(ctx context.Context, ino uint64, key string, write, own bool) *freeHandle {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.files[ino]
	if e == nil {
		return nil
	}
	fh := e.find(key, write)
	if fh != nil {
		fh.busy++
		if own {
			e.last = ctx
		}
	}
	return fh
}

// orphanFile returns, marked busy, a host file of number ino, removed or
// renamed over, that can serve a read (any) or a write, or nil. A write
// of a caller's own (own) is served only by a writer of its principal key
// (one whose writer was open at the change); the kernel's writeback of
// mapped pages (not own: it names nobody, see caller) by that principal's
// writer if there is one, else by any kept writer, as the mapper's own
// writer may be another principal's than the file's last caller's.
func (f *freeFiles) orphanFile(ino uint64, write bool, key string, own bool) *freeHandle {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.files[ino]
	if e == nil || !e.orphaned {
		return nil
	}
	var pick *freeHandle
	for _, fh := range e.handles {
		if fh.retired || (write && !fh.write) || (write && own && fh.key != key) {
			continue
		}
		switch {
		case pick == nil,
			!write && pick.write && !fh.write,         // readers read
			write && pick.key != key && fh.key == key: // the last caller's writer first
			pick = fh
		}
	}
	if pick != nil {
		pick.busy++
	}
	return pick
}

// stat answers fstat(2) of number ino, removed or renamed over, from one
// of its host files.
func (f *freeFiles) stat(ino uint64) (fs.FileInfo, bool) {
	fh := f.orphanFile(ino, false, "", true)
	if fh == nil {
		return nil, false
	}
	defer f.release(fh)
	info, err := fh.h.stat()
	return info, err == nil
}

// keep is called before the file at p, number ino, is removed or renamed
// over through the mount; it returns what to call with the outcome of the
// change. It reports the writes made so far: the number's writers are
// closed now, as RELEASE closes a handle at close(2) in the default mode.
// A writer closed after the change would report the path, and the tree
// would index whatever stands there then (a file another caller created)
// as that writer's write: the new file's created_by would name the old
// file's writer. If the change is made and the kernel holds the inode (a
// program may have it open), host files of the number are kept until the
// kernel forgets it: the file opened for reading as the caller in ctx
// (before the change, while p names it), and for each writer closed a
// duplicate of its host descriptor, so that a program holding the file
// goes on writing it as on a local file system. Those later writes are
// not reported: no path names the file they reach any more. If the
// change fails, the file is still at p and nothing is kept: the next
// write opens a writer through the tree again, whose close reports it.
// The caller holds t.ns.
func (f *freeFiles) keep(ctx context.Context, ino uint64, p string) func(changed bool) {
	t := f.t
	kept := f.closeWriters(ino, p)
	t.mu.Lock()
	in := t.live[ino]
	t.mu.Unlock()
	if in != nil && !in.Forgotten() {
		if ro, err := t.fsys.Open(ctx, p); err == nil {
			kept = append(kept, &freeHandle{h: &handle{t: t, ino: ino, ro: ro}, ctx: ctx, key: principalKey(ctx)})
		}
	}
	return func(changed bool) {
		if !changed || in == nil || in.Forgotten() {
			for _, fh := range kept {
				fh.h.file().Close()
			}
			return
		}
		if len(kept) == 0 {
			return
		}
		f.mu.Lock()
		e := f.files[ino]
		if e == nil {
			e = &freeFile{}
			f.files[ino] = e
		}
		now := time.Now()
		for _, fh := range kept {
			fh.used = now
			f.addLocked(e, fh)
		}
		f.scheduleLocked()
		f.mu.Unlock()
	}
}

// closeWriters closes the host files of number ino, the file at p, open
// for writing, which reports the file written to the tree, and returns,
// for each that had a host descriptor, a writer on a duplicate of it
// that the tree does not see (its close reports nothing). One in use (a
// write in flight as the file is removed) stays open.
func (f *freeFiles) closeWriters(ino uint64, p string) []*freeHandle {
	var writers []*freeHandle
	f.mu.Lock()
	if e := f.files[ino]; e != nil {
		for _, fh := range slices.Clone(e.handles) {
			if fh.write && fh.busy == 0 {
				f.detachLocked(fh)
				writers = append(writers, fh)
			}
		}
	}
	f.mu.Unlock()
	var dups []*freeHandle
	for _, fh := range writers {
		fd, ok := semfs.HostFd(fh.h.file())
		if !ok {
			continue
		}
		dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			continue
		}
		h := &handle{t: f.t, ino: ino, rw: os.NewFile(uintptr(dup), p)}
		dups = append(dups, &freeHandle{h: h, ctx: fh.ctx, key: fh.key, write: true})
	}
	closeAll(f.t, writers)
	return dups
}

func (e *freeFile) find(key string, write bool) *freeHandle {
	for _, fh := range e.handles {
		if fh.key == key && fh.write == write && !fh.retired {
			return fh
		}
	}
	return nil
}

// openHost opens the file numbered ino in the tree as the caller in ctx,
// and returns its host identity when it has a host descriptor.
func (f *freeFiles) openHost(ctx context.Context, ino uint64, write bool) (h *handle, id fileID, known bool, errno syscall.Errno) {
	t := f.t
	t.ns.RLock()
	defer t.ns.RUnlock()
	p, ok := t.pathOf(ino)
	if !ok {
		return nil, fileID{}, false, syscall.ESTALE
	}
	h = &handle{t: t, ino: ino}
	if write {
		rw, err := semfs.OpenFile(ctx, t.fsys, p, syscall.O_WRONLY, 0)
		if err != nil {
			return nil, fileID{}, false, t.errno(err)
		}
		h.rw = rw
	} else {
		ro, err := t.fsys.Open(ctx, p)
		if err != nil {
			return nil, fileID{}, false, t.errno(err)
		}
		h.ro = ro
	}
	if fd, ok := semfs.HostFd(h.file()); ok {
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) == nil {
			id, known = fileID{uint64(st.Dev), st.Ino}, true
		}
	}
	return h, id, known, 0
}

// addLocked adds fh, a host file just opened, to e and the table. The
// caller holds f.mu.
func (f *freeFiles) addLocked(e *freeFile, fh *freeHandle) {
	e.handles = append(e.handles, fh)
	f.open++
	if !e.orphaned {
		fh.elem = f.lru.PushFront(fh)
	}
}

// release ends a request's use of fh.
func (f *freeFiles) release(fh *freeHandle) {
	f.mu.Lock()
	fh.busy--
	fh.used = time.Now()
	if fh.elem != nil {
		f.lru.MoveToFront(fh.elem)
	}
	done := fh.busy == 0 && (fh.retired || f.closed)
	if done && !fh.retired {
		f.detachLocked(fh)
	}
	f.mu.Unlock()
	if done {
		closeAll(f.t, []*freeHandle{fh})
	}
}

// detachLocked takes fh out of the table; the caller closes it. The
// caller holds f.mu.
func (f *freeFiles) detachLocked(fh *freeHandle) {
	fh.retired = true
	f.open--
	if fh.elem != nil {
		f.lru.Remove(fh.elem)
		fh.elem = nil
	}
	e := f.files[fh.h.ino]
	if e == nil {
		return
	}
	e.handles = slices.DeleteFunc(e.handles, func(x *freeHandle) bool { return x == fh })
}

// overLimitLocked detaches the least recently used idle host files beyond
// maxFree and returns them. The caller holds f.mu.
func (f *freeFiles) overLimitLocked() []*freeHandle {
	var victims []*freeHandle
	for el := f.lru.Back(); el != nil && f.lru.Len() > maxFree; {
		fh := el.Value.(*freeHandle)
		el = el.Prev()
		if fh.busy == 0 { // one in use stays: over the bound until released
			f.detachLocked(fh)
			victims = append(victims, fh)
		}
	}
	return victims
}

// scheduleLocked schedules a reap if host files are open and none is
// scheduled. The caller holds f.mu.
func (f *freeFiles) scheduleLocked() {
	if f.reaping || f.lru.Len() == 0 || f.closed {
		return
	}
	f.reaping = true
	time.AfterFunc(freeQuiet/2, f.reap)
}

// reap closes the host files unused for their idle time.
func (f *freeFiles) reap() {
	now := time.Now()
	var victims []*freeHandle
	f.mu.Lock()
	for el := f.lru.Back(); el != nil; {
		fh := el.Value.(*freeHandle)
		el = el.Prev()
		idle := freeIdle
		if fh.write {
			idle = freeQuiet
		}
		if fh.busy == 0 && now.Sub(fh.used) >= idle {
			f.detachLocked(fh)
			victims = append(victims, fh)
		}
	}
	f.reaping = false
	f.scheduleLocked()
	f.mu.Unlock()
	closeAll(f.t, victims)
}

// fsync syncs the host files of number ino open for writing and closes
// them, which reports the file written to the tree (those of a number
// removed or renamed over stay open: no path is left to report). With
// none open (the reap closed them a quiet period after the last write,
// and a close does not sync) it syncs the file through a host file
// opened for it: see syncFile.
func (f *freeFiles) fsync(ctx context.Context, ino uint64) syscall.Errno {
	var writers []*freeHandle
	orphaned := false
	f.mu.Lock()
	if e := f.files[ino]; e != nil {
		orphaned = e.orphaned
		for _, fh := range e.handles {
			if fh.write {
				fh.busy++ // synced below; closed by the release
				writers = append(writers, fh)
			}
		}
	}
	f.mu.Unlock()
	if len(writers) == 0 {
		return f.syncFile(ctx, ino)
	}
	var errno syscall.Errno
	for _, fh := range writers {
		if e := fh.h.Fsync(context.Background(), 0); e != 0 && errno == 0 {
			errno = e
		}
		f.mu.Lock()
		if !fh.retired && !orphaned { // a removed file's writer has nothing to report: kept for later writes
			f.detachLocked(fh)
		}
		f.mu.Unlock()
		f.release(fh)
	}
	return errno
}

// syncFile syncs the host file of number ino when none of its writers is
// open: the writes made through writers since closed are synced by a
// sync of any descriptor of the file (fsync(2) flushes the inode, also
// through one open for reading). It opens the file at the number's path
// for reading as the caller in ctx (so the tree checks that caller may
// read it) and syncs it; a removed or renamed-over number syncs one of
// the host files kept for it. A tree that does not write has nothing to
// sync.
func (f *freeFiles) syncFile(ctx context.Context, ino uint64) syscall.Errno {
	t := f.t
	t.ns.RLock()
	p, named := t.pathOf(ino)
	var rf semfs.RWFile
	var err error
	if named {
		rf, err = semfs.OpenFile(t.ctx(ctx), t.fsys, p, syscall.O_RDONLY, 0)
	}
	t.ns.RUnlock()
	if named {
		if errors.Is(err, semfs.ErrReadOnly) {
			return 0
		}
		if err != nil {
			return t.errno(err)
		}
		defer rf.Close()
		f.mu.Lock()
		var want fileID
		known := false
		if e := f.files[ino]; e != nil {
			want, known = e.id, e.known
		}
		f.mu.Unlock()
		if fd, ok := semfs.HostFd(rf); ok && known {
			var st syscall.Stat_t
			if syscall.Fstat(fd, &st) == nil && (fileID{uint64(st.Dev), st.Ino}) != want {
				return syscall.ESTALE // another file stands at the path (see acquire)
			}
		}
		return t.errno(rf.Sync())
	}
	fh := f.orphanFile(ino, false, "", true)
	if fh == nil {
		return 0
	}
	defer f.release(fh)
	if fh.h.rw != nil {
		return t.errno(fh.h.rw.Sync())
	}
	if fd, ok := semfs.HostFd(fh.h.file()); ok {
		return t.errno(syscall.Fsync(fd))
	}
	return 0
}

// orphan notes that number ino was dropped (its file removed or renamed
// over, or replaced behind the mount): its host files stay open until
// the kernel forgets the number. The caller may hold t.mu.
func (f *freeFiles) orphan(ino uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.files[ino]
	if e == nil {
		return
	}
	if len(e.handles) == 0 {
		delete(f.files, ino)
		return
	}
	e.orphaned = true
	for _, fh := range e.handles { // kept until the kernel forgets the number
		if fh.elem != nil {
			f.lru.Remove(fh.elem)
			fh.elem = nil
		}
	}
}

// forgotten closes the host files of number ino once the kernel forgot
// it: no descriptor holds it any more. The caller may hold t.mu.
func (f *freeFiles) forgotten(ino uint64) {
	f.mu.Lock()
	e := f.files[ino]
	if e == nil {
		f.mu.Unlock()
		return
	}
	delete(f.files, ino)
	var victims []*freeHandle
	for _, fh := range e.handles {
		fh.retired = true
		f.open--
		if fh.elem != nil {
			f.lru.Remove(fh.elem)
			fh.elem = nil
		}
		if fh.busy == 0 {
			victims = append(victims, fh)
		}
	}
	e.handles = nil
	f.mu.Unlock()
	go closeAll(f.t, victims) // not under the caller's t.mu: a close reports to the tree
}

// close closes every host file at unmount (one in use is closed when its
// request ends), and any opened later as soon as it is unused.
func (f *freeFiles) close() {
	var victims []*freeHandle
	f.mu.Lock()
	f.closed = true
	for _, e := range f.files {
		for _, fh := range slices.Clone(e.handles) {
			if fh.busy == 0 {
				f.detachLocked(fh)
				victims = append(victims, fh)
			}
		}
	}
	f.mu.Unlock()
	closeAll(f.t, victims)
}

// closeAll closes host files taken out of the table. A writer's close
// reports the file written to the tree; its error reaches no program (the
// writes were answered already) and is logged.
func closeAll(t *tree, hs []*freeHandle) {
	for _, fh := range hs {
		if err := fh.h.file().Close(); err != nil {
			t.opts.logf("fusefs: closing a file written without a handle: %v", err)
		}
	}
}
