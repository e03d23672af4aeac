package fusefs

import (
	"context"
	"errors"
	"log"
	"syscall"

	"github.com/semfs/semfs"
)

// errnos is the one table mapping the contract's sentinels to errno.
var errnos = map[error]syscall.Errno{
	semfs.ErrNotExist:   syscall.ENOENT,
	semfs.ErrExist:      syscall.EEXIST,
	semfs.ErrPermission: syscall.EACCES,
	semfs.ErrInvalid:    syscall.EINVAL,
	semfs.ErrNotDir:     syscall.ENOTDIR,
	semfs.ErrIsDir:      syscall.EISDIR,
	semfs.ErrNotEmpty:   syscall.ENOTEMPTY,
	semfs.ErrReadOnly:   syscall.EROFS,
	semfs.ErrQuota:      syscall.EDQUOT,
}

// Errno maps err to the errno a FUSE caller sees: 0 for nil, the table entry
// for a semfs sentinel, the errno an error carries (ENOSPC from a host
// directory), EINTR for a cancelled request, and otherwise EIO with a log
// line through logf (log.Printf when nil).
func Errno(err error, logf func(format string, args ...any)) syscall.Errno {
	if err == nil {
		return 0
	}
	if s := semfs.Sentinel(err); s != nil {
		return errnos[s]
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return en
	}
	if errors.Is(err, context.Canceled) {
		return syscall.EINTR
	}
	if logf == nil {
		logf = log.Printf
	}
	logf("fusefs: unmapped error, answering EIO: %v", err)
	return syscall.EIO
}
