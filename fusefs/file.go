package fusefs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/semfs/semfs"
)

// handle is an open file: ro for read-only opens through FS.Open, rw for
// every open that may write, through OpenFileFS.
type handle struct {
	t    *tree
	ro   fs.File
	rw   semfs.RWFile
	ino  uint64
	mode ioMode // how the kernel serves it (see tree.opened)
	fd   int    // the host descriptor of a passthrough handle
	// roFd, when hasRo, is a read-only descriptor of the same host file,
	// registered with the kernel for a writable passthrough handle (see
	// readOnlyFd).
	roFd  int
	hasRo bool
	// stamp is the host file as a read-only handle served through the
	// page cache found it at open (tree.cachedOpen).
	stamp pageStamp
	// lazy, when set, defers opening ro until a read misses the pages
	// the kernel kept (tree.openKept); ro is set once, under lazy.mu,
	// which every use of ro takes first (load, opened).
	lazy *lazyOpen

	mu  sync.Mutex // serialises reads of an ro file without ReadAt
	pos int64
}

var (
	_ gofs.FileReader    = (*handle)(nil)
	_ gofs.FileWriter    = (*handle)(nil)
	_ gofs.FileFsyncer   = (*handle)(nil)
	_ gofs.FileFlusher   = (*handle)(nil)
	_ gofs.FileReleaser  = (*handle)(nil)
	_ gofs.FileAllocater = (*handle)(nil)
)

// ioMode is how the kernel serves an open file.
type ioMode int

const (
	ioCached      ioMode = iota + 1 // through the page cache
	ioPassthrough                   // by the kernel on the host descriptor
)

// ptHandle is a handle the kernel serves by passthrough. It is a type of
// its own because go-fuse gives passthrough to every handle implementing
// FilePassthroughFder once one handle of the inode registered a backing
// file.
type ptHandle struct {
	*handle
	fd int
}

var _ gofs.FilePassthroughFder = (*ptHandle)(nil)

// PassthroughFd implements gofs.FilePassthroughFder.
func (h *ptHandle) PassthroughFd() (int, bool) { return h.fd, true }

// asHandle returns the handle behind f, or nil when f is none of ours.
func asHandle(f gofs.FileHandle) *handle {
	switch h := f.(type) {
	case *handle:
		return h
	case *ptHandle:
		return h.handle
	}
	return nil
}

// lazyOpen is the state of a handle whose host file is opened on its
// first read (tree.openKept).
type lazyOpen struct {
	ctx  context.Context // the opener's: the deferred open runs as the opener
	info fs.FileInfo     // the file at open, for fstat(2) before a read
	mu   sync.Mutex
	done bool // ro is open
}

// load opens the host file of a handle made by openKept, if it is not
// open yet: the file its number names now, which must be the file the
// handle was opened on (a file renamed over it, or replaced behind the
// mount, would serve other bytes): otherwise ESTALE.
func (h *handle) load() error {
	l := h.lazy
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return nil
	}
	t := h.t
	t.ns.RLock()
	p, ok := t.pathOf(h.ino)
	if !ok {
		t.ns.RUnlock()
		return syscall.ESTALE
	}
	f, err := t.fsys.Open(l.ctx, p)
	t.ns.RUnlock()
	if err != nil {
		return err
	}
	var st syscall.Stat_t
	if fd, ok := semfs.HostFd(f); !ok || syscall.Fstat(fd, &st) != nil || pageStampOf(&st).id != h.stamp.id {
		f.Close()
		return syscall.ESTALE
	}
	h.ro, l.done = f, true
	return nil
}

// opened reports whether the handle holds an open file of the tree; only
// a handle of openKept's that no read needed holds none.
func (h *handle) opened() bool {
	if h.lazy == nil {
		return true
	}
	h.lazy.mu.Lock()
	defer h.lazy.mu.Unlock()
	return h.lazy.done
}

// file is the open file of the tree (nil for a handle of openKept's that
// no read needed).
func (h *handle) file() fs.File {
	if h.rw != nil {
		return h.rw
	}
	if !h.opened() {
		return nil
	}
	return h.ro
}

func (h *handle) stat() (fs.FileInfo, error) {
	if h.rw != nil {
		return h.rw.Stat()
	}
	if !h.opened() {
		return h.lazy.info, nil
	}
	return h.ro.Stat()
}

