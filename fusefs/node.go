package fusefs

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/semfs/semfs"
)

// ChtimesFS is implemented by trees that can set a file's modification
// time. The FUSE front end uses it for utimes(2) and touch; without it, time
// changes are accepted and ignored.
type ChtimesFS interface {
	semfs.FS
	Chtimes(ctx context.Context, name string, atime, mtime time.Time) error
}

// tree is the state shared by every node of one mount: the served FS and
// the table numbering its paths.
//
// A node's path is looked up in the table by its inode number, never
// computed from go-fuse's tree of names: go-fuse moves a name only after
// Rename (or Unlink) has returned, and in that gap a node still named by
// its old path would read, stat or open whatever file the FS now holds
// there — another file's size for an open file (a torn read), or ENOENT
// for an open that the kernel had already resolved.
type tree struct {
	fsys semfs.FS
	opts Options

	// ns orders name changes against everything that resolves a path:
	// an operation resolves its node's path and calls the FS under the
	// read lock; Rename and removals change the FS and the table under
	// the write lock. So a node's path always names the file the node
	// stands for, or nothing once that file was renamed over or removed.
	ns sync.RWMutex

	mu    sync.Mutex // guards the maps (lookups under ns.RLock allocate)
	inos  map[string]inoEntry
	paths map[uint64]string
	next  uint64
	// sweepAt is the table size at which numbers no kernel inode holds
	// (handed out by READDIR only) are dropped.
	sweepAt int
	// live holds the go-fuse inode of every number the kernel knows,
	// until it forgets it: what the change notifications address.
	live map[uint64]*gofs.Inode
	// forgotten holds the inodes the kernel forgot whose numbers are
	// yet to be dropped, oldest first; reaping says a reap is scheduled
	// (see forgot).
	forgotten []forgottenInode
	reaping   bool
	// modes counts the open handles of each number by I/O mode: the
	// kernel refuses to open one inode in passthrough and cached mode at
	// once.
	modes map[uint64]*ioCount
	// releaseWait is how awaitRelease sleeps between its looks at a
	// count, with t.mu unlocked: time.Sleep, unless a test sets it (under
	// t.mu, on a mounted tree) to act at a known point of the wait.
	releaseWait func(time.Duration)
	// pages holds, for each number read through the page cache while
	// passthrough is on, the stamp of the host file its pages came from
	// (see cachedOpen).
	pages map[uint64]pageStamp

	passthrough atomic.Bool // the kernel accepts backing files (see canPassthrough)

	// served counts the requests that act on the tree (each goes through
	// ctx): Server.Served.
	served atomic.Uint64

	// entryTTL and attrTTL are how long the kernel caches a shared name
	// and its attributes (Options.EntryTimeout, AttrTimeout).
	entryTTL, attrTTL time.Duration

	mapped mapWatch // files written by passthrough, for writes through mappings (mapped.go)

	free freeFiles // host files read and written without a handle (Options.OpenFree, free.go)

	// noOpendir: directories are opened without a request (dirFree in
	// mount.go), which lists through a handle per READDIR; lastList
	// keeps the last listing read for the READDIRs that go on from it,
	// while listGen, counting the changes of names through the mount
	// and reported ones, is unchanged.
	noOpendir bool
	listGen   atomic.Uint64
	lastList  struct {
		sync.Mutex
		ino, gen uint64
		at       time.Time
		list     []fuse.DirEntry
	}
}

type ioCount struct {
	passthrough, cached int
	writers             int // passthrough handles open for writing
	// backing identifies the host file behind the passthrough handles
	// while any is open: the kernel serves every later passthrough open
	// of the inode from the first handle's backing file.
	backing fileID
	// stamp is the host file of the first handle read through the page
	// cache of those open; mixed, that one of them has another (the file
	// was replaced behind the mount while a reader held the old one):
	// see cachedOpen.
	stamp pageStamp
	mixed bool
}

// fileID is a host file's identity.
type fileID struct{ dev, ino uint64 }

// minSweep is the smallest table size at which unheld numbers are swept.
const minSweep = 1 << 16

type inoEntry struct {
	ino  uint64
	mode uint32 // S_IFDIR or S_IFREG
}

func newTree(fsys semfs.FS, opts Options) *tree {
	t := &tree{
		fsys:        fsys,
		opts:        opts,
		inos:        map[string]inoEntry{"/": {1, syscall.S_IFDIR}},
		paths:       map[uint64]string{1: "/"},
		next:        2,
		sweepAt:     minSweep,
		live:        map[uint64]*gofs.Inode{},
		modes:       map[uint64]*ioCount{},
		pages:       map[uint64]pageStamp{},
		releaseWait: time.Sleep,
	}
	t.mapped.t = t
	t.free.init(t)
	t.noOpendir = opts.OpenFree && opts.Shared == nil
	t.entryTTL, t.attrTTL = *timeout(opts.EntryTimeout), *timeout(opts.AttrTimeout)
	return t
}

// shared reports whether what the caller in ctx was answered about p (its
// name and attributes, or its listing) holds for every caller, so that
// the kernel may cache it for all (Options.Shared).
func (t *tree) shared(ctx context.Context, p string, listing bool) bool {
	return t.opts.Shared == nil || t.opts.Shared(ctx, p, listing)
}

// entryTimeout sets how long the kernel may keep the name and attributes
// in out, which answered the caller in ctx for p.
func (t *tree) entryTimeout(ctx context.Context, p string, out *fuse.EntryOut) {
	if t.shared(ctx, p, false) {
		out.SetEntryTimeout(t.entryTTL)
		out.SetAttrTimeout(t.attrTTL)
		return
	}
	out.SetEntryTimeout(0)
	out.SetAttrTimeout(0)
}

