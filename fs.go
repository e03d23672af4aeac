package semfs

import (
	"context"
	"io/fs"
)

// FS is the core contract: a tree of regular files and directories that can
// be opened for reading, stat'ed and listed. Implementations must be safe for
// concurrent use. Paths are validated with [Clean] by each implementation's
// entry points (backends may rely on layers above having done it, but must
// not crash on a bad path).
type FS interface {
	// Open opens the regular file name for reading. Opening a directory
	// fails with ErrIsDir.
	Open(ctx context.Context, name string) (fs.File, error)
	// Stat describes name. The root "/" always exists and is a directory.
	Stat(ctx context.Context, name string) (fs.FileInfo, error)
	// ReadDir lists the immediate children of the directory name, sorted by
	// name.
	ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error)
}

// Unwrapper is implemented by layers: Unwrap returns the FS the layer wraps.
// Snapshots, restores and tree copies unwrap to the bottom so that they
// capture what the backend stores, including metadata and fenced paths.
type Unwrapper interface {
	Unwrap() FS
}

// Base unwraps fsys until it reaches an FS that is not an [Unwrapper].
func Base(fsys FS) FS {
	for {
		u, ok := fsys.(Unwrapper)
		if !ok {
			return fsys
		}
		next := u.Unwrap()
		if next == nil {
			return fsys
		}
		fsys = next
	}
}

// Stat is a convenience for fsys.Stat that validates name first.
func Stat(ctx context.Context, fsys FS, name string) (fs.FileInfo, error) {
	p, err := Clean("stat", name)
	if err != nil {
		return nil, err
	}
	return fsys.Stat(ctx, p)
}

// ReadDir is a convenience for fsys.ReadDir that validates name first.
func ReadDir(ctx context.Context, fsys FS, name string) ([]fs.DirEntry, error) {
	p, err := Clean("readdir", name)
	if err != nil {
		return nil, err
	}
	return fsys.ReadDir(ctx, p)
}

// Exists reports whether name exists (as a file or directory) and is visible
// to the caller. It answers false rather than failing for paths that are
// absent, hidden or invalid; only unexpected failures (I/O, cancellation) are
// returned as errors.
func Exists(ctx context.Context, fsys FS, name string) (bool, error) {
	if e, ok := fsys.(ExistsFS); ok {
		return e.Exists(ctx, name)
	}
	p, err := Clean("exists", name)
	if err != nil {
		return false, nil
	}
	_, err = fsys.Stat(ctx, p)
	switch {
	case err == nil:
		return true, nil
	case IsAbsence(err):
		return false, nil
	default:
		return false, err
	}
}

// ExistsFS lets a layer answer Exists itself (an access layer answers false
// for hidden paths without revealing why).
type ExistsFS interface {
	FS
	Exists(ctx context.Context, name string) (bool, error)
}

// IsAbsence reports whether err means "there is nothing there for you":
// not-exist, not-a-directory on the way, permission, or an invalid path.
func IsAbsence(err error) bool {
	return errorsIsAny(err, ErrNotExist, ErrNotDir, ErrPermission, ErrInvalid)
}
