package client

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/wire"
)

// FS returns the daemon's tree as a semfs.FS. Files are read and written
// by offset, one socket round trip per call (in chunks of wire.MaxChunk),
// so an open file sees other writers' changes as a file on a shared disk
// does. WriteFile of more than wire.MaxChunk bytes is not atomic. For the
// no-op client, FS is an empty read-only tree.
func (c *Client) FS() semfs.FS {
	if c.NoOp() {
		return emptyFS{}
	}
	return &remoteFS{c: c}
}

type remoteFS struct{ c *Client }

// call validates name, runs op, and keeps the contract's error shape: a
// cancelled context or a transport failure comes back as a *fs.PathError
// naming the path.
func (r *remoteFS) call(ctx context.Context, op, name string, args, out any) (string, error) {
	p, err := semfs.Clean(op, name)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return p, semfs.PathErr(op, p, err, "")
	}
	err = r.c.Call(ctx, op, args, out)
	var pe *fs.PathError
	if err != nil && !errors.As(err, &pe) {
		err = &fs.PathError{Op: op, Path: p, Err: err}
	}
	return p, err
}

var (
	_ semfs.ReadFileFS  = (*remoteFS)(nil)
	_ semfs.WriteFileFS = (*remoteFS)(nil)
	_ semfs.OpenFileFS  = (*remoteFS)(nil)
	_ semfs.MkdirFS     = (*remoteFS)(nil)
	_ semfs.MkdirAllFS  = (*remoteFS)(nil)
	_ semfs.RemoveFS    = (*remoteFS)(nil)
	_ semfs.RemoveAllFS = (*remoteFS)(nil)
	_ semfs.RenameFS    = (*remoteFS)(nil)
	_ semfs.MetaFS      = (*remoteFS)(nil)
	_ semfs.QueryFS     = (*remoteFS)(nil)
	_ semfs.SearchFS    = (*remoteFS)(nil)
	_ semfs.RelatedFS   = (*remoteFS)(nil)
)

// info is a wire.Stat as an fs.FileInfo and fs.DirEntry.
type info struct{ s wire.Stat }

func (i info) Name() string               { return i.s.Name }
func (i info) Size() int64                { return i.s.Size }
func (i info) Mode() fs.FileMode          { return i.s.Mode }
func (i info) ModTime() time.Time         { return i.s.ModTime }
func (i info) IsDir() bool                { return i.s.IsDir }
func (i info) Sys() any                   { return nil }
func (i info) Type() fs.FileMode          { return i.s.Mode.Type() }
func (i info) Info() (fs.FileInfo, error) { return i, nil }

func (r *remoteFS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	var s wire.Stat
	if _, err := r.call(ctx, wire.OpStat, name, wire.PathArgs{Path: name}, &s); err != nil {
		return nil, err
	}
	return info{s}, nil
}

func (r *remoteFS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	var list []wire.Stat
	if _, err := r.call(ctx, wire.OpList, name, wire.PathArgs{Path: name}, &list); err != nil {
		return nil, err
	}
	out := make([]fs.DirEntry, len(list))
	for i, s := range list {
		out[i] = info{s}
	}
	return out, nil
}

func (r *remoteFS) Open(ctx context.Context, name string) (fs.File, error) {
	var s wire.Stat
	if _, err := r.call(ctx, wire.OpOpen, name, wire.OpenArgs{Path: name, Flag: os.O_RDONLY}, &s); err != nil {
		return nil, err
	}
	return &file{r: r, ctx: context.WithoutCancel(ctx), path: s.Path, flag: os.O_RDONLY}, nil
}

func (r *remoteFS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	var out []byte
	for off := int64(0); ; {
		var res wire.ReadResult
		if _, err := r.call(ctx, wire.OpRead, name, wire.ReadArgs{Path: name, Offset: off, Length: wire.MaxChunk}, &res); err != nil {
			return nil, err
		}
		out = append(out, res.Data...)
		off += int64(len(res.Data))
		if res.EOF || len(res.Data) == 0 {
			if out == nil {
				out = []byte{}
			}
			return out, nil
		}
	}
}

func (r *remoteFS) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	first := data[:min(len(data), wire.MaxChunk)]
	if _, err := r.call(ctx, wire.OpWrite, name, wire.WriteArgs{Path: name, Data: first, Whole: true, Perm: perm}, nil); err != nil {
		return err
	}
	for off := len(first); off < len(data); off += wire.MaxChunk {
		chunk := data[off:min(len(data), off+wire.MaxChunk)]
		if _, err := r.call(ctx, wire.OpWrite, name, wire.WriteArgs{Path: name, Data: chunk, Offset: int64(off)}, nil); err != nil {
			return err
		}
	}
	return nil
}