// ino returns the stable inode number of path p holding a file of the given
// type, allocating one on first sight (or when the type changed).
func (t *tree) ino(p string, mode uint32) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.inos[p]
	if ok && e.mode == mode {
		return e.ino
	}
	if ok {
		delete(t.paths, e.ino)
	}
	if len(t.inos) >= t.sweepAt {
		t.sweep()
	}
	e = inoEntry{t.next, mode}
	t.next++
	t.inos[p] = e
	t.paths[e.ino] = p
	return e.ino
}

// sweep drops the numbers that no kernel inode holds: those READDIR handed
// out for entries never looked up, and those of forgotten inodes. A path
// swept and looked up later gets a new number. The caller holds t.mu.
func (t *tree) sweep() {
	for p, e := range t.inos {
		if _, held := t.live[e.ino]; !held {
			delete(t.inos, p)
			delete(t.paths, e.ino)
		}
	}
	t.sweepAt = max(minSweep, 2*len(t.inos))
}

// pin records in as the kernel's inode for number ino at path p, after
// go-fuse returned it for a lookup or creation. If the number was dropped
// since it was allocated (its previous inode was forgotten in between, or
// a sweep ran), it is put back: the caller holds t.ns, so p still names
// the file it named then.
func (t *tree) pin(p string, ino uint64, mode uint32, in *gofs.Inode) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.live[ino] = in
	if _, ok := t.paths[ino]; ok {
		return
	}
	if _, taken := t.inos[p]; taken {
		return // renumbered meanwhile; the kernel's next lookup finds it
	}
	t.inos[p] = inoEntry{ino, mode}
	t.paths[ino] = p
}

// forgot drops number ino when the kernel forgot in, the inode holding
// it — a little later (reapDelay), and only if in is forgotten still: a
// lookup of the path may be handing in back to go-fuse at this very
// moment (newChild reuses the inode the table holds), and go-fuse then
// registers it again after the forget, so that the kernel holds an inode
// whose number, dropped at once, would name no path (ENOENT for every
// name looked up in it).
func (t *tree) forgot(ino uint64, in *gofs.Inode) {
	if ino == 1 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.live[ino] != in {
		return // a newer inode holds the number
	}
	t.forgotten = append(t.forgotten, forgottenInode{ino, in, time.Now()})
	if !t.reaping {
		t.reaping = true
		time.AfterFunc(reapDelay, t.reap)
	}
}

// reapDelay is how long a forgotten inode keeps its number, in case a
// lookup racing the forget handed it back to the kernel.
const reapDelay = time.Second

// forgottenInode is an inode the kernel forgot, with the number it held
// and when.
type forgottenInode struct {
	ino uint64
	in  *gofs.Inode
	at  time.Time
}

// reap drops the numbers of inodes forgotten at least reapDelay ago and
// forgotten still, and runs again for those forgotten since.
func (t *tree) reap() {
	t.mu.Lock()
	defer t.mu.Unlock()
	keep := t.forgotten[:0]
	for _, f := range t.forgotten {
		switch {
		case time.Since(f.at) < reapDelay:
			keep = append(keep, f)
		case t.live[f.ino] != f.in || !f.in.Forgotten():
			// a newer inode holds the number, or the kernel looked
			// this one up again
		default:
			delete(t.live, f.ino)
			delete(t.pages, f.ino)
			t.free.forgotten(f.ino)
			if p, ok := t.paths[f.ino]; ok {
				delete(t.paths, f.ino)
				if t.inos[p].ino == f.ino {
					delete(t.inos, p)
				}
			}
		}
	}
	clear(t.forgotten[len(keep):])
	t.forgotten = keep
	t.reaping = len(keep) > 0
	if t.reaping {
		time.AfterFunc(reapDelay-time.Since(keep[0].at), t.reap)
	}
}

// opened decides how the kernel serves h, a new handle of number ino:
// a small file opened read-only with no passthrough handle open through
// the page cache (cachedOpen); else by passthrough when the file has a
// host descriptor and no cached handle of the same file is open, else
// through the page cache (kept across opens
// with Options.KeepCache, unless passthrough is on). The kernel requires every open of an inode open
// by passthrough to be by passthrough, to the same backing file; a handle
// without a host descriptor cannot be, so it is refused with ETXTBSY
// (h is closed) until the passthrough handles are closed, and a handle
// on another host file than theirs (the file was replaced behind the
// mount) is refused with ESTALE and its number dropped, so that the
// kernel looks the name up again and opens the new file. Trees whose
// files have a descriptor on some opens and not on others (the access
// layer's quota-checked writers) should be mounted with NoPassthrough.
//
// The caller holds no lock: opened may wait for a release (awaitRelease),
// and a rename queued on t.ns meanwhile would hold up every request.
func (t *tree) opened(ino uint64, h *handle) (gofs.FileHandle, uint32, syscall.Errno) {
	h.ino = ino
	if t.opts.NoPassthrough {
		if t.opts.KeepCache {
			return h, fuse.FOPEN_KEEP_CACHE, 0
		}
		return h, 0, 0
	}
	t.mu.Lock()
	if h.lazy != nil {
		if c := t.modes[ino]; (c == nil || c.passthrough == 0) && !t.mapped.watching(ino) {
			if c == nil {
				c = &ioCount{}
				t.modes[ino] = c
			}
			fl := t.cachedOpen(ino, c, h, h.stamp)
			t.mu.Unlock()
			return h, fl, 0
		}
		// A passthrough open came in between (the kernel serves this
		// handle from that open's backing file), or a writer released
		// the file, which may be mapped for writing now (see
		// cachedOpen): this handle needs a host file now.
		t.mu.Unlock()
		if err := h.load(); err != nil {
			errno := t.errno(err)
			if errno == syscall.ESTALE {
				t.dropNumber(ino) // another file stands at the name
			}
			return nil, 0, errno
		}
		t.mu.Lock()
	}
	fh, fl, errno := t.openedLocked(ino, h)
	t.mu.Unlock()
	if errno == syscall.ESTALE {
		t.dropNumber(ino)
	}
	return fh, fl, errno
}

