package mount

import (
	"errors"
	"io"
	"io/fs"

	"github.com/semfs/semfs"
)

// fileErr reports a file's error at its tree path.
func fileErr(err error, path string) error {
	var pe *fs.PathError
	if err == nil || !errors.As(err, &pe) {
		return err
	}
	return &fs.PathError{Op: pe.Op, Path: path, Err: pe.Err}
}

// wrapFile makes a backend file report tree paths in its errors, keeping
// the capabilities callers detect by type assertion.
func wrapFile(m *mnt, path string, f fs.File) fs.File {
	if m.identity {
		return f
	}
	switch f := f.(type) {
	case semfs.RWFile:
		return &rwFile{RWFile: f, path: path}
	case readAtSeeker:
		return &raFile{readAtSeeker: f, path: path}
	default:
		return &roFile{File: f, path: path}
	}
}

var (
	_ semfs.Fder = (*roFile)(nil)
	_ semfs.Fder = (*raFile)(nil)
	_ semfs.Fder = (*rwFile)(nil)
)

type readAtSeeker interface {
	fs.File
	io.ReaderAt
	io.Seeker
}

type roFile struct {
	fs.File
	path string
}

func (f *roFile) Read(b []byte) (int, error) {
	n, err := f.File.Read(b)
	return n, fileErr(err, f.path)
}
func (f *roFile) HostFd() (int, bool) { return semfs.HostFd(f.File) }
func (f *roFile) Close() error        { return fileErr(f.File.Close(), f.path) }
func (f *roFile) Stat() (fs.FileInfo, error) {
	info, err := f.File.Stat()
	return info, fileErr(err, f.path)
}

type raFile struct {
	readAtSeeker
	path string
}

func (f *raFile) Read(b []byte) (int, error) {
	n, err := f.readAtSeeker.Read(b)
	return n, fileErr(err, f.path)
}
func (f *raFile) ReadAt(b []byte, off int64) (int, error) {
	n, err := f.readAtSeeker.ReadAt(b, off)
	return n, fileErr(err, f.path)
}
func (f *raFile) Seek(off int64, whence int) (int64, error) {
	n, err := f.readAtSeeker.Seek(off, whence)
	return n, fileErr(err, f.path)
}
func (f *raFile) HostFd() (int, bool) { return semfs.HostFd(f.readAtSeeker) }
func (f *raFile) Close() error        { return fileErr(f.readAtSeeker.Close(), f.path) }
func (f *raFile) Stat() (fs.FileInfo, error) {
	info, err := f.readAtSeeker.Stat()
	return info, fileErr(err, f.path)
}

type rwFile struct {
	semfs.RWFile
	path string
}

func (f *rwFile) Read(b []byte) (int, error) {
	n, err := f.RWFile.Read(b)
	return n, fileErr(err, f.path)
}
func (f *rwFile) Write(b []byte) (int, error) {
	n, err := f.RWFile.Write(b)
	return n, fileErr(err, f.path)
}
func (f *rwFile) ReadAt(b []byte, off int64) (int, error) {
	n, err := f.RWFile.ReadAt(b, off)
	return n, fileErr(err, f.path)
}
func (f *rwFile) WriteAt(b []byte, off int64) (int, error) {
	n, err := f.RWFile.WriteAt(b, off)
	return n, fileErr(err, f.path)
}
func (f *rwFile) Seek(off int64, whence int) (int64, error) {
	n, err := f.RWFile.Seek(off, whence)
	return n, fileErr(err, f.path)
}
func (f *rwFile) Truncate(size int64) error { return fileErr(f.RWFile.Truncate(size), f.path) }
func (f *rwFile) Sync() error               { return fileErr(f.RWFile.Sync(), f.path) }
func (f *rwFile) Close() error              { return fileErr(f.RWFile.Close(), f.path) }

// HostFd implements semfs.Fder: the wrapper only renames errors, which
// reads and writes through the descriptor do not have.
func (f *rwFile) HostFd() (int, bool) { return semfs.HostFd(f.RWFile) }
func (f *rwFile) Stat() (fs.FileInfo, error) {
	info, err := f.RWFile.Stat()
	return info, fileErr(err, f.path)
}
