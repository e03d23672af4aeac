package semfs

import (
	"context"
	"io/fs"
)

// MkdirFS is implemented by file systems that create directories. Mkdir
// fails with ErrExist if name exists, ErrNotExist if its parent does not,
// and ErrNotDir if its parent is a file.
type MkdirFS interface {
	FS
	Mkdir(ctx context.Context, name string, perm fs.FileMode) error
}

// MkdirAllFS is implemented by file systems that create a directory and its
// missing parents in one step. It succeeds if name is already a directory.
type MkdirAllFS interface {
	FS
	MkdirAll(ctx context.Context, name string, perm fs.FileMode) error
}

// Mkdir creates the directory name, or fails with ErrReadOnly if fsys cannot.
func Mkdir(ctx context.Context, fsys FS, name string, perm fs.FileMode) error {
	p, err := Clean("mkdir", name)
	if err != nil {
		return err
	}
	m, ok := fsys.(MkdirFS)
	if !ok {
		return PathErr("mkdir", p, ErrReadOnly, "this tree does not accept writes")
	}
	return m.Mkdir(ctx, p, perm)
}

// MkdirAll creates name and its missing parents. It uses MkdirAllFS when
// fsys has it and otherwise Stat + Mkdir from the root down.
func MkdirAll(ctx context.Context, fsys FS, name string, perm fs.FileMode) error {
	p, err := Clean("mkdir", name)
	if err != nil {
		return err
	}
	if m, ok := fsys.(MkdirAllFS); ok {
		return m.MkdirAll(ctx, p, perm)
	}
	if info, err := fsys.Stat(ctx, p); err == nil {
		if info.IsDir() {
			return nil
		}
		return PathErr("mkdir", p, ErrNotDir, "a file exists at this path")
	}
	m, ok := fsys.(MkdirFS)
	if !ok {
		return PathErr("mkdir", p, ErrReadOnly, "this tree does not accept writes")
	}
	var out error
	walkDown(p, func(dir string) bool {
		info, err := fsys.Stat(ctx, dir)
		if err == nil {
			if !info.IsDir() {
				out = PathErr("mkdir", p, ErrNotDir, dir+" is a file")
				return false
			}
			return true
		}
		if err := m.Mkdir(ctx, dir, perm); err != nil && !isExistingDir(ctx, fsys, dir, err) {
			out = RewritePath(err, "mkdir", p)
			return false
		}
		return true
	})
	return out
}

// walkDown calls fn for every prefix of canonical p below the root,
// shortest first, including p itself.
func walkDown(p string, fn func(dir string) bool) {
	for i := 1; i <= len(p); i++ {
		if (i == len(p) || p[i] == '/') && !fn(p[:i]) {
			return
		}
	}
}

// isExistingDir reports whether a Mkdir error is the benign race "someone
// else created the directory first".
func isExistingDir(ctx context.Context, fsys FS, dir string, err error) bool {
	if !errorsIsAny(err, ErrExist) {
		return false
	}
	info, serr := fsys.Stat(ctx, dir)
	return serr == nil && info.IsDir()
}