// openedLocked is opened with t.mu held. On ESTALE the caller drops the
// number.
func (t *tree) openedLocked(ino uint64, h *handle) (gofs.FileHandle, uint32, syscall.Errno) {
	c := t.modes[ino]
	if c == nil {
		c = &ioCount{}
		t.modes[ino] = c
	}
	if t.passthrough.Load() {
		if fd, ok := semfs.HostFd(h.file()); ok {
			var st syscall.Stat_t
			known := syscall.Fstat(fd, &st) == nil
			id := fileID{uint64(st.Dev), st.Ino}
			if known && c.passthrough == 0 && h.rw == nil && t.opts.KeepCache && st.Size <= cachedReadMax && !t.mapped.watching(ino) {
				return h, t.cachedOpen(ino, c, h, pageStampOf(&st)), 0
			}
			if c.cached > 0 {
				goto cached // see the doc comment of opened
			}
			if c.passthrough > 0 && (!known || id != c.backing) {
				// The file was replaced behind the mount (a temporary
				// file renamed over it, maybe not reported yet): the
				// kernel would serve this handle from the old file's
				// backing, and its writes would go to an unlinked file.
				// The number is dropped (by opened), as a reported
				// replacement drops it, and ESTALE makes the kernel
				// look the name up again, to a new inode backed by the
				// new file.
				h.file().Close()
				return nil, 0, syscall.ESTALE
			}
			if c.passthrough == 0 {
				c.backing = id
			}
			c.passthrough++
			h.mode, h.fd = ioPassthrough, fd
			regFd := fd
			if h.rw != nil {
				delete(t.pages, ino) // written around the page cache
				if c.writers == 0 {
					t.mapped.drop(ino) // this handle's close re-reads the file
				}
				c.writers++
				regFd = h.readOnlyFd()
			}
			return &ptHandle{handle: h, fd: regFd}, 0, 0
		}
	}
cached:
	if c.passthrough > 0 {
		c = t.awaitRelease(ino)
	}
	if c.passthrough > 0 {
		h.file().Close()
		t.opts.logf("fusefs: an open without a host descriptor refused while the file is open by passthrough (mount such trees with NoPassthrough)")
		return nil, 0, syscall.ETXTBSY
	}
	c.cached++
	h.mode = ioCached
	// Where passthrough is on, a file without a descriptor drops its
	// pages on open: while the file was open by passthrough, its writes
	// went to the backing file and left the pages cached before stale.
	if t.opts.KeepCache && !t.passthrough.Load() {
		return h, fuse.FOPEN_KEEP_CACHE, 0
	}
	return h, 0, 0
}

// cachedReadMax is the size up to which a file opened read-only while no
// handle of it is open by passthrough is read through the page cache
// instead (see cachedOpen).
const cachedReadMax = 1 << 20

// pageStamp is the host file and its status as they were when the kernel
// last loaded a number's pages through the daemon.
type pageStamp struct {
	id fileID
	fileStamp
}

// cachedOpen serves h, a read-only handle of a small file (number ino,
// count c) that no passthrough handle has open, through the kernel's
// page cache, with the host file's stamp st as it is now, and returns its
// open flags. A passthrough
// read costs a round trip per open and stat that a cached one does not:
// the kernel registers and drops a backing file for every open of an
// inode, and marks the inode's access time stale after every read, so
// the program's next fstat(2) is a GETATTR; grep -r over a tree paid
// both for every file. The pages are kept across opens only while the
// stamp is unchanged (keepPages): writes by passthrough, which go around
// them, change it (and a writable passthrough open forgets it), and so
// does a file replaced behind the mount. Bigger files stay passthrough,
// whose reads are the host's own, and so do files that may be mapped
// for writing (watched by mapped.go: a store through a mapping changes
// the host file's pages, and its times only at the first store to a
// page).
//
// A reader that holds the file a newer one replaced would load the old
// bytes into pages the new stamp then keeps: while handles of different
// host files are open through the page cache (mixed), the newer ones
// read around it (FOPEN_DIRECT_IO), no stamp is recorded, and the next
// open after the last of them drops the pages. The caller holds t.mu.
func (t *tree) cachedOpen(ino uint64, c *ioCount, h *handle, st pageStamp) uint32 {
	if c.cached == 0 {
		c.stamp, c.mixed = st, false
	} else if st != c.stamp {
		c.mixed = true
	}
	c.cached++
	h.mode = ioCached
	h.stamp = st
	if c.mixed {
		delete(t.pages, ino)
		return fuse.FOPEN_DIRECT_IO
	}
	return t.keepPages(ino, h)
}

// keepPages reports the open flags of h, a handle cachedOpen serves: the
// kernel keeps the number's pages when they were loaded from the file
// as it is now, and drops them otherwise. The caller holds t.mu.
func (t *tree) keepPages(ino uint64, h *handle) uint32 {
	old, ok := t.pages[ino]
	t.pages[ino] = h.stamp
	if ok && old == h.stamp {
		return fuse.FOPEN_KEEP_CACHE
	}
	return 0
}

