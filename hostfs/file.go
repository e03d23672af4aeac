package hostfs

import (
	"io/fs"
	"os"

	"github.com/semfs/semfs"
)

// file is an open host file. It wraps *os.File so that every error carries
// the tree path instead of the host path os.File would report.
type file struct {
	f        *os.File
	path     string
	writable bool
	hostFd   bool // HostFd hands out the descriptor
}

var _ semfs.RWFile = (*file)(nil)

func (h *file) Stat() (fs.FileInfo, error) {
	info, err := h.f.Stat()
	return info, mapErr("stat", h.path, err)
}

func (h *file) Read(b []byte) (int, error) {
	n, err := h.f.Read(b)
	return n, mapErr("read", h.path, err)
}

func (h *file) ReadAt(b []byte, off int64) (int, error) {
	n, err := h.f.ReadAt(b, off)
	return n, mapErr("read", h.path, err)
}

func (h *file) Seek(off int64, whence int) (int64, error) {
	n, err := h.f.Seek(off, whence)
	return n, mapErr("seek", h.path, err)
}

func (h *file) Write(b []byte) (int, error) {
	if !h.writable {
		return 0, semfs.PathErr("write", h.path, semfs.ErrInvalid, detailROHandle)
	}
	n, err := h.f.Write(b)
	return n, mapErr("write", h.path, err)
}

func (h *file) WriteAt(b []byte, off int64) (int, error) {
	if !h.writable {
		return 0, semfs.PathErr("write", h.path, semfs.ErrInvalid, detailROHandle)
	}
	n, err := h.f.WriteAt(b, off)
	return n, mapErr("write", h.path, err)
}

func (h *file) Truncate(size int64) error {
	if !h.writable {
		return semfs.PathErr("truncate", h.path, semfs.ErrInvalid, detailROHandle)
	}
	return mapErr("truncate", h.path, h.f.Truncate(size))
}

// Sync is fsync(2): when it returns nil the file's bytes are on disk.
func (h *file) Sync() error { return mapErr("sync", h.path, h.f.Sync()) }

func (h *file) Close() error { return mapErr("close", h.path, h.f.Close()) }

var _ semfs.Fder = (*file)(nil)

// HostFd implements semfs.Fder: the host file's own descriptor (not in
// Overlay mode, where a path's bytes may move into memory).
func (h *file) HostFd() (int, bool) {
	if !h.hostFd {
		return -1, false
	}
	var fd int
	c, err := h.f.SyscallConn()
	if err != nil {
		return -1, false
	}
	if err := c.Control(func(d uintptr) { fd = int(d) }); err != nil {
		return -1, false
	}
	return fd, true
}
