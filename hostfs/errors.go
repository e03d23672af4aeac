package hostfs

import (
	"errors"
	"io"
	"io/fs"
	"syscall"

	"github.com/semfs/semfs"
)

// escapeText is the text of os.Root's unexported error for a path or symlink
// that leaves the root. It is matched by text because the standard library
// does not export it; TestEscapeErrorText pins it.
const escapeText = "path escapes from parent"

// Details appended to sentinels, written for the person reading the error.
const (
	detailEscape   = "symlink points outside the tree (hostfs follows only relative links that stay inside it)"
	detailLoop     = "too many levels of symbolic links (a symlink loop?); fix or remove the link"
	detailTooLong  = "name too long for the host file system; use a shorter name"
	detailHidden   = "reserved for semfs bookkeeping; it cannot be read or changed through the tree"
	detailReadOnly = "this tree was opened read-only; open it read-write to change it"
	detailNotFile  = "not a regular file or directory (device, socket or pipe); hostfs serves only files and directories"
	detailROHandle = "the file was opened read-only; open it with os.O_WRONLY or os.O_RDWR to write"
)

// mapErr turns any error from the host into the contract's shape: a
// *fs.PathError carrying the tree path p and a semfs sentinel. The host
// path, and any text that might hold it, is dropped: only the errno's text
// survives, and only when no sentinel fits.
func mapErr(op, p string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	// An errno first: syscall.Errno matches some io/fs sentinels loosely
	// (ENOTEMPTY is fs.ErrExist to errors.Is), so it gets its own table.
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errnoErr(op, p, errno)
	}
	if semfs.Sentinel(err) != nil {
		// Already ours: keep the sentinel and detail, replace the path.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return &fs.PathError{Op: op, Path: p, Err: pe.Err}
		}
	}
	if inner := innermost(err); inner != nil {
		switch inner.Error() {
		case escapeText:
			return semfs.PathErr(op, p, semfs.ErrPermission, detailEscape)
		case "not a directory": // os.Root.OpenRoot of a file
			return semfs.PathErr(op, p, semfs.ErrNotDir, "")
		}
	}
	switch {
	case errors.Is(err, fs.ErrClosed):
		return semfs.PathErr(op, p, semfs.ErrInvalid, "the file is already closed")
	case errors.Is(err, fs.ErrNotExist):
		return semfs.PathErr(op, p, semfs.ErrNotExist, "")
	case errors.Is(err, fs.ErrExist):
		return semfs.PathErr(op, p, semfs.ErrExist, "")
	case errors.Is(err, fs.ErrPermission):
		return semfs.PathErr(op, p, semfs.ErrPermission, "")
	case errors.Is(err, fs.ErrInvalid):
		return semfs.PathErr(op, p, semfs.ErrInvalid, "")
	}
	// No sentinel fits and the text may name a host path: say only that
	// the host failed.
	return &fs.PathError{Op: op, Path: p, Err: errHost}
}

// errHost stands for a host failure that fits no sentinel. Front ends map
// it to their generic failure (EIO, 500, exit 1).
var errHost = errors.New("host file system error")

// errnoErr maps one errno to a sentinel.
func errnoErr(op, p string, errno syscall.Errno) error {
	var s error
	detail := ""
	switch errno {
	case syscall.ENOENT:
		s = semfs.ErrNotExist
	case syscall.EEXIST:
		s = semfs.ErrExist
	case syscall.ENOTDIR:
		s = semfs.ErrNotDir
	case syscall.EISDIR:
		s = semfs.ErrIsDir
	case syscall.ENOTEMPTY:
		s = semfs.ErrNotEmpty
	case syscall.EACCES, syscall.EPERM:
		s = semfs.ErrPermission
		detail = "the host refused access"
	case syscall.EROFS:
		s = semfs.ErrReadOnly
		detail = "the host directory is on a read-only file system"
	case syscall.EDQUOT, syscall.ENOSPC:
		s = semfs.ErrQuota
		detail = "the host file system is full or over quota; free space and retry"
	case syscall.ELOOP:
		s, detail = semfs.ErrInvalid, detailLoop
	case syscall.ENAMETOOLONG:
		s, detail = semfs.ErrInvalid, detailTooLong
	case syscall.EINVAL:
		s = semfs.ErrInvalid
	case syscall.EBADF:
		s, detail = semfs.ErrInvalid, detailROHandle
	case syscall.EXDEV:
		s, detail = semfs.ErrInvalid, "source and destination are on different host file systems"
	default:
		return &fs.PathError{Op: op, Path: p, Err: errno}
	}
	return semfs.PathErr(op, p, s, detail)
}

// innermost unwraps err until it wraps nothing (following the first of a
// multi-error).
func innermost(err error) error {
	for {
		var next error
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			next = u.Unwrap()
		case interface{ Unwrap() []error }:
			if errs := u.Unwrap(); len(errs) > 0 {
				next = errs[0]
			}
		}
		if next == nil {
			return err
		}
		err = next
	}
}