// openKept returns a handle of number ino, the file at p, that opens no
// host file, when the kernel holds pages of the number that an earlier
// read-only open loaded (cachedOpen) and the host file is still the one,
// with the size, mtime and ctime, they were loaded from: then the kernel
// keeps them (keepPages) and reads none, and the host file is opened only
// if a read misses them (handle.load; pages may be evicted). A warm
// grep -r so costs the tree a stat per file instead of an open, and its
// RELEASE closes nothing. The stat goes through the tree like the open,
// so the caller's access is checked as the open would check it; a change
// of the host file's permissions changes its ctime. It returns nil, and
// the caller opens the file, when there are no such pages, the tree's
// FileInfo carries no stat(2) result, or the stat fails (the open then
// reports the error).
func (t *tree) openKept(ctx context.Context, ino uint64, p string) *handle {
	if !t.opts.KeepCache || !t.passthrough.Load() {
		return nil
	}
	t.mu.Lock()
	old, ok := t.pages[ino]
	if c := t.modes[ino]; c != nil && (c.passthrough > 0 || c.mixed) {
		ok = false // opens join the passthrough handles (openedLocked), or read around the pages
	}
	if ok && t.mapped.watching(ino) {
		ok = false // may be mapped for writing: passthrough (cachedOpen)
	}
	t.mu.Unlock()
	if !ok {
		return nil
	}
	info, err := t.fsys.Stat(ctx, p)
	if err != nil || !info.Mode().IsRegular() {
		return nil
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || pageStampOf(st) != old {
		return nil
	}
	return &handle{t: t, lazy: &lazyOpen{ctx: ctx, info: info}, stamp: old}
}

// pageStampOf is the page stamp of a host file's stat(2) result.
func pageStampOf(st *syscall.Stat_t) pageStamp {
	return pageStamp{fileID{uint64(st.Dev), st.Ino}, fileStamp{st.Size, st.Mtim, st.Ctim}}
}

// awaitRelease waits a little, with t.mu unlocked meanwhile, for the
// passthrough handles of number ino to be released, and returns the
// number's count as it is then. The kernel leaves passthrough mode when
// close(2) returns but sends RELEASE after, so an open right after a close
// would otherwise be refused for a handle that is gone. The count is
// looked up again after every sleep: the one the caller held may have been
// deleted with the last handle meanwhile, and a new passthrough open have
// made another. The caller holds t.mu.
func (t *tree) awaitRelease(ino uint64) *ioCount {
	var c *ioCount
	for range 40 {
		wait := t.releaseWait
		t.mu.Unlock()
		wait(5 * time.Millisecond)
		t.mu.Lock()
		c = t.modes[ino]
		if c == nil {
			c = &ioCount{}
			t.modes[ino] = c
		}
		if c.passthrough == 0 {
			break
		}
	}
	return c
}

// dropNumber drops number ino, if it still numbers a file, under the
// namespace lock like any other change of the table's names.
func (t *tree) dropNumber(ino uint64) {
	t.ns.Lock()
	defer t.ns.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.paths[ino]; ok {
		t.dropFile(p)
	}
}

// closed undoes opened when h is released. It reports whether h was the
// last passthrough handle of its file open for writing.
func (t *tree) closed(h *handle) (lastWriter bool) {
	if t.opts.NoPassthrough {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.modes[h.ino]
	if c == nil {
		return false
	}
	switch h.mode {
	case ioPassthrough:
		c.passthrough--
		if h.rw != nil {
			c.writers--
			lastWriter = c.writers == 0
		}
	case ioCached:
		c.cached--
	}
	if c.passthrough == 0 && c.cached == 0 {
		delete(t.modes, h.ino)
	}
	return lastWriter
}

// pathOf returns the path numbered ino, or false once that file was
// removed or replaced.
func (t *tree) pathOf(ino uint64) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.paths[ino]
	return p, ok
}

// drop removes the number of p and, when p is a directory, of everything
// below it, and ends the mapping watch of the files it numbered (their
// O_PATH descriptors would keep removed files' blocks allocated). The
// caller holds t.mu.
func (t *tree) drop(p string, dir bool) {
	if e, ok := t.inos[p]; ok {
		delete(t.inos, p)
		delete(t.paths, e.ino)
		delete(t.pages, e.ino)
		t.mapped.drop(e.ino)
		t.free.orphan(e.ino)
	}
	if !dir {
		return
	}
	for k, e := range t.inos {
		if semfs.HasPrefix(k, p) {
			delete(t.inos, k)
			delete(t.paths, e.ino)
			delete(t.pages, e.ino)
			t.mapped.drop(e.ino)
			t.free.orphan(e.ino)
		}
	}
}

// mayBeDir reports whether p is numbered as a directory or not numbered
// at all (so that a move or removal must look below it).
func (t *tree) mayBeDir(p string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.inos[p]
	return !ok || e.mode == syscall.S_IFDIR
}

// keepOpenFree reports the writes made without a handle to the file at
// p, in the open-free mode, before it is removed or renamed over through
// the mount, and returns what to call with the outcome: if the change was
// made, the file is kept open, as a program may hold it open without the
// mount knowing (see freeFiles.keep). The caller holds t.ns.
func (t *tree) keepOpenFree(ctx context.Context, p string) func(changed bool) {
	if !t.opts.OpenFree {
		return func(bool) {}
	}
	t.mu.Lock()
	e, ok := t.inos[p]
	t.mu.Unlock()
	if ok && e.mode == syscall.S_IFREG {
		return t.free.keep(ctx, e.ino, p)
	}
	return func(bool) {}
}

// mountKey marks the context of a request that came through the mount.
type mountKey struct{}

// fromMount is the context every request's is made from (tree.ctx).
var fromMount = context.WithValue(context.Background(), mountKey{}, true)

// FromMount reports whether ctx is the context of a request made through a
// mount: a change it made needs no notification to the kernel, which made
// it.
func FromMount(ctx context.Context) bool {
	v, _ := ctx.Value(mountKey{}).(bool)
	return v
}

// forget drops the numbers of p and, for a directory, everything below it.
func (t *tree) forget(p string, dir bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.drop(p, dir)
}

// move renames the numbers of oldp and, for a directory, everything below
// it to newp, which replaces whatever newp held.
func (t *tree) move(oldp, newp string, dir bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.moveLocked(oldp, newp, dir)
}

// moveLocked is move with t.mu held.
func (t *tree) moveLocked(oldp, newp string, dir bool) {
	t.drop(newp, dir)
	set := func(k string, e inoEntry) {
		delete(t.inos, k)
		k = newp + k[len(oldp):]
		t.inos[k] = e
		t.paths[e.ino] = k
	}
	if e, ok := t.inos[oldp]; ok {
		set(oldp, e)
	}
	if !dir {
		return
	}
	var below []string
	for k := range t.inos {
		if k != oldp && semfs.HasPrefix(k, oldp) {
			below = append(below, k)
		}
	}
	for _, k := range below {
		set(k, t.inos[k])
	}
}

// ctx returns the request context carrying the caller's principal, without
// the kernel's cancellation: the kernel interrupts a request whenever the
// calling thread takes any signal (a Go program's threads take SIGURG for
// preemption all the time), and a create, rename or truncate cut short
// answers EINTR, which rename(2), close(2) and most callers do not retry.
// libfuse ignores interrupts by default for the same reason.
//
// It is derived from one context made once (fromMount) rather than from
// go-fuse's: nothing below the mount reads the request's, and every
// request saves two allocations.
func (t *tree) ctx(ctx context.Context) context.Context {
	t.served.Add(1)
	var pid, uid, gid uint32
	if c, ok := fuse.FromContext(ctx); ok {
		pid, uid, gid = c.Pid, c.Uid, c.Gid
	}
	var p semfs.Principal
	if t.opts.Principal != nil {
		p = t.opts.Principal(pid, uid, gid)
	} else {
		p = semfs.Principal{ID: fmt.Sprintf("uid:%d", uid)}
	}
	return semfs.WithPrincipal(fromMount, p)
}

func (t *tree) errno(err error) syscall.Errno { return Errno(err, t.opts.Logf) }

func fileType(info fs.FileInfo) uint32 {
	if info.IsDir() {
		return syscall.S_IFDIR
	}
	return syscall.S_IFREG
}

func (t *tree) fillAttr(a *fuse.Attr, info fs.FileInfo, ino uint64) {
	a.Ino = ino
	perm := uint32(info.Mode().Perm())
	if info.IsDir() {
		if perm == 0 {
			perm = 0o755
		}
		a.Mode = syscall.S_IFDIR | perm
		a.Nlink = 2
		a.Size = 4096
	} else {
		if perm == 0 {
			perm = 0o644
		}
		a.Mode = syscall.S_IFREG | perm
		a.Nlink = 1
		a.Size = uint64(info.Size())
	}
	a.Blocks = (a.Size + 511) / 512
	a.Blksize = 4096
	mt := info.ModTime()
	a.SetTimes(&mt, &mt, &mt)
	a.Owner = fuse.Owner{Uid: t.opts.UID, Gid: t.opts.GID}
}

// node is one inode of the mount. It holds no data, only its place in the
// kernel's tree, from which its path is computed on every request.
type node struct {
	gofs.Inode
	t *tree
}

var (
	_ gofs.NodeLookuper       = (*node)(nil)
	_ gofs.NodeGetattrer      = (*node)(nil)
	_ gofs.NodeSetattrer      = (*node)(nil)
	_ gofs.NodeOpendirHandler = (*node)(nil)
	_ gofs.NodeOpener         = (*node)(nil)
	_ gofs.NodeCreater        = (*node)(nil)
	_ gofs.NodeMkdirer        = (*node)(nil)
	_ gofs.NodeUnlinker       = (*node)(nil)
	_ gofs.NodeRmdirer        = (*node)(nil)
	_ gofs.NodeRenamer        = (*node)(nil)
	_ gofs.NodeStatfser       = (*node)(nil)
	_ gofs.NodeAccesser       = (*node)(nil)
	_ gofs.NodeFsyncer        = (*node)(nil)
	_ gofs.NodeOnForgetter    = (*node)(nil)
	// Reads, writes, fallocate and flush arrive without a handle in the
	// open-free mode (free.go); with one, the handle serves them.
	_ gofs.NodeReader    = (*node)(nil)
	_ gofs.NodeWriter    = (*node)(nil)
	_ gofs.NodeAllocater = (*node)(nil)
	_ gofs.NodeFlusher   = (*node)(nil)
)

// OnForget drops the node's number once the kernel forgot it, so that the
// table holds the paths the kernel knows rather than every path ever seen.
func (n *node) OnForget() {
	n.t.forgot(n.StableAttr().Ino, n.EmbeddedInode())
}

// path returns the node's tree path, or false when the file the node stands
// for was removed or renamed over (it is reachable only through open
// handles). The caller holds t.ns, so that the answer stays true while it
// uses the path.
func (n *node) path() (string, bool) {
	return n.t.pathOf(n.StableAttr().Ino)
}

// child returns the validated path of name inside directory n. The caller
// holds t.ns.
func (n *node) child(op, name string) (string, syscall.Errno) {
	dir, ok := n.path()
	if !ok {
		return "", syscall.ENOENT
	}
	p, err := semfs.Clean(op, semfs.Join(dir, name))
	if err != nil {
		return "", n.t.errno(err)
	}
	return p, 0
}

func (n *node) newChild(ctx context.Context, p string, info fs.FileInfo, out *fuse.EntryOut) *gofs.Inode {
	mode := fileType(info)
	ino := n.t.ino(p, mode)
	n.t.fillAttr(&out.Attr, info, ino)
	n.t.entryTimeout(ctx, p, out)
	// go-fuse keeps the inode it already holds for a number and drops a
	// new one made for it, so a second lookup of a name must return the
	// inode the kernel has: a fresh one pinned here would be one the
	// kernel never got, and every notification addressed to it would
	// find no such node. One go-fuse has forgotten meanwhile (its number
	// is yet to be reaped) is not reused: go-fuse no longer holds it.
	n.t.mu.Lock()
	in := n.t.live[ino]
	n.t.mu.Unlock()
	if in == nil || in.StableAttr().Mode != mode || in.Forgotten() {
		in = n.NewInode(ctx, &node{t: n.t}, gofs.StableAttr{Mode: mode, Ino: ino})
	}
	n.t.pin(p, ino, mode, in)
	return in
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	n.t.ns.RLock()
	defer n.t.ns.RUnlock()
	p, errno := n.child("lookup", name)
	if errno != 0 {
		return nil, errno
	}
	ctx = n.t.ctx(ctx)
	info, err := n.t.fsys.Stat(ctx, p)
	if err != nil {
		return nil, n.t.errno(err)
	}
	return n.newChild(ctx, p, info, out), 0
}

func (n *node) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	n.t.ns.RLock()
	defer n.t.ns.RUnlock()
	return n.getattr(n.t.ctx(ctx), f, out)
}

