package objfs

import (
	"context"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/semfs/semfs"
)

// shared is the state of one path's open writable handles: every handle of
// the path reads and writes one local spool file, as handles of one inode
// share its data, and readers of the tree see the spooled bytes before they
// are uploaded. The last Close uploads.
type shared struct {
	mu     sync.Mutex
	path   string // guarded by FS.mu (Rename moves it)
	spool  *os.File
	refs   int
	dirty  bool
	orphan bool // removed from the tree while open: never uploaded
	stored node // the last version stored in the bucket
}

// OpenFile implements semfs.OpenFileFS. Writes go to a local spool shared by
// all handles of the path and are uploaded on Sync and on the last Close.
func (f *FS) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	p, err := semfs.Clean("open", name)
	if err != nil {
		return nil, err
	}
	if p == "/" {
		return nil, semfs.PathErr("open", p, semfs.ErrIsDir, "the root is a directory")
	}
	if err := ctx.Err(); err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	if err := f.checkKey("open", p); err != nil {
		return nil, err
	}
	f.tree.RLock()
	defer f.tree.RUnlock()
	lk := f.stripe(p)
	lk.Lock()
	defer lk.Unlock()
	if err := f.prepareParents(ctx, "open", p, false); err != nil {
		return nil, err
	}
	f.mu.RLock()
	n, exists := f.nodes[p]
	var cur node
	if exists {
		cur = *n
	}
	s := f.open[p]
	f.mu.RUnlock()
	if !exists {
		if hn, herr := f.head(ctx, p); herr == nil {
			cur, exists = *hn, true
		}
	}
	switch {
	case exists && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, semfs.PathErr("open", p, semfs.ErrExist, "")
	case !exists && flag&os.O_CREATE == 0:
		return nil, semfs.PathErr("open", p, semfs.ErrNotExist, "")
	}
	truncate := flag&os.O_TRUNC != 0 && flag&(os.O_WRONLY|os.O_RDWR) != 0
	if s == nil {
		spool, err := os.CreateTemp(f.cfg.SpoolDir, "semfs-objfs-*")
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: p, Err: errSpool}
		}
		os.Remove(spool.Name()) // unlinked: nothing is left behind on a crash
		s = &shared{path: p, spool: spool, stored: cur}
		switch {
		case !exists:
			// Create the object now: open(2) with O_CREAT makes the file
			// visible at once, to this daemon and to others.
			s.dirty = true
			if err := f.upload(ctx, s, "open"); err != nil {
				spool.Close()
				return nil, err
			}
		case truncate:
			if cur.size != 0 {
				s.dirty = true
				f.touch(s)
			}
		default:
			data, err := f.fetch(ctx, "open", p, cur)
			if err != nil {
				spool.Close()
				return nil, err
			}
			if _, err := spool.WriteAt(data, 0); err != nil {
				spool.Close()
				return nil, &fs.PathError{Op: "open", Path: p, Err: errSpool}
			}
		}
		f.mu.Lock()
		f.open[p] = s
		f.mu.Unlock()
	}
	s.mu.Lock()
	s.refs++
	if truncate {
		if st, err := s.spool.Stat(); err == nil && st.Size() != 0 {
			s.spool.Truncate(0)
			s.dirty = true
			f.touch(s)
		}
	}
	s.mu.Unlock()
	return &wfile{f: f, s: s, ctx: context.WithoutCancel(ctx), flag: flag}, nil
}

// touch records a spooled change in the structural index (caller holds s.mu).
func (f *FS) touch(s *shared) {
	st, err := s.spool.Stat()
	if err != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if s.orphan {
		return
	}
	if n, ok := f.nodes[s.path]; ok && !n.dir {
		f.total += st.Size() - n.size
		n.size = st.Size()
		n.mtime = time.Now()
		n.etag = ""
	}
}

// upload stores the spool in the bucket if it changed (caller holds s.mu,
// or owns s exclusively). On failure the bucket keeps the previous version.
func (f *FS) upload(ctx context.Context, s *shared, op string) error {
	if !s.dirty || s.orphan {
		return nil
	}
	st, err := s.spool.Stat()
	if err != nil {
		return &fs.PathError{Op: op, Path: s.path, Err: errSpool}
	}
	f.mu.RLock()
	p := s.path
	f.mu.RUnlock()
	stored, err := f.put(ctx, op, p, io.NewSectionReader(s.spool, 0, st.Size()), st.Size())
	if err != nil {
		return err
	}
	s.stored = stored
	s.dirty = false
	return nil
}