func (r *remoteFS) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	var s wire.Stat
	if _, err := r.call(ctx, wire.OpOpen, name, wire.OpenArgs{Path: name, Flag: flag, Perm: perm}, &s); err != nil {
		return nil, err
	}
	return &file{r: r, ctx: context.WithoutCancel(ctx), path: s.Path, flag: flag}, nil
}

func (r *remoteFS) Mkdir(ctx context.Context, name string, perm fs.FileMode) error {
	_, err := r.call(ctx, wire.OpMkdir, name, wire.MkdirArgs{Path: name, Perm: perm}, nil)
	return err
}

func (r *remoteFS) MkdirAll(ctx context.Context, name string, perm fs.FileMode) error {
	_, err := r.call(ctx, wire.OpMkdir, name, wire.MkdirArgs{Path: name, Perm: perm, All: true}, nil)
	return err
}

func (r *remoteFS) Remove(ctx context.Context, name string) error {
	_, err := r.call(ctx, wire.OpRemove, name, wire.RemoveArgs{Path: name}, nil)
	return err
}

func (r *remoteFS) RemoveAll(ctx context.Context, name string) error {
	_, err := r.call(ctx, wire.OpRemove, name, wire.RemoveArgs{Path: name, All: true}, nil)
	return err
}

func (r *remoteFS) Rename(ctx context.Context, oldname, newname string) error {
	if _, err := semfs.Clean("rename", newname); err != nil {
		return err
	}
	_, err := r.call(ctx, wire.OpRename, oldname, wire.RenameArgs{Old: oldname, New: newname}, nil)
	return err
}

func (r *remoteFS) Meta(ctx context.Context, name string) (semfs.Meta, error) {
	s, err := r.c.Stat(ctx, name)
	if err != nil {
		return semfs.Meta{}, err
	}
	if s.Meta != nil {
		return *s.Meta, nil
	}
	return semfs.Meta{Path: s.Path, CreatedAt: s.ModTime, UpdatedAt: s.ModTime, Size: s.Size}, nil
}

func (r *remoteFS) SetTags(ctx context.Context, name string, tags semfs.Tags) error {
	_, err := r.call(ctx, wire.OpTag, name, wire.TagArgs{Path: name, Tags: tags}, nil)
	return err
}

func (r *remoteFS) Query(ctx context.Context, text string, limit int) ([]semfs.QueryResult, error) {
	return r.c.Query(ctx, text, limit)
}

func (r *remoteFS) Search(ctx context.Context, req semfs.SearchRequest, fn func(semfs.SearchHit) error) (string, error) {
	hits, next, err := r.c.Search(ctx, req)
	if err != nil {
		return "", err
	}
	for _, h := range hits {
		if err := fn(h); err != nil {
			return "", err
		}
	}
	return next, nil
}

func (r *remoteFS) Related(ctx context.Context, name string, limit int) ([]semfs.Candidate, error) {
	return r.c.Related(ctx, name, limit)
}

// file is an open remote file: a path, a position and the open flags.
type file struct {
	r    *remoteFS
	ctx  context.Context
	path string
	flag int

	mu     sync.Mutex
	pos    int64
	closed bool
	// ahead holds bytes read ahead of sequential Reads, from offset
	// aheadAt; any write through the handle drops it.
	ahead   []byte
	aheadAt int64
}

// readAhead is how much a sequential Read fetches at least.
const readAhead = 64 << 10

var _ semfs.RWFile = (*file)(nil)

func (f *file) check(op string, write bool) error {
	if f.closed {
		return semfs.PathErr(op, f.path, fs.ErrClosed, "")
	}
	acc := f.flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
	if write && acc == os.O_RDONLY {
		return semfs.PathErr(op, f.path, semfs.ErrPermission, "file not opened for writing")
	}
	if !write && acc == os.O_WRONLY {
		return semfs.PathErr(op, f.path, semfs.ErrPermission, "file not opened for reading")
	}
	return nil
}

func (f *file) Stat() (fs.FileInfo, error) {
	if f.closed {
		return nil, semfs.PathErr("stat", f.path, fs.ErrClosed, "")
	}
	return f.r.Stat(f.ctx, f.path)
}

func (f *file) readAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		var res wire.ReadResult
		want := min(len(p)-n, wire.MaxChunk)
		if _, err := f.r.call(f.ctx, wire.OpRead, f.path, wire.ReadArgs{Path: f.path, Offset: off + int64(n), Length: want}, &res); err != nil {
			return n, err
		}
		n += copy(p[n:], res.Data)
		if res.EOF || len(res.Data) == 0 {
			if n < len(p) {
				return n, io.EOF
			}
			break
		}
	}
	return n, nil
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, semfs.PathErr("read", f.path, semfs.ErrInvalid, "negative offset")
	}
	return f.readAt(p, off)
}