// getattr answers from the node's path while it has one, else from the open
// handle f. The caller holds t.ns.
func (n *node) getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	p, ok := n.path()
	if !ok {
		// Removed or renamed over but open: answer from the handle, with
		// no links left. Without a handle the kernel's name for the node
		// is stale; ESTALE makes it look the name up again.
		var info fs.FileInfo
		if h := asHandle(f); h != nil {
			var err error
			if info, err = h.stat(); err != nil {
				return n.t.errno(err)
			}
		} else if kept, ok := n.t.free.stat(n.StableAttr().Ino); ok {
			info = kept // opened without a handle (free.go)
		} else {
			return syscall.ESTALE
		}
		n.t.fillAttr(&out.Attr, info, n.StableAttr().Ino)
		out.Nlink = 0
		out.SetTimeout(0)
		return 0
	}
	info, err := n.t.fsys.Stat(ctx, p)
	if err != nil {
		return n.t.errno(err)
	}
	n.t.fillAttr(&out.Attr, info, n.StableAttr().Ino)
	if p == "/" || n.t.shared(ctx, p, false) {
		out.SetTimeout(n.t.attrTTL)
	} else {
		out.SetTimeout(0)
	}
	return 0
}

func (n *node) Setattr(ctx context.Context, f gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	ctx = n.t.ctx(ctx)
	if size, set := in.GetSize(); set && f == nil && n.t.opts.OpenFree && n.Mode()&syscall.S_IFMT == syscall.S_IFREG {
		// Truncation without a handle (truncate(2), or open(2) with
		// O_TRUNC, which sends no OPEN in this mode) goes through the
		// caller's writer, reported to the tree with the writes.
		errno := n.t.free.writer(ctx, n.StableAttr().Ino, func(h *handle) syscall.Errno {
			return n.t.errno(h.rw.Truncate(int64(size)))
		})
		if errno != 0 {
			return errno
		}
		in.Valid &^= fuse.FATTR_SIZE
	}
	n.t.ns.RLock()
	defer n.t.ns.RUnlock()
	p, ok := n.path()
	if size, set := in.GetSize(); set {
		if h := asHandle(f); h != nil && h.rw != nil {
			if err := h.rw.Truncate(int64(size)); err != nil {
				return n.t.errno(err)
			}
		} else {
			if !ok {
				return syscall.ESTALE
			}
			rw, err := semfs.OpenFile(ctx, n.t.fsys, p, os.O_WRONLY, 0)
			if err != nil {
				return n.t.errno(err)
			}
			err = rw.Truncate(int64(size))
			if cerr := rw.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return n.t.errno(err)
			}
		}
	}
	if mtime, set := in.GetMTime(); set && ok {
		if c, can := n.t.fsys.(ChtimesFS); can {
			atime, aset := in.GetATime()
			if !aset {
				atime = mtime
			}
			if err := c.Chtimes(ctx, p, atime, mtime); err != nil {
				return n.t.errno(err)
			}
		}
	}
	return n.getattr(ctx, f, out)
}

