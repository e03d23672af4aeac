package mount_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"iter"
	"strings"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/mount"
	"github.com/semfs/semfs/semfstest"
)

// sub shows the subtree dir of a tree as a tree of its own. With dir a
// translated mount point, the conformance suite then runs through the
// mount table's path translation both ways: a path the table fails to
// rewrite in an error lacks the dir prefix and is reported as is, where the
// suite's checks of error paths catch it.
type sub struct {
	fsys semfs.FS
	dir  string
}

func (s sub) in(p string) string {
	if p == "/" || p == "." {
		return s.dir
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return s.dir + p
}

func (s sub) out(err error) error {
	var pe *fs.PathError
	if err == nil || !errors.As(err, &pe) {
		return err
	}
	path := pe.Path
	switch {
	case path == s.dir:
		path = "/"
	case strings.HasPrefix(path, s.dir+"/"):
		path = path[len(s.dir):]
	}
	return &fs.PathError{Op: pe.Op, Path: path, Err: pe.Err}
}

func (s sub) Open(ctx context.Context, n string) (fs.File, error) {
	f, err := s.fsys.Open(ctx, s.in(n))
	if err != nil {
		return nil, s.out(err)
	}
	if ra, ok := f.(readAtSeeker); ok {
		return subRA{subFile{f, s}, ra}, nil
	}
	return subFile{f, s}, nil
}

// subFile and subRW report their errors through sub.out too.
type subFile struct {
	fs.File
	s sub
}

func (f subFile) Read(b []byte) (int, error) { n, err := f.File.Read(b); return n, f.s.out(err) }
func (f subFile) Close() error               { return f.s.out(f.File.Close()) }

type readAtSeeker interface {
	io.ReaderAt
	io.Seeker
}

type subRA struct {
	subFile
	ra readAtSeeker
}

func (f subRA) ReadAt(b []byte, off int64) (int, error) {
	n, err := f.ra.ReadAt(b, off)
	return n, f.s.out(err)
}
func (f subRA) Seek(off int64, whence int) (int64, error) {
	n, err := f.ra.Seek(off, whence)
	return n, f.s.out(err)
}

type subRW struct {
	semfs.RWFile
	s sub
}

func (f subRW) Read(b []byte) (int, error)  { n, err := f.RWFile.Read(b); return n, f.s.out(err) }
func (f subRW) Write(b []byte) (int, error) { n, err := f.RWFile.Write(b); return n, f.s.out(err) }
func (f subRW) ReadAt(b []byte, off int64) (int, error) {
	n, err := f.RWFile.ReadAt(b, off)
	return n, f.s.out(err)
}
func (f subRW) WriteAt(b []byte, off int64) (int, error) {
	n, err := f.RWFile.WriteAt(b, off)
	return n, f.s.out(err)
}
func (f subRW) Seek(off int64, whence int) (int64, error) {
	n, err := f.RWFile.Seek(off, whence)
	return n, f.s.out(err)
}
func (f subRW) Truncate(size int64) error { return f.s.out(f.RWFile.Truncate(size)) }
func (f subRW) Sync() error               { return f.s.out(f.RWFile.Sync()) }
func (f subRW) Close() error              { return f.s.out(f.RWFile.Close()) }
func (s sub) Stat(ctx context.Context, n string) (fs.FileInfo, error) {
	info, err := s.fsys.Stat(ctx, s.in(n))
	return info, s.out(err)
}
func (s sub) ReadDir(ctx context.Context, n string) ([]fs.DirEntry, error) {
	e, err := s.fsys.ReadDir(ctx, s.in(n))
	return e, s.out(err)
}
func (s sub) ReadFile(ctx context.Context, n string) ([]byte, error) {
	d, err := semfs.ReadFile(ctx, s.fsys, s.in(n))
	return d, s.out(err)
}
func (s sub) WriteFile(ctx context.Context, n string, d []byte, perm fs.FileMode) error {
	return s.out(semfs.WriteFile(ctx, s.fsys, s.in(n), d, perm))
}
func (s sub) OpenFile(ctx context.Context, n string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	f, err := semfs.OpenFile(ctx, s.fsys, s.in(n), flag, perm)
	if err != nil {
		return nil, s.out(err)
	}
	return subRW{f, s}, nil
}
func (s sub) Mkdir(ctx context.Context, n string, perm fs.FileMode) error {
	return s.out(semfs.Mkdir(ctx, s.fsys, s.in(n), perm))
}
func (s sub) MkdirAll(ctx context.Context, n string, perm fs.FileMode) error {
	return s.out(semfs.MkdirAll(ctx, s.fsys, s.in(n), perm))
}

// rootOp refuses, as a tree refuses removing or moving its root.
func (s sub) rootOp(op string, paths ...string) error {
	for _, p := range paths {
		if p == "/" || p == "." {
			return semfs.PathErr(op, "/", semfs.ErrInvalid, "the root")
		}
	}
	return nil
}

func (s sub) Remove(ctx context.Context, n string) error {
	if err := s.rootOp("remove", n); err != nil {
		return err
	}
	return s.out(semfs.Remove(ctx, s.fsys, s.in(n)))
}
func (s sub) RemoveAll(ctx context.Context, n string) error {
	return s.out(semfs.RemoveAll(ctx, s.fsys, s.in(n)))
}
func (s sub) Rename(ctx context.Context, o, n string) error {
	if err := s.rootOp("rename", o, n); err != nil {
		return err
	}
	return s.out(semfs.Rename(ctx, s.fsys, s.in(o), s.in(n)))
}
func (s sub) Files(ctx context.Context, root string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for p, err := range semfs.Files(ctx, s.fsys, s.in(root)) {
			if err != nil {
				yield("", s.out(err))
				return
			}
			if !yield(p[len(s.dir):], nil) {
				return
			}
		}
	}
}
func (s sub) TotalSize(ctx context.Context) (int64, error) { return semfs.TotalSize(ctx, s.fsys) }
func (s sub) Exists(ctx context.Context, n string) (bool, error) {
	return semfs.Exists(ctx, s.fsys, s.in(n))
}

// The suite through a translated mount at /memory, next to other mounts.
func TestConformanceTranslatedMount(t *testing.T) {
	semfstest.Run(t, func(t *testing.T) semfs.FS {
		return sub{fsys: mustNew(t,
			mount.Mount{At: "/memory", FS: memfs.New()},
			mount.Mount{At: "/corpus", FS: memfs.FromMap(map[string]string{"/c": ""}), ReadOnly: true},
		), dir: "/memory"}
	})
}

// The suite through an absolute mount at /abs/data.
func TestConformanceAbsoluteMount(t *testing.T) {
	semfstest.Run(t, func(t *testing.T) semfs.FS {
		return sub{fsys: mustNew(t, mount.Mount{At: "/abs/data", FS: memfs.New(), KeepAbsolute: true}), dir: "/abs/data"}
	}, semfstest.Writers(4))
}
