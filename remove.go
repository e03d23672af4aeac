package semfs

import (
	"context"
	"io/fs"
)

// RemoveFS is implemented by file systems that remove files and empty
// directories. Remove fails with ErrNotEmpty on a non-empty directory and
// ErrNotExist if name does not exist. The root cannot be removed.
type RemoveFS interface {
	FS
	Remove(ctx context.Context, name string) error
}

// RemoveAllFS is implemented by file systems that remove a subtree in one
// step. RemoveAll succeeds if name does not exist. A layer that cannot
// remove part of the subtree refuses the whole removal before changing
// anything.
type RemoveAllFS interface {
	FS
	RemoveAll(ctx context.Context, name string) error
}

// Remove removes a file or an empty directory.
func Remove(ctx context.Context, fsys FS, name string) error {
	p, err := Clean("remove", name)
	if err != nil {
		return err
	}
	r, ok := fsys.(RemoveFS)
	if !ok {
		return PathErr("remove", p, ErrReadOnly, "this tree does not accept writes")
	}
	return r.Remove(ctx, p)
}

// RemoveAll removes name and everything below it. It uses RemoveAllFS when
// fsys has it and otherwise removes depth-first with Remove. Removing "/"
// removes every child of the root, not the root.
func RemoveAll(ctx context.Context, fsys FS, name string) error {
	p, err := Clean("removeall", name)
	if err != nil {
		return err
	}
	if r, ok := fsys.(RemoveAllFS); ok {
		return r.RemoveAll(ctx, p)
	}
	r, ok := fsys.(RemoveFS)
	if !ok {
		return PathErr("removeall", p, ErrReadOnly, "this tree does not accept writes")
	}
	info, err := fsys.Stat(ctx, p)
	if err != nil {
		if errorsIsAny(err, ErrNotExist) {
			return nil
		}
		return err
	}
	return removeTree(ctx, fsys, r, p, info)
}

func removeTree(ctx context.Context, fsys FS, r RemoveFS, p string, info fs.FileInfo) error {
	if err := ctx.Err(); err != nil {
		return PathErr("removeall", p, err, "")
	}
	if info.IsDir() {
		entries, err := fsys.ReadDir(ctx, p)
		if err != nil {
			return err
		}
		for _, e := range entries {
			ci, err := e.Info()
			if err != nil {
				return RewritePath(err, "removeall", Join(p, e.Name()))
			}
			if err := removeTree(ctx, fsys, r, Join(p, e.Name()), ci); err != nil {
				return err
			}
		}
		if p == "/" {
			return nil
		}
	}
	if err := r.Remove(ctx, p); err != nil && !errorsIsAny(err, ErrNotExist) {
		return err
	}
	return nil
}