func (n *node) Access(ctx context.Context, mask uint32) syscall.Errno {
	// Permission is the access layer's business; it answers on the
	// operation itself.
	return 0
}

// OpendirHandle opens the directory for listing. With Options.KeepCache
// the kernel keeps the listing (FOPEN_CACHE_DIR) until a change through
// the mount or a reported change behind it invalidates it, so a second
// walk of a tree asks only for OPENDIR and RELEASEDIR — unless the
// listing may differ between callers (Options.Shared).
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	var fl uint32
	if n.t.opts.KeepCache && n.listingShared(ctx) {
		fl = fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE
	}
	return &dirHandle{n: n}, fl, 0
}

// listingShared reports whether the directory's listing is the same for
// every caller.
func (n *node) listingShared(ctx context.Context) bool {
	if n.t.opts.Shared == nil {
		return true
	}
	n.t.ns.RLock()
	defer n.t.ns.RUnlock()
	p, ok := n.path()
	return ok && n.t.shared(ctx, p, true)
}

// list reads the directory's entries, with their numbers. The entries of
// a directory that was removed or renamed over are none (ENOENT).
func (n *node) list(ctx context.Context) ([]fuse.DirEntry, syscall.Errno) {
	n.t.ns.RLock()
	defer n.t.ns.RUnlock()
	p, ok := n.path()
	if !ok {
		return nil, syscall.ENOENT
	}
	ino, gen := n.StableAttr().Ino, n.t.listGen.Load()
	if n.t.noOpendir {
		if list, ok := n.t.keptList(ino, gen); ok {
			return list, 0
		}
	}
	entries, err := n.t.fsys.ReadDir(n.t.ctx(ctx), p)
	if err != nil {
		return nil, n.t.errno(err)
	}
	list := make([]fuse.DirEntry, 0, len(entries))
	for _, e := range entries {
		mode := uint32(syscall.S_IFREG)
		if e.IsDir() {
			mode = syscall.S_IFDIR
		}
		list = append(list, fuse.DirEntry{Name: e.Name(), Mode: mode, Ino: n.t.ino(semfs.Join(p, e.Name()), mode)})
	}
	if n.t.noOpendir {
		l := &n.t.lastList
		l.Lock()
		l.ino, l.gen, l.at, l.list = ino, gen, time.Now(), list
		l.Unlock()
	}
	return slices.Clone(list), 0
}