func (h *handle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if h.lazy != nil {
		if err := h.load(); err != nil {
			return nil, h.t.errno(err)
		}
	}
	var ra io.ReaderAt = h.rw
	if h.rw == nil {
		ra, _ = h.ro.(io.ReaderAt)
	}
	if ra != nil {
		n, err := ra.ReadAt(dest, off)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, h.t.errno(err)
		}
		return fuse.ReadResultData(dest[:n]), 0
	}
	// A file without ReadAt: seek when it can, else only sequential reads.
	h.mu.Lock()
	defer h.mu.Unlock()
	if off != h.pos {
		s, ok := h.ro.(io.Seeker)
		if !ok {
			h.t.opts.logf("fusefs: non-sequential read of a file that cannot seek")
			return nil, syscall.EIO
		}
		if _, err := s.Seek(off, io.SeekStart); err != nil {
			return nil, h.t.errno(err)
		}
		h.pos = off
	}
	n, err := io.ReadFull(h.ro, dest)
	h.pos += int64(n)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, h.t.errno(err)
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func (h *handle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if h.rw == nil {
		return 0, syscall.EBADF
	}
	n, err := h.rw.WriteAt(data, off)
	if err != nil {
		return uint32(n), h.t.errno(err)
	}
	return uint32(n), 0
}

func (h *handle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	if h.rw == nil {
		return 0
	}
	return h.t.errno(h.rw.Sync())
}

// Flush runs on every close(2) of a descriptor. On a write-back tree
// (Options.WriteBack) it syncs a writable handle, so that close reports a
// failed upload. Otherwise it answers ENOSYS, which the kernel takes as
// "this file system needs no FLUSH" and stops sending one on every close
// of the mount: writes have reached the tree already, so a FLUSH was a
// round trip that did nothing (one of five requests per file of grep -r).
func (h *handle) Flush(ctx context.Context) syscall.Errno {
	if !h.t.opts.WriteBack {
		return syscall.ENOSYS
	}
	if h.rw == nil {
		return 0
	}
	return h.t.errno(h.rw.Sync())
}

// readOnlyFd returns a read-only descriptor of the host file of h, a
// writable passthrough handle, for the kernel to register as the inode's
// backing file (or h's own descriptor if none can be opened). The kernel
// opens its own backing file from it with the program's flags, so writes
// work; and the registered file, which the kernel closes only when the
// inode's last handle is gone (after this handle's Release), then reports
// no IN_CLOSE_WRITE, which mapped.go would take for a mapping's.
func (h *handle) readOnlyFd() int {
	fd, err := syscall.Open(fmt.Sprintf("/proc/self/fd/%d", h.fd), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return h.fd
	}
	h.roFd, h.hasRo = fd, true
	return fd
}

// Release closes the file. The last writable passthrough handle of a file
// leaves it watched for writes through a mapping (mapped.go).
func (h *handle) Release(ctx context.Context) syscall.Errno {
	if testHookRelease != nil {
		testHookRelease()
	}
	opath := -1
	var before *fileStamp
	if h.mode == ioPassthrough && h.rw != nil {
		opath = h.t.mapped.prepare(h.fd)
		if st, ok := stampOf(h.fd); ok {
			before = &st
		}
	}
	var err error
	if f := h.file(); f != nil {
		err = f.Close()
	}
	if h.hasRo {
		syscall.Close(h.roFd)
	}
	if lastWriter := h.t.closed(h); opath >= 0 {
		if p, named := h.t.pathOf(h.ino); lastWriter && named {
			h.t.mapped.add(h.ino, p, opath, before)
		} else {
			syscall.Close(opath)
		}
	}
	return h.t.errno(err)
}

// testHookRelease, when set by a test, runs at the start of every Release.
var testHookRelease func()

// falloc mode bits from fallocate(2).
const fallocKeepSize = 1

// Allocate implements fallocate(2) for the modes a tree without block
// allocation can honour: plain allocation extends the file with zeros, and
// KEEP_SIZE is a no-op. Punching holes and the like answer EOPNOTSUPP.
func (h *handle) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	if h.rw == nil {
		return syscall.EBADF
	}
	switch mode {
	case fallocKeepSize:
		return 0
	case 0:
		info, err := h.rw.Stat()
		if err != nil {
			return h.t.errno(err)
		}
		if end := int64(off + size); end > info.Size() {
			return h.t.errno(h.rw.Truncate(end))
		}
		return 0
	}
	return syscall.EOPNOTSUPP
}
