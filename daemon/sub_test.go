package daemon_test

import (
	"context"
	"errors"
	"io"
	"io/fs"

	"github.com/semfs/semfs"
)

// subFS is the subtree dir of a tree as a tree of its own, so that the
// conformance cases can share one daemon, each in a fresh directory. Only
// what the suite uses is forwarded; errors name paths as the subtree sees
// them.
type subFS struct {
	base semfs.FS
	dir  string
}

func (s subFS) in(op, name string) (string, error) {
	p, err := semfs.Clean(op, name)
	if err != nil {
		return "", err
	}
	if p == "/" {
		return s.dir, nil
	}
	return s.dir + p, nil
}

func (s subFS) out(err error, name string) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		p, _ := semfs.Clean("x", name)
		if p == "" {
			p = name
		}
		return &fs.PathError{Op: pe.Op, Path: p, Err: pe.Err}
	}
	return err
}

func (s subFS) Open(ctx context.Context, name string) (fs.File, error) {
	p, err := s.in("open", name)
	if err != nil {
		return nil, err
	}
	f, err := s.base.Open(ctx, p)
	if err != nil {
		return nil, s.out(err, name)
	}
	return subFile{f.(semfs.RWFile), s, name}, nil
}

func (s subFS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	p, err := s.in("stat", name)
	if err != nil {
		return nil, err
	}
	info, err := s.base.Stat(ctx, p)
	return info, s.out(err, name)
}

func (s subFS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	p, err := s.in("readdir", name)
	if err != nil {
		return nil, err
	}
	es, err := s.base.ReadDir(ctx, p)
	return es, s.out(err, name)
}

func (s subFS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	p, err := s.in("read", name)
	if err != nil {
		return nil, err
	}
	b, err := semfs.ReadFile(ctx, s.base, p)
	return b, s.out(err, name)
}

func (s subFS) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	p, err := s.in("write", name)
	if err != nil {
		return err
	}
	if p == s.dir {
		return semfs.PathErr("write", "/", semfs.ErrIsDir, "")
	}
	return s.out(semfs.WriteFile(ctx, s.base, p, data, perm), name)
}

func (s subFS) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	p, err := s.in("open", name)
	if err != nil {
		return nil, err
	}
	f, err := semfs.OpenFile(ctx, s.base, p, flag, perm)
	if err != nil {
		return nil, s.out(err, name)
	}
	return subFile{f, s, name}, nil
}

func (s subFS) Mkdir(ctx context.Context, name string, perm fs.FileMode) error {
	p, err := s.in("mkdir", name)
	if err != nil {
		return err
	}
	if p == s.dir {
		return semfs.PathErr("mkdir", "/", semfs.ErrExist, "")
	}
	return s.out(semfs.Mkdir(ctx, s.base, p, perm), name)
}

func (s subFS) MkdirAll(ctx context.Context, name string, perm fs.FileMode) error {
	p, err := s.in("mkdir", name)
	if err != nil {
		return err
	}
	return s.out(semfs.MkdirAll(ctx, s.base, p, perm), name)
}

func (s subFS) Remove(ctx context.Context, name string) error {
	p, err := s.in("remove", name)
	if err != nil {
		return err
	}
	if p == s.dir {
		return semfs.PathErr("remove", "/", semfs.ErrInvalid, "the root cannot be removed")
	}
	return s.out(semfs.Remove(ctx, s.base, p), name)
}

func (s subFS) RemoveAll(ctx context.Context, name string) error {
	p, err := s.in("removeall", name)
	if err != nil {
		return err
	}
	if p == s.dir {
		// Removing the root removes its children.
		es, err := s.base.ReadDir(ctx, p)
		if err != nil {
			return s.out(err, name)
		}
		for _, e := range es {
			if err := semfs.RemoveAll(ctx, s.base, semfs.Join(p, e.Name())); err != nil {
				return s.out(err, "/"+e.Name())
			}
		}
		return nil
	}
	return s.out(semfs.RemoveAll(ctx, s.base, p), name)
}

func (s subFS) Rename(ctx context.Context, oldname, newname string) error {
	o, err := s.in("rename", oldname)
	if err != nil {
		return err
	}
	n, err := s.in("rename", newname)
	if err != nil {
		return err
	}
	if o == s.dir || n == s.dir {
		return semfs.PathErr("rename", "/", semfs.ErrInvalid, "the root cannot be moved or replaced")
	}
	return s.out(semfs.Rename(ctx, s.base, o, n), oldname)
}

// subFile rewrites the paths in its errors to the subtree's view.
type subFile struct {
	f    semfs.RWFile
	s    subFS
	name string
}

func (f subFile) Stat() (fs.FileInfo, error) { i, err := f.f.Stat(); return i, f.s.out(err, f.name) }
func (f subFile) Read(p []byte) (int, error) { n, err := f.f.Read(p); return n, f.err(err) }
func (f subFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.f.ReadAt(p, off)
	return n, f.err(err)
}
func (f subFile) Write(p []byte) (int, error) { n, err := f.f.Write(p); return n, f.err(err) }
func (f subFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.f.WriteAt(p, off)
	return n, f.err(err)
}
func (f subFile) Seek(off int64, whence int) (int64, error) {
	n, err := f.f.Seek(off, whence)
	return n, f.err(err)
}
func (f subFile) Truncate(size int64) error { return f.err(f.f.Truncate(size)) }
func (f subFile) Sync() error               { return f.err(f.f.Sync()) }
func (f subFile) Close() error              { return f.err(f.f.Close()) }

// err keeps io.EOF as it is (callers compare it with ==).
func (f subFile) err(err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	return f.s.out(err, f.name)
}