// keptList returns a copy of the last listing read, if it is of number
// ino, no name changed since (gen) and it is less than a second old: a
// listing of many entries takes several READDIRs, each through a handle
// of its own where directories are opened without a request.
func (t *tree) keptList(ino, gen uint64) ([]fuse.DirEntry, bool) {
	l := &t.lastList
	l.Lock()
	defer l.Unlock()
	if l.list == nil || l.ino != ino || l.gen != gen || time.Since(l.at) >= time.Second {
		return nil, false
	}
	return slices.Clone(l.list), true
}

// renamed notes a change of names (listGen).
func (t *tree) renamed() { t.listGen.Add(1) }

// dirHandle is an open directory: its listing, read on the first READDIR,
// and the position in it (go-fuse serialises a handle's READDIRs).
type dirHandle struct {
	n      *node
	loaded bool
	list   []fuse.DirEntry
	pos    int
}

var (
	_ gofs.FileReaddirenter = (*dirHandle)(nil)
	_ gofs.FileSeekdirer    = (*dirHandle)(nil)
)

func (d *dirHandle) load(ctx context.Context) syscall.Errno {
	if d.loaded {
		return 0
	}
	list, errno := d.n.list(ctx)
	if errno != 0 {
		return errno
	}
	d.list, d.loaded = list, true
	return 0
}

// Readdirent returns the next entry, or nil at the end.
func (d *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	if errno := d.load(ctx); errno != 0 {
		return nil, errno
	}
	if d.pos >= len(d.list) {
		return nil, 0
	}
	d.pos++
	return &d.list[d.pos-1], 0
}

// Seekdir moves to entry off (offsets count the entries read, as go-fuse
// numbers them).
func (d *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if errno := d.load(ctx); errno != 0 {
		return errno
	}
	d.pos = int(min(off, uint64(len(d.list))))
	return 0
}

// openFlags keeps the open(2) flags a semfs OpenFile understands. O_APPEND
// is dropped: the kernel sends every write with its offset.
func openFlags(flags uint32) int {
	return int(flags) & (syscall.O_ACCMODE | syscall.O_TRUNC | syscall.O_EXCL | syscall.O_CREAT)
}

// Open opens the file the node stands for. When that file was renamed over
// or removed after the kernel resolved the name to this node, Open answers
// ESTALE rather than ENOENT: the kernel then walks the path once more and
// opens what the name holds now, as open(2) on a local file system would
// (there the resolved inode itself is opened).
func (n *node) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if testHookOpen != nil {
		testHookOpen(ctx, n)
	}
	if n.t.opts.OpenFree {
		// The kernel stops sending OPEN (and RELEASE) for good: see
		// free.go.
		return nil, 0, syscall.ENOSYS
	}
	h, errno := n.open(n.t.ctx(ctx), flags)
	if errno != 0 {
		return nil, 0, errno
	}
	return n.t.opened(n.StableAttr().Ino, h)
}

// open opens the file the node stands for in the tree, under the
// namespace lock.
func (n *node) open(ctx context.Context, flags uint32) (*handle, syscall.Errno) {
	n.t.ns.RLock()
	defer n.t.ns.RUnlock()
	p, ok := n.path()
	if !ok {
		return nil, syscall.ESTALE
	}
	if flags&syscall.O_ACCMODE == syscall.O_RDONLY && flags&syscall.O_TRUNC == 0 {
		if h := n.t.openKept(ctx, n.StableAttr().Ino, p); h != nil {
			return h, 0
		}
		f, err := n.t.fsys.Open(ctx, p)
		if err != nil {
			return nil, n.t.errno(err)
		}
		return &handle{t: n.t, ro: f}, 0
	}
	rw, err := semfs.OpenFile(ctx, n.t.fsys, p, openFlags(flags)&^syscall.O_CREAT, 0)
	if err != nil {
		return nil, n.t.errno(err)
	}
	return &handle{t: n.t, rw: rw}, 0
}

// testHookOpen, when set by a test, runs at the start of every Open, with
// the request's context as go-fuse passed it, before the node's path is
// resolved.
var testHookOpen func(ctx context.Context, n *node)

// testHookRenamed, when set by a test, runs after a successful Rename has
// released the namespace lock, where go-fuse has yet to move the name in
// its own tree.
var testHookRenamed func()

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	tctx := n.t.ctx(ctx)
	in, h, errno := n.create(tctx, name, flags, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	if n.t.opts.OpenFree {
		// The kernel sends no RELEASE for any file once OPEN answered
		// ENOSYS, so the new file gets no handle either: its file is
		// kept as the creator's host file (free.go).
		h.ino = in.StableAttr().Ino
		n.t.free.adopt(tctx, h, flags&syscall.O_ACCMODE != syscall.O_RDONLY)
		return in, nil, fuse.FOPEN_KEEP_CACHE, 0
	}
	fh, fl, errno := n.t.opened(in.StableAttr().Ino, h)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	return in, fh, fl, 0
}

// create creates and opens name in the tree, under the namespace lock.
func (n *node) create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*gofs.Inode, *handle, syscall.Errno) {
	n.t.ns.RLock()
	defer n.t.ns.RUnlock()
	p, errno := n.child("create", name)
	if errno != 0 {
		return nil, nil, errno
	}
	rw, err := semfs.OpenFile(ctx, n.t.fsys, p, openFlags(flags)|os.O_CREATE, fs.FileMode(mode&0o777))
	if err != nil {
		return nil, nil, n.t.errno(err)
	}
	info, err := rw.Stat()
	if err != nil {
		rw.Close()
		return nil, nil, n.t.errno(err)
	}
	n.t.renamed()
	return n.newChild(ctx, p, info, out), &handle{t: n.t, rw: rw}, 0
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	ctx = n.t.ctx(ctx)
	n.t.ns.RLock()
	defer n.t.ns.RUnlock()
	p, errno := n.child("mkdir", name)
	if errno != 0 {
		return nil, errno
	}
	if err := semfs.Mkdir(ctx, n.t.fsys, p, fs.FileMode(mode&0o777)); err != nil {
		return nil, n.t.errno(err)
	}
	n.t.renamed()
	info, err := n.t.fsys.Stat(ctx, p)
	if err != nil {
		return nil, n.t.errno(err)
	}
	return n.newChild(ctx, p, info, out), 0
}

