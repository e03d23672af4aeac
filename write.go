package semfs

import (
	"context"
	"io"
	"io/fs"
	"os"
)

// WriteFileFS is implemented by file systems that can replace a whole file
// at once. WriteFile creates missing parent directories, and replaces an
// existing file's contents atomically where the backend allows: a reader sees
// the old bytes or the new, never a mix.
type WriteFileFS interface {
	FS
	WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error
}

// RWFile is a file opened for random-access reading and writing.
type RWFile interface {
	fs.File
	io.Reader
	io.Writer
	io.ReaderAt
	io.WriterAt
	io.Seeker
	// Truncate changes the size of the file.
	Truncate(size int64) error
	// Sync commits the file's contents to stable storage; when it returns
	// nil, the write is acknowledged and survives a crash.
	Sync() error
}

// OpenFileFS is implemented by file systems that open files for writing.
// flag is a combination of os.O_RDONLY, os.O_WRONLY, os.O_RDWR, os.O_CREATE,
// os.O_EXCL, os.O_TRUNC and os.O_APPEND. Unlike WriteFile, OpenFile does not
// create missing parents (it fails with ErrNotExist), as open(2) does.
type OpenFileFS interface {
	FS
	OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (RWFile, error)
}

// WriteFile writes data to name, creating it and its missing parent
// directories. It uses WriteFileFS if fsys has it and otherwise MkdirAll +
// OpenFile. A file system with neither fails with ErrReadOnly.
func WriteFile(ctx context.Context, fsys FS, name string, data []byte, perm fs.FileMode) error {
	p, err := Clean("write", name)
	if err != nil {
		return err
	}
	if p == "/" {
		return PathErr("write", p, ErrIsDir, "the root is a directory")
	}
	if w, ok := fsys.(WriteFileFS); ok {
		return w.WriteFile(ctx, p, data, perm)
	}
	of, ok := fsys.(OpenFileFS)
	if !ok {
		return PathErr("write", p, ErrReadOnly, "this tree does not accept writes")
	}
	if err := MkdirAll(ctx, fsys, Dir(p), 0o755); err != nil {
		return RewritePath(err, "write", p)
	}
	f, err := of.OpenFile(ctx, p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return RewritePath(err, "write", p)
	}
	return f.Close()
}

// OpenFile opens name with flag through OpenFileFS, or fails with
// ErrReadOnly when fsys cannot open files for writing. A read-only open
// (flag == os.O_RDONLY) on such a file system fails the same way: use Open.
func OpenFile(ctx context.Context, fsys FS, name string, flag int, perm fs.FileMode) (RWFile, error) {
	p, err := Clean("open", name)
	if err != nil {
		return nil, err
	}
	of, ok := fsys.(OpenFileFS)
	if !ok {
		return nil, PathErr("open", p, ErrReadOnly, "this tree does not accept writes")
	}
	return of.OpenFile(ctx, p, flag, perm)
}