// spoolData returns the contents of p's spool if p is open for writing.
func (f *FS) spoolData(p string) ([]byte, bool, error) {
	f.mu.RLock()
	s := f.open[p]
	f.mu.RUnlock()
	if s == nil {
		return nil, false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.spool.Stat()
	if err != nil {
		return nil, true, &fs.PathError{Op: "read", Path: p, Err: errSpool}
	}
	data := make([]byte, st.Size())
	if _, err := s.spool.ReadAt(data, 0); err != nil && err != io.EOF {
		return nil, true, &fs.PathError{Op: "read", Path: p, Err: errSpool}
	}
	return data, true, nil
}

var errSpool = spoolError{}

type spoolError struct{}

func (spoolError) Error() string {
	return "cannot use the local spool file; check free space in the spool directory"
}

// wfile is one open handle: its own offset and flags over the shared spool.
type wfile struct {
	f    *FS
	s    *shared
	ctx  context.Context
	flag int
	off  int64
	done bool
}

var _ semfs.RWFile = (*wfile)(nil)

func (w *wfile) path() string {
	w.f.mu.RLock()
	defer w.f.mu.RUnlock()
	return w.s.path
}

func (w *wfile) check(op string, write bool) error {
	switch {
	case w.done:
		return semfs.PathErr(op, w.path(), fs.ErrClosed, "")
	case write && w.flag&(os.O_WRONLY|os.O_RDWR) == 0:
		return semfs.PathErr(op, w.path(), semfs.ErrPermission, "file not opened for writing")
	case !write && w.flag&os.O_WRONLY != 0:
		return semfs.PathErr(op, w.path(), semfs.ErrPermission, "file not opened for reading")
	}
	return nil
}

func (w *wfile) spoolErr(op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	return &fs.PathError{Op: op, Path: w.path(), Err: errSpool}
}

func (w *wfile) Stat() (fs.FileInfo, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if w.done {
		return nil, semfs.PathErr("stat", w.path(), fs.ErrClosed, "")
	}
	st, err := w.s.spool.Stat()
	if err != nil {
		return nil, w.spoolErr("stat", err)
	}
	return fileInfo{name: semfs.BaseName(w.path()), size: st.Size(), mtime: st.ModTime()}, nil
}

func (w *wfile) Read(b []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if err := w.check("read", false); err != nil {
		return 0, err
	}
	n, err := w.s.spool.ReadAt(b, w.off)
	w.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, w.spoolErr("read", err)
}

func (w *wfile) ReadAt(b []byte, off int64) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if err := w.check("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, semfs.PathErr("read", w.path(), semfs.ErrInvalid, "negative offset")
	}
	n, err := w.s.spool.ReadAt(b, off)
	return n, w.spoolErr("read", err)
}

func (w *wfile) Write(b []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if err := w.check("write", true); err != nil {
		return 0, err
	}
	if w.flag&os.O_APPEND != 0 {
		st, err := w.s.spool.Stat()
		if err != nil {
			return 0, w.spoolErr("write", err)
		}
		w.off = st.Size()
	}
	n, err := w.s.spool.WriteAt(b, w.off)
	w.off += int64(n)
	w.s.dirty = true
	w.f.touch(w.s)
	return n, w.spoolErr("write", err)
}

func (w *wfile) WriteAt(b []byte, off int64) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if err := w.check("write", true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, semfs.PathErr("write", w.path(), semfs.ErrInvalid, "negative offset")
	}
	n, err := w.s.spool.WriteAt(b, off)
	w.s.dirty = true
	w.f.touch(w.s)
	return n, w.spoolErr("write", err)
}

func (w *wfile) Seek(off int64, whence int) (int64, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if w.done {
		return 0, semfs.PathErr("seek", w.path(), fs.ErrClosed, "")
	}
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = w.off
	case io.SeekEnd:
		st, err := w.s.spool.Stat()
		if err != nil {
			return 0, w.spoolErr("seek", err)
		}
		base = st.Size()
	default:
		return 0, semfs.PathErr("seek", w.path(), semfs.ErrInvalid, "bad whence")
	}
	if base+off < 0 {
		return 0, semfs.PathErr("seek", w.path(), semfs.ErrInvalid, "negative offset")
	}
	w.off = base + off
	return w.off, nil
}

func (w *wfile) Truncate(size int64) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if err := w.check("truncate", true); err != nil {
		return err
	}
	if size < 0 {
		return semfs.PathErr("truncate", w.path(), semfs.ErrInvalid, "negative size")
	}
	err := w.s.spool.Truncate(size)
	w.s.dirty = true
	w.f.touch(w.s)
	return w.spoolErr("truncate", err)
}

// Sync uploads the file if it changed since the last upload; when it returns
// nil the contents are stored in the bucket.
func (w *wfile) Sync() error {
	if w.done {
		return semfs.PathErr("sync", w.path(), fs.ErrClosed, "")
	}
	w.f.tree.RLock()
	defer w.f.tree.RUnlock()
	lk := w.f.stripe(w.path())
	lk.Lock()
	defer lk.Unlock()
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.f.upload(w.ctx, w.s, "sync")
}

// Close releases the handle; the last Close of a path uploads pending
// changes. If that upload fails, the bucket and the tree keep the previous
// version and Close reports why.
func (w *wfile) Close() error {
	if w.done {
		return semfs.PathErr("close", w.path(), fs.ErrClosed, "")
	}
	f, s := w.f, w.s
	f.tree.RLock()
	defer f.tree.RUnlock()
	lk := f.stripe(w.path())
	lk.Lock()
	defer lk.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	w.done = true
	s.refs--
	if s.refs > 0 {
		return nil
	}
	err := f.upload(w.ctx, s, "close")
	f.mu.Lock()
	if f.open[s.path] == s {
		delete(f.open, s.path)
	}
	if err != nil && !s.orphan {
		// Revert the index to what the bucket holds.
		if n, ok := f.nodes[s.path]; ok && !n.dir {
			f.total += s.stored.size - n.size
			*n = s.stored
		}
	}
	f.mu.Unlock()
	s.spool.Close()
	return err
}