func (n *node) remove(ctx context.Context, name string, wantDir bool) syscall.Errno {
	ctx = n.t.ctx(ctx)
	n.t.ns.Lock()
	defer n.t.ns.Unlock()
	p, errno := n.child("remove", name)
	if errno != 0 {
		return errno
	}
	info, err := n.t.fsys.Stat(ctx, p)
	if err != nil {
		return n.t.errno(err)
	}
	switch {
	case wantDir && !info.IsDir():
		return syscall.ENOTDIR
	case !wantDir && info.IsDir():
		return syscall.EISDIR
	}
	kept := n.t.keepOpenFree(ctx, p)
	err = semfs.Remove(ctx, n.t.fsys, p)
	kept(err == nil)
	if err != nil {
		return n.t.errno(err)
	}
	n.t.renamed()
	n.t.forget(p, wantDir)
	return 0
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.remove(ctx, name, false)
}
func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.remove(ctx, name, true)
}

// Rename flags from renameat2(2).
const (
	renameNoReplace = 1
	renameExchange  = 2
)

func (n *node) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	np, isNode := newParent.(*node)
	if !isNode {
		return syscall.EXDEV
	}
	if flags&renameExchange != 0 {
		return syscall.EINVAL
	}
	errno := n.rename(n.t.ctx(ctx), name, np, newName, flags)
	if errno == 0 && testHookRenamed != nil {
		testHookRenamed()
	}
	return errno
}

func (n *node) rename(ctx context.Context, name string, np *node, newName string, flags uint32) syscall.Errno {
	n.t.ns.Lock()
	defer n.t.ns.Unlock()
	oldp, errno := n.child("rename", name)
	if errno != 0 {
		return errno
	}
	newp, errno := np.child("rename", newName)
	if errno != 0 {
		return errno
	}
	if flags&renameNoReplace != 0 {
		if _, err := n.t.fsys.Stat(ctx, newp); err == nil {
			return syscall.EEXIST
		}
	}
	kept := func(bool) {}
	if oldp != newp {
		kept = n.t.keepOpenFree(ctx, newp)
	}
	err := semfs.Rename(ctx, n.t.fsys, oldp, newp)
	kept(err == nil)
	if err != nil {
		return n.t.errno(err)
	}
	n.t.renamed()
	if oldp != newp {
		n.t.move(oldp, newp, n.t.mayBeDir(oldp))
	}
	return 0
}

func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	if n.t.opts.StatfsDir != "" {
		var st syscall.Statfs_t
		if err := syscall.Statfs(n.t.opts.StatfsDir, &st); err == nil {
			out.FromStatfsT(&st)
			return 0
		}
	}
	// A tree without a host directory reports a large, mostly free file
	// system so that df and space checks in tools pass.
	*out = fuse.StatfsOut{Blocks: 1 << 30, Bfree: 1 << 30, Bavail: 1 << 30, Files: 1 << 24, Ffree: 1 << 24, Bsize: 4096, NameLen: semfs.MaxNameLen, Frsize: 4096}
	return 0
}

// Fsync syncs an open file through its handle. A directory has nothing to
// sync: backends make their directory changes durable themselves (hostfs
// fsyncs the parent on every change).
func (n *node) Fsync(ctx context.Context, f gofs.FileHandle, flags uint32) syscall.Errno {
	if h := asHandle(f); h != nil {
		return h.Fsync(ctx, flags)
	}
	if f == nil && n.Mode()&syscall.S_IFMT == syscall.S_IFREG {
		return n.t.free.fsync(ctx, n.StableAttr().Ino) // open-free: the writers without a handle
	}
	return 0
}

// Read reads through the handle f, or without one in the open-free mode.
func (n *node) Read(ctx context.Context, f gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if f != nil {
		if r, ok := f.(gofs.FileReader); ok {
			return r.Read(ctx, dest, off)
		}
		return nil, syscall.EBADF
	}
	return n.t.free.read(ctx, n.StableAttr().Ino, dest, off)
}

// Write writes through the handle f, or without one in the open-free mode
// (also the kernel's writeback of a shared mapping of a file opened
// without a handle).
func (n *node) Write(ctx context.Context, f gofs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	if f != nil {
		if w, ok := f.(gofs.FileWriter); ok {
			return w.Write(ctx, data, off)
		}
		return 0, syscall.EBADF
	}
	return n.t.free.write(ctx, n.StableAttr().Ino, data, off)
}

// Allocate implements fallocate(2) through the handle f, or without one
// in the open-free mode (see handle.Allocate).
func (n *node) Allocate(ctx context.Context, f gofs.FileHandle, off, size uint64, mode uint32) syscall.Errno {
	if f != nil {
		if a, ok := f.(gofs.FileAllocater); ok {
			return a.Allocate(ctx, off, size, mode)
		}
		return syscall.EBADF
	}
	return n.t.free.writer(n.t.ctx(ctx), n.StableAttr().Ino, func(h *handle) syscall.Errno {
		return h.Allocate(ctx, off, size, mode)
	})
}

// Flush runs at close(2): through the handle f (see handle.Flush), and
// declined (ENOSYS) for a file opened without one, whose writes reached
// the tree when they were made (the open-free mode excludes WriteBack).
func (n *node) Flush(ctx context.Context, f gofs.FileHandle) syscall.Errno {
	if fl, ok := f.(gofs.FileFlusher); ok {
		return fl.Flush(ctx)
	}
	return syscall.ENOSYS
}
