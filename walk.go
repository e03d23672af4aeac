package semfs

import (
	"context"
	"io/fs"
	"iter"
	"sort"
)

// WalkDir walks the tree rooted at root in lexical order, calling fn for each
// file and directory, root included, with canonical paths. It behaves like
// fs.WalkDir: fn may return fs.SkipDir or fs.SkipAll.
func WalkDir(ctx context.Context, fsys FS, root string, fn fs.WalkDirFunc) error {
	p, err := Clean("walk", root)
	if err != nil {
		return fn(root, nil, err)
	}
	info, err := fsys.Stat(ctx, p)
	if err != nil {
		err = fn(p, nil, err)
	} else {
		err = walkDir(ctx, fsys, p, fs.FileInfoToDirEntry(info), fn)
	}
	if err == fs.SkipDir || err == fs.SkipAll {
		return nil
	}
	return err
}

func walkDir(ctx context.Context, fsys FS, p string, d fs.DirEntry, fn fs.WalkDirFunc) error {
	if err := fn(p, d, nil); err != nil || !d.IsDir() {
		if err == fs.SkipDir && d.IsDir() {
			err = nil
		}
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := fsys.ReadDir(ctx, p)
	if err != nil {
		if err = fn(p, d, err); err != nil {
			if err == fs.SkipDir {
				err = nil
			}
			return err
		}
	}
	for _, e := range entries {
		if err := walkDir(ctx, fsys, Join(p, e.Name()), e, fn); err != nil {
			if err == fs.SkipDir {
				break
			}
			return err
		}
	}
	return nil
}

// FilesFS is implemented by file systems that enumerate every regular file
// below a directory faster than a walk. Files yields canonical paths in
// sorted order (byte order of the full path, as sort.Strings orders them).
type FilesFS interface {
	FS
	Files(ctx context.Context, root string) iter.Seq2[string, error]
}

// Files yields every regular file below root, sorted by path. It uses FilesFS
// when fsys has it and otherwise walks the tree. A failure is yielded once as
// ("", err) and ends the sequence.
func Files(ctx context.Context, fsys FS, root string) iter.Seq2[string, error] {
	p, err := Clean("files", root)
	if err != nil {
		return func(yield func(string, error) bool) { yield("", err) }
	}
	if f, ok := fsys.(FilesFS); ok {
		return f.Files(ctx, p)
	}
	return func(yield func(string, error) bool) {
		var files []string
		err := WalkDir(ctx, fsys, p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if d != nil && errorsIsAny(err, ErrNotExist) {
					return nil // removed while we walked
				}
				return err
			}
			if d.Type().IsRegular() {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			yield("", err)
			return
		}
		// Walk order is per-directory name order, which differs from full
		// path byte order ("a/b" vs "a.txt"); sort to honour the contract.
		sort.Strings(files)
		for _, f := range files {
			if !yield(f, nil) {
				return
			}
		}
	}
}

// FileList collects Files into a slice.
func FileList(ctx context.Context, fsys FS, root string) ([]string, error) {
	var out []string
	for f, err := range Files(ctx, fsys, root) {
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// SizeFS is implemented by file systems that know the total number of bytes
// stored in their regular files. Layers report the whole tree, hidden parts
// included: the number exists to enforce a budget.
type SizeFS interface {
	FS
	TotalSize(ctx context.Context) (int64, error)
}

// TotalSize returns the bytes stored in all regular files of fsys, through
// SizeFS or by walking the tree.
func TotalSize(ctx context.Context, fsys FS) (int64, error) {
	if s, ok := fsys.(SizeFS); ok {
		return s.TotalSize(ctx)
	}
	var total int64
	err := WalkDir(ctx, fsys, "/", func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && errorsIsAny(err, ErrNotExist) {
				return nil // removed while we walked
			}
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if errorsIsAny(err, ErrNotExist) {
				return nil // removed while we walked
			}
			if err != nil {
				return err
			}
			total += info.Size()
		}
		return nil
	})
	return total, err
}