func (f *file) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if f.pos < f.aheadAt || f.pos >= f.aheadAt+int64(len(f.ahead)) {
		buf := make([]byte, max(len(p), readAhead))
		n, err := f.readAt(buf, f.pos)
		if err != nil && !errors.Is(err, io.EOF) {
			f.ahead = nil
			return 0, err
		}
		f.ahead, f.aheadAt = buf[:n], f.pos
		if n == 0 {
			return 0, io.EOF
		}
	}
	n := copy(p, f.ahead[f.pos-f.aheadAt:])
	f.pos += int64(n)
	return n, nil
}

func (f *file) writeAt(p []byte, off int64, appendMode bool) (int, error) {
	f.ahead = nil
	n := 0
	for n < len(p) || (len(p) == 0 && n == 0) {
		chunk := p[n:min(len(p), n+wire.MaxChunk)]
		args := wire.WriteArgs{Path: f.path, Data: chunk, Offset: off + int64(n), Append: appendMode}
		if _, err := f.r.call(f.ctx, wire.OpWrite, f.path, args, nil); err != nil {
			return n, err
		}
		n += len(chunk)
		if len(p) == 0 {
			break
		}
	}
	return n, nil
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, semfs.PathErr("write", f.path, semfs.ErrInvalid, "negative offset")
	}
	return f.writeAt(p, off, false)
}

func (f *file) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	if f.flag&os.O_APPEND != 0 {
		n, err := f.writeAt(p, 0, true)
		if err == nil {
			if info, serr := f.r.Stat(f.ctx, f.path); serr == nil {
				f.pos = info.Size()
			}
		}
		return n, err
	}
	n, err := f.writeAt(p, f.pos, false)
	f.pos += int64(n)
	return n, err
}

func (f *file) Seek(offset int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, semfs.PathErr("seek", f.path, fs.ErrClosed, "")
	}
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = f.pos
	case io.SeekEnd:
		info, err := f.r.Stat(f.ctx, f.path)
		if err != nil {
			return 0, err
		}
		base = info.Size()
	default:
		return 0, semfs.PathErr("seek", f.path, semfs.ErrInvalid, "bad whence")
	}
	if base+offset < 0 {
		return 0, semfs.PathErr("seek", f.path, semfs.ErrInvalid, "negative position")
	}
	f.pos = base + offset
	return f.pos, nil
}

func (f *file) Truncate(size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("truncate", true); err != nil {
		return err
	}
	f.ahead = nil
	_, err := f.r.call(f.ctx, wire.OpTruncate, f.path, wire.TruncateArgs{Path: f.path, Size: size}, nil)
	return err
}

func (f *file) Sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return semfs.PathErr("sync", f.path, fs.ErrClosed, "")
	}
	if f.flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		return nil
	}
	_, err := f.r.call(f.ctx, wire.OpSync, f.path, wire.PathArgs{Path: f.path}, nil)
	return err
}

func (f *file) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return semfs.PathErr("close", f.path, fs.ErrClosed, "")
	}
	f.closed = true
	return nil
}

// emptyFS is the no-op client's tree: an empty root.
type emptyFS struct{}

type rootInfo struct{}

func (rootInfo) Name() string       { return "/" }
func (rootInfo) Size() int64        { return 0 }
func (rootInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o755 }
func (rootInfo) ModTime() time.Time { return time.Time{} }
func (rootInfo) IsDir() bool        { return true }
func (rootInfo) Sys() any           { return nil }

func (emptyFS) Open(ctx context.Context, name string) (fs.File, error) {
	p, err := semfs.Clean("open", name)
	if err != nil {
		return nil, err
	}
	if p == "/" {
		return nil, semfs.PathErr("open", p, semfs.ErrIsDir, "")
	}
	return nil, semfs.PathErr("open", p, semfs.ErrNotExist, "no semfs daemon configured")
}

func (emptyFS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	p, err := semfs.Clean("stat", name)
	if err != nil {
		return nil, err
	}
	if p == "/" {
		return rootInfo{}, nil
	}
	return nil, semfs.PathErr("stat", p, semfs.ErrNotExist, "no semfs daemon configured")
}

func (emptyFS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	p, err := semfs.Clean("readdir", name)
	if err != nil {
		return nil, err
	}
	if p == "/" {
		return nil, nil
	}
	return nil, semfs.PathErr("readdir", p, semfs.ErrNotExist, "no semfs daemon configured")
}
