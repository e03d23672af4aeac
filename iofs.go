package semfs

import (
	"context"
	"errors"
	"io"
	"io/fs"
)

// IOFS returns fsys as an io/fs.FS whose calls run with ctx. Names follow
// io/fs conventions ("." is the root, "a/b" a path; see fs.ValidPath), and
// errors keep their sentinels with io/fs-style relative paths. The result
// implements fs.StatFS, fs.ReadDirFS and fs.ReadFileFS, and opening a
// directory yields an fs.ReadDirFile, so testing/fstest.TestFS, fs.WalkDir
// and http.FS work on every backend and layer.
func IOFS(ctx context.Context, fsys FS) fs.FS { return ioFS{ctx: ctx, fsys: fsys} }

type ioFS struct {
	ctx  context.Context
	fsys FS
}

var (
	_ fs.StatFS     = ioFS{}
	_ fs.ReadDirFS  = ioFS{}
	_ fs.ReadFileFS = ioFS{}
)

func (f ioFS) path(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return "/", nil
	}
	return "/" + name, nil
}

// ioErr rewrites a semfs error's path into io/fs form.
func ioErr(err error, op, name string) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: op, Path: name, Err: pe.Err}
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

func (f ioFS) Open(name string) (fs.File, error) {
	p, err := f.path("open", name)
	if err != nil {
		return nil, err
	}
	file, err := f.fsys.Open(f.ctx, p)
	if err == nil {
		return file, nil
	}
	if !errors.Is(err, ErrIsDir) {
		return nil, ioErr(err, "open", name)
	}
	info, err := f.fsys.Stat(f.ctx, p)
	if err != nil {
		return nil, ioErr(err, "open", name)
	}
	entries, err := f.fsys.ReadDir(f.ctx, p)
	if err != nil {
		return nil, ioErr(err, "open", name)
	}
	return &ioDir{name: name, info: info, entries: entries}, nil
}

func (f ioFS) Stat(name string) (fs.FileInfo, error) {
	p, err := f.path("stat", name)
	if err != nil {
		return nil, err
	}
	info, err := f.fsys.Stat(f.ctx, p)
	if err != nil {
		return nil, ioErr(err, "stat", name)
	}
	if name == "." {
		return renamedInfo{info, "."}, nil
	}
	return info, nil
}

func (f ioFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := f.path("readdir", name)
	if err != nil {
		return nil, err
	}
	entries, err := f.fsys.ReadDir(f.ctx, p)
	return entries, ioErr(err, "readdir", name)
}

func (f ioFS) ReadFile(name string) ([]byte, error) {
	p, err := f.path("readfile", name)
	if err != nil {
		return nil, err
	}
	data, err := ReadFile(f.ctx, f.fsys, p)
	return data, ioErr(err, "readfile", name)
}

type renamedInfo struct {
	fs.FileInfo
	name string
}

func (r renamedInfo) Name() string { return r.name }

// ioDir is an open directory: a snapshot of its entries at Open.
type ioDir struct {
	name    string
	info    fs.FileInfo
	entries []fs.DirEntry
	off     int
}

func (d *ioDir) Stat() (fs.FileInfo, error) {
	if d.name == "." {
		return renamedInfo{d.info, "."}, nil
	}
	return d.info, nil
}

func (d *ioDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: ErrIsDir}
}

func (d *ioDir) Close() error { return nil }

func (d *ioDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	if n > len(rest) {
		n = len(rest)
	}
	d.off += n
	return rest[:n], nil
}
