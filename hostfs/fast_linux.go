//go:build linux

package hostfs

import (
	"io/fs"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// The fast path resolves a whole path in one openat2(2) call with
// RESOLVE_BENEATH, which makes the kernel refuse any resolution that leaves
// the root (through "..", an absolute link or a relative one), and
// RESOLVE_NO_MAGICLINKS. os.Root walks a path one openat per element, which
// is what makes deep paths slow. The fast path only ever answers success:
// on any error the caller repeats the operation through os.Root, so error
// semantics (and the errors themselves) are os.Root's. That holds for
// opens that create or truncate too: an openat2 that fails has created and
// truncated nothing, and where it succeeds the kernel followed the links
// os.Root would follow (O_CREAT|O_EXCL follows no final link in either).
// One error is final, though: ENOENT of an open that creates nothing (a
// stat, a read). The kernel walked the same elements and links os.Root
// walks, and every way out of the root fails with EXDEV or ELOOP before
// anything past it is looked up, so os.Root would answer ENOENT too —
// after an openat per element and an fstatat, which is what a negative
// lookup (each file a program creates through the mount) cost twice.
// Kernels older than 5.6 answer ENOSYS, which turns the fast path off.

const (
	sysOpenat2          = 437 // the same number on every Linux architecture
	resolveNoMagiclinks = 0x02
	resolveBeneath      = 0x08
	oPath               = 0x200000 // O_PATH, the same on every architecture Go supports
)

type openHow struct {
	flags   uint64
	mode    uint64
	resolve uint64
}

// fastRoot is the root directory held open for openat2. Calls go through
// its RawConn, which holds a reference on the descriptor for the length of
// the call, so a concurrent Close cannot hand the number to another file
// mid-call.
type fastRoot struct {
	dir *os.File
	rc  syscall.RawConn
	off atomic.Bool
}

func newFastRoot(root *os.Root) *fastRoot {
	dir, err := root.Open(".")
	if err != nil {
		return nil
	}
	rc, err := dir.SyscallConn()
	if err != nil {
		dir.Close()
		return nil
	}
	fr := &fastRoot{dir: dir, rc: rc}
	// Probe once: a kernel without openat2 (or a sandbox that forbids
	// it) turns the fast path off instead of costing a failed call each
	// time.
	fd, _ := fr.open(".", oPath|syscall.O_DIRECTORY, 0)
	if fd < 0 {
		fr.off.Store(true)
	} else {
		syscall.Close(fd)
	}
	return fr
}

func (fr *fastRoot) close() {
	if fr != nil {
		fr.off.Store(true)
		fr.dir.Close()
	}
}

// open opens rel (relative to the root) and returns its descriptor, or
// -1 and the kernel's error (0 when the fast path was not taken).
func (fr *fastRoot) open(rel string, flags int, perm uint32) (int, syscall.Errno) {
	if fr == nil || fr.off.Load() {
		return -1, 0
	}
	p, err := syscall.BytePtrFromString(rel)
	if err != nil {
		return -1, 0
	}
	flags |= syscall.O_CLOEXEC
	if flags&oPath == 0 {
		flags |= syscall.O_NOCTTY // openat2 refuses it with O_PATH
	}
	how := openHow{flags: uint64(flags), mode: uint64(perm), resolve: resolveBeneath | resolveNoMagiclinks}
	fd, errno := -1, syscall.Errno(0)
	err = fr.rc.Control(func(dirfd uintptr) {
		for {
			r, _, e := syscall.Syscall6(sysOpenat2, dirfd, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
			if e != syscall.EINTR {
				fd, errno = int(r), e
				return
			}
		}
	})
	switch {
	case err != nil: // closed
		return -1, 0
	case errno == syscall.ENOSYS:
		fr.off.Store(true)
		return -1, 0
	case errno != 0:
		return -1, errno
	}
	return fd, 0
}

// missing reports whether a fast open with flags that failed with errno
// found no such file: an answer os.Root would give as well, so the caller
// returns it instead of trying again through os.Root.
func missing(errno syscall.Errno, flags int) bool {
	return errno == syscall.ENOENT && flags&syscall.O_CREAT == 0
}

// stat describes rel, following links inside the root. When it returns no
// info, errno is the kernel's error (0 when the fast path was not taken).
func (fr *fastRoot) stat(rel, name string) (fs.FileInfo, syscall.Errno) {
	fd, errno := fr.open(rel, oPath, 0)
	if fd < 0 {
		return nil, errno
	}
	defer syscall.Close(fd)
	var st statInfo
	if err := fstat(fd, &st.sys); err != nil {
		return nil, 0
	}
	st.name = name
	return &st, 0
}

// readFile reads the regular file rel. ok is false when the caller must
// take the os.Root path (any failure, or not a regular file), unless
// errno is an answer (see missing).
func (fr *fastRoot) readFile(rel string) (data []byte, ok bool, errno syscall.Errno) {
	fd, errno := fr.open(rel, syscall.O_RDONLY|syscall.O_NONBLOCK, 0)
	if fd < 0 {
		return nil, false, errno
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, false, 0
	}
	buf := make([]byte, 0, st.Size+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false, 0
		}
		if n == 0 {
			return buf, true, 0
		}
		buf = buf[:len(buf)+n]
	}
}

func fstat(fd int, st *syscall.Stat_t) error {
	for {
		err := syscall.Fstat(fd, st)
		if err != syscall.EINTR {
			return err
		}
	}
}

// statInfo is a FileInfo built from a stat(2) result.
type statInfo struct {
	name string
	sys  syscall.Stat_t
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.sys.Size }
func (s *statInfo) ModTime() time.Time { return time.Unix(s.sys.Mtim.Unix()) }
func (s *statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s *statInfo) Sys() any           { return &s.sys }

func (s *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(s.sys.Mode & 0o777)
	switch s.sys.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	}
	if s.sys.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if s.sys.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if s.sys.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
