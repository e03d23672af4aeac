package hostfs

import (
	"io"
	"io/fs"
	"sync"
	"time"

	"github.com/semfs/semfs"
)

// memInfo describes an overlay file or directory.
type memInfo struct {
	name  string
	size  int64
	mode  fs.FileMode
	mtime time.Time
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return i.mode }
func (i memInfo) ModTime() time.Time { return i.mtime }
func (i memInfo) IsDir() bool        { return i.mode.IsDir() }
func (i memInfo) Sys() any           { return nil }

func (of *ofile) info(name string) fs.FileInfo {
	of.mu.RLock()
	defer of.mu.RUnlock()
	return memInfo{name: name, size: int64(len(of.data)), mode: of.perm, mtime: of.mtime}
}

// memHandle is an open overlay file. Sync has nothing to make durable: an
// overlay reaches the disk only through Commit.
type memHandle struct {
	of       *ofile
	path     string
	readable bool
	writable bool
	append   bool

	mu     sync.Mutex
	off    int64
	closed bool
}

var _ semfs.RWFile = (*memHandle)(nil)

func (h *memHandle) use(op string, write bool) error {
	if h.closed {
		return semfs.PathErr(op, h.path, semfs.ErrInvalid, "the file is already closed")
	}
	if write && !h.writable {
		return semfs.PathErr(op, h.path, semfs.ErrInvalid, detailROHandle)
	}
	if !write && !h.readable {
		return semfs.PathErr(op, h.path, semfs.ErrInvalid, "the file was opened write-only; open it with os.O_RDWR to read")
	}
	return nil
}

func (h *memHandle) Stat() (fs.FileInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, semfs.PathErr("stat", h.path, semfs.ErrInvalid, "the file is already closed")
	}
	return h.of.info(semfs.BaseName(h.path)), nil
}

func (h *memHandle) Read(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.use("read", false); err != nil {
		return 0, err
	}
	n, err := h.readAt(b, h.off)
	h.off += int64(n)
	return n, err
}

func (h *memHandle) ReadAt(b []byte, off int64) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.use("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, semfs.PathErr("read", h.path, semfs.ErrInvalid, "negative offset")
	}
	n, err := h.readAt(b, off)
	if err == nil && n < len(b) {
		err = io.EOF
	}
	return n, err
}

func (h *memHandle) readAt(b []byte, off int64) (int, error) {
	h.of.mu.RLock()
	defer h.of.mu.RUnlock()
	if off >= int64(len(h.of.data)) {
		if len(b) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	return copy(b, h.of.data[off:]), nil
}

func (h *memHandle) Write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.use("write", true); err != nil {
		return 0, err
	}
	if h.append {
		h.of.mu.RLock()
		h.off = int64(len(h.of.data))
		h.of.mu.RUnlock()
	}
	n := h.writeAt(b, h.off)
	h.off += int64(n)
	return n, nil
}

func (h *memHandle) WriteAt(b []byte, off int64) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.use("write", true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, semfs.PathErr("write", h.path, semfs.ErrInvalid, "negative offset")
	}
	if h.append {
		return 0, semfs.PathErr("write", h.path, semfs.ErrInvalid, "WriteAt on a file opened with os.O_APPEND")
	}
	return h.writeAt(b, off), nil
}

func (h *memHandle) writeAt(b []byte, off int64) int {
	h.of.mu.Lock()
	defer h.of.mu.Unlock()
	if end := off + int64(len(b)); end > int64(len(h.of.data)) {
		h.of.data = grow(h.of.data, end)
	}
	copy(h.of.data[off:], b)
	h.of.mtime = time.Now()
	return len(b)
}

// grow returns data extended with zero bytes to size.
func grow(data []byte, size int64) []byte {
	if size <= int64(cap(data)) {
		old := len(data)
		data = data[:size]
		clear(data[old:])
		return data
	}
	out := make([]byte, size, size+size/4)
	copy(out, data)
	return out
}

func (h *memHandle) Seek(off int64, whence int) (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return 0, semfs.PathErr("seek", h.path, semfs.ErrInvalid, "the file is already closed")
	}
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		off += h.off
	case io.SeekEnd:
		h.of.mu.RLock()
		off += int64(len(h.of.data))
		h.of.mu.RUnlock()
	default:
		return 0, semfs.PathErr("seek", h.path, semfs.ErrInvalid, "bad whence")
	}
	if off < 0 {
		return 0, semfs.PathErr("seek", h.path, semfs.ErrInvalid, "negative offset")
	}
	h.off = off
	return off, nil
}

func (h *memHandle) Truncate(size int64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.use("truncate", true); err != nil {
		return err
	}
	if size < 0 {
		return semfs.PathErr("truncate", h.path, semfs.ErrInvalid, "negative size")
	}
	h.of.mu.Lock()
	defer h.of.mu.Unlock()
	if size <= int64(len(h.of.data)) {
		h.of.data = h.of.data[:size]
	} else {
		h.of.data = grow(h.of.data, size)
	}
	h.of.mtime = time.Now()
	return nil
}

// Sync succeeds without touching the disk: overlay contents become durable
// only when the tree is committed.
func (h *memHandle) Sync() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return semfs.PathErr("sync", h.path, semfs.ErrInvalid, "the file is already closed")
	}
	return nil
}

func (h *memHandle) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return semfs.PathErr("close", h.path, semfs.ErrInvalid, "the file is already closed")
	}
	h.closed = true
	return nil
}
