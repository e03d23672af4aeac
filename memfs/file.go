package memfs

import (
	"context"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/semfs/semfs"
)

// ChunkSize is the size of the pieces file contents are stored in.
const ChunkSize = 64 << 10

// chunk holds bytes [i*ChunkSize, i*ChunkSize+len(b)) of a file; the rest of
// its range, up to the file's size, reads as zeros. A nil *chunk is all
// zeros. Once shared is set (by a snapshot or an open reader) the chunk is
// immutable: writers replace it with a copy.
type chunk struct {
	b      []byte
	shared atomic.Bool
}

// content is what a non-empty file holds.
type content struct {
	chunks []*chunk // ceil(size/ChunkSize) entries
	size   int64
}

// size returns the length of the file n.
func (n *node) size() int64 {
	if n.data == nil {
		return 0
	}
	return n.data.size
}

// readAt copies the bytes at off into p; c may be nil (an empty file).
func (c *content) readAt(p []byte, off int64) int {
	if c == nil {
		return 0
	}
	return readChunks(c.chunks, c.size, p, off)
}

// readChunks copies the bytes [off, off+len(p)) of a file of the given size
// into p and returns how many it copied (0 at or past the end).
func readChunks(chunks []*chunk, size int64, p []byte, off int64) int {
	if off >= size || off < 0 {
		return 0
	}
	n := int(min(int64(len(p)), size-off))
	p = p[:n]
	for len(p) > 0 {
		i, o := off/ChunkSize, int(off%ChunkSize)
		k := min(ChunkSize-o, len(p))
		copied := 0
		if c := chunks[i]; c != nil && o < len(c.b) {
			copied = copy(p[:k], c.b[o:])
		}
		clear(p[copied:k])
		p = p[k:]
		off += int64(k)
	}
	return n
}

// chunksOf copies data into fresh chunks.
func chunksOf(data []byte) []*chunk {
	if len(data) == 0 {
		return nil
	}
	out := make([]*chunk, 0, (len(data)+ChunkSize-1)/ChunkSize)
	for len(data) > 0 {
		k := min(ChunkSize, len(data))
		out = append(out, &chunk{b: slices.Clone(data[:k])})
		data = data[k:]
	}
	return out
}

// setSize grows or shrinks the file n to size bytes. The caller holds the
// write lock.
func (f *FS) setSize(n *node, size int64) {
	old := n.size()
	if size == old {
		return
	}
	if !n.gone {
		f.total.Add(size - old)
	}
	if size == 0 {
		n.data = nil
		return
	}
	if n.data == nil {
		n.data = &content{}
	}
	d := n.data
	nc := int((size + ChunkSize - 1) / ChunkSize)
	if size < old {
		clear(d.chunks[nc:])
		d.chunks = d.chunks[:nc]
		if rem := int(size % ChunkSize); rem != 0 {
			if c := d.chunks[nc-1]; c != nil && len(c.b) > rem {
				if c.shared.Load() {
					d.chunks[nc-1] = &chunk{b: slices.Clone(c.b[:rem])}
				} else {
					c.b = c.b[:rem:rem] // cut cap too: bytes past rem must read as zeros later
				}
			}
		}
	} else if nc > len(d.chunks) {
		d.chunks = append(d.chunks, make([]*chunk, nc-len(d.chunks))...)
	}
	d.size = size
}

// writeAt writes p at off into the file n, growing it as needed. The caller
// holds the write lock.
func (f *FS) writeAt(n *node, p []byte, off int64) {
	if end := off + int64(len(p)); end > n.size() {
		f.setSize(n, end)
	}
	for len(p) > 0 {
		i, o := off/ChunkSize, int(off%ChunkSize)
		k := min(ChunkSize-o, len(p))
		need := o + k
		c := n.data.chunks[i]
		switch {
		case c == nil || c.shared.Load() || cap(c.b) < need:
			var old []byte
			if c != nil {
				old = c.b
			}
			l := max(need, len(old))
			capacity := l
			if need > len(old) { // growing: amortise appends
				capacity = min(ChunkSize, max(l, 2*len(old)))
			}
			nb := make([]byte, l, capacity)
			copy(nb, old)
			c = &chunk{b: nb}
			n.data.chunks[i] = c
		case need > len(c.b):
			old := len(c.b)
			c.b = c.b[:need]
			if o > old {
				clear(c.b[old:o])
			}
		}
		copy(c.b[o:], p[:k])
		p = p[k:]
		off += int64(k)
	}
	n.mtime = f.stamp()
}

// ReadFile returns a copy of the contents of the file name.
func (f *FS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	p, err := begin(ctx, "read", name)
	if err != nil {
		return nil, err
	}
	f.mu.RLock()
	n, err := f.find(p)
	if err != nil {
		f.mu.RUnlock()
		return nil, semfs.PathErr("read", p, err, "")
	}
	if n.isDir() {
		f.mu.RUnlock()
		return nil, semfs.PathErr("read", p, semfs.ErrIsDir, "")
	}
	size := n.size()
	if size <= readUnderLock {
		buf := make([]byte, size)
		n.data.readAt(buf, 0)
		f.mu.RUnlock()
		return buf, nil
	}
	// A large file: take its chunks (shared from now on, so writers copy
	// before they change one) and copy them out after releasing the lock,
	// so writers do not wait for the copy.
	view := shareChunks(n.data)
	f.mu.RUnlock()
	if testHookUnlockedRead != nil {
		testHookUnlockedRead()
	}
	buf := make([]byte, size)
	view.readAt(buf, 0)
	return buf, nil
}

// testHookUnlockedRead, when set by a test, runs in ReadFile between
// releasing the lock and copying a large file out.
var testHookUnlockedRead func()

// readUnderLock is the size up to which ReadFile copies under the read lock;
// larger files are copied after it is released (see shareChunks).
const readUnderLock = 4 * ChunkSize

// shareChunks returns an immutable view of c: its chunks, marked shared so
// that writers replace rather than change them. The caller holds a lock.
func shareChunks(c *content) *content {
	if c == nil {
		return nil
	}
	chunks := slices.Clone(c.chunks)
	for _, ch := range chunks {
		if ch != nil {
			ch.shared.Store(true)
		}
	}
	return &content{chunks: chunks, size: c.size}
}

// WriteFile replaces the contents of name with a copy of data, creating the
// file and its missing parents. The replacement is atomic: readers see the
// old bytes or the new.
func (f *FS) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	p, err := begin(ctx, "write", name)
	if err != nil {
		return err
	}
	if p == "/" {
		return semfs.PathErr("write", p, semfs.ErrIsDir, "the root is a directory")
	}
	chunks := chunksOf(data) // copy outside the lock
	dir, base := semfs.Split(p)
	f.mu.Lock()
	defer f.mu.Unlock()
	d, err := f.mkdirs(dir, 0o755)
	if err != nil {
		return semfs.PathErr("write", p, err, "a parent is a file")
	}
	c, i := d.child(base)
	now := f.stamp()
	if c == nil {
		c = &node{name: strings.Clone(base), mode: perm.Perm(), mtime: now}
		f.insert(d, i, c)
	} else if c.isDir() {
		return semfs.PathErr("write", p, semfs.ErrIsDir, "")
	}
	f.total.Add(int64(len(data)) - c.size())
	c.data, c.mtime = nil, now
	if len(data) > 0 {
		c.data = &content{chunks: chunks, size: int64(len(data))}
	}
	return nil
}

// Open opens the file name for reading. The file reads the contents it had
// when it was opened, whatever is written afterwards.
func (f *FS) Open(ctx context.Context, name string) (fs.File, error) {
	p, err := begin(ctx, "open", name)
	if err != nil {
		return nil, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	n, err := f.find(p)
	if err != nil {
		return nil, semfs.PathErr("open", p, err, "")
	}
	if n.isDir() {
		return nil, semfs.PathErr("open", p, semfs.ErrIsDir, "list a directory with ReadDir")
	}
	var chunks []*chunk
	if view := shareChunks(n.data); view != nil {
		chunks = view.chunks
	}
	return &reader{path: p, info: infoOf(n), chunks: chunks}, nil
}

// reader is a file opened by Open: an immutable view of its contents.
type reader struct {
	path   string
	info   fileInfo
	chunks []*chunk

	mu     sync.Mutex
	off    int64
	closed bool
}

var (
	_ semfs.ReadAtFile = (*reader)(nil)
	_ io.Seeker        = (*reader)(nil)
)

func (r *reader) Stat() (fs.FileInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errClosed("stat", r.path)
	}
	info := r.info
	return &info, nil
}

func (r *reader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, errClosed("read", r.path)
	}
	if len(p) == 0 {
		return 0, nil
	}
	n := readChunks(r.chunks, r.info.size, p, r.off)
	r.off += int64(n)
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return 0, errClosed("read", r.path)
	}
	if off < 0 {
		return 0, semfs.PathErr("read", r.path, semfs.ErrInvalid, "negative offset")
	}
	n := readChunks(r.chunks, r.info.size, p, off)
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (r *reader) Seek(offset int64, whence int) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, errClosed("seek", r.path)
	}
	off, err := seek(r.path, r.off, r.info.size, offset, whence)
	if err == nil {
		r.off = off
	}
	return off, err
}

func (r *reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errClosed("close", r.path)
	}
	r.closed = true
	return nil
}

func seek(path string, cur, size, offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += cur
	case io.SeekEnd:
		offset += size
	default:
		return cur, semfs.PathErr("seek", path, semfs.ErrInvalid, "bad whence")
	}
	if offset < 0 {
		return cur, semfs.PathErr("seek", path, semfs.ErrInvalid, "negative offset")
	}
	return offset, nil
}

func errClosed(op, path string) error {
	return semfs.PathErr(op, path, semfs.ErrInvalid, "file already closed")
}

// OpenFile opens name for random-access reading and writing (see
// [semfs.OpenFileFS]). Missing parents are not created.
func (f *FS) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	p, err := begin(ctx, "open", name)
	if err != nil {
		return nil, err
	}
	if p == "/" {
		return nil, semfs.PathErr("open", p, semfs.ErrIsDir, "the root is a directory")
	}
	acc := flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
	f.mu.Lock()
	defer f.mu.Unlock()
	dir, base, err := f.parent(p)
	if err != nil {
		return nil, semfs.PathErr("open", p, err, "")
	}
	n, i := dir.child(base)
	switch {
	case n == nil && flag&os.O_CREATE == 0:
		return nil, semfs.PathErr("open", p, semfs.ErrNotExist, "")
	case n == nil:
		n = &node{name: strings.Clone(base), mode: perm.Perm(), mtime: f.stamp()}
		f.insert(dir, i, n)
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		return nil, semfs.PathErr("open", p, semfs.ErrExist, "")
	case n.isDir():
		return nil, semfs.PathErr("open", p, semfs.ErrIsDir, "")
	case flag&os.O_TRUNC != 0 && acc != os.O_RDONLY:
		f.setSize(n, 0)
		n.mtime = f.stamp()
	}
	return &file{fsys: f, n: n, path: p, acc: acc, append: flag&os.O_APPEND != 0}, nil
}

// file is a file opened by OpenFile. It works on the live node: writes are
// seen by every later reader.
type file struct {
	fsys   *FS
	n      *node
	path   string
	acc    int
	append bool

	mu     sync.Mutex
	off    int64
	closed bool
}

var _ semfs.RWFile = (*file)(nil)

func (h *file) check(op string, write bool) error {
	if h.closed {
		return errClosed(op, h.path)
	}
	if write && h.acc == os.O_RDONLY {
		return semfs.PathErr(op, h.path, semfs.ErrInvalid, "file not opened for writing")
	}
	if !write && h.acc == os.O_WRONLY {
		return semfs.PathErr(op, h.path, semfs.ErrInvalid, "file not opened for reading")
	}
	return nil
}

func (h *file) Stat() (fs.FileInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errClosed("stat", h.path)
	}
	h.fsys.mu.RLock()
	info := infoOf(h.n)
	h.fsys.mu.RUnlock()
	return &info, nil
}

func (h *file) Read(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.check("read", false); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	h.fsys.mu.RLock()
	n := h.n.data.readAt(p, h.off)
	h.fsys.mu.RUnlock()
	h.off += int64(n)
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (h *file) ReadAt(p []byte, off int64) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.check("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, semfs.PathErr("read", h.path, semfs.ErrInvalid, "negative offset")
	}
	h.fsys.mu.RLock()
	n := h.n.data.readAt(p, off)
	h.fsys.mu.RUnlock()
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (h *file) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.check("write", true); err != nil {
		return 0, err
	}
	h.fsys.mu.Lock()
	if h.append {
		h.off = h.n.size()
	}
	h.fsys.writeAt(h.n, p, h.off)
	h.fsys.mu.Unlock()
	h.off += int64(len(p))
	return len(p), nil
}

func (h *file) WriteAt(p []byte, off int64) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.check("write", true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, semfs.PathErr("write", h.path, semfs.ErrInvalid, "negative offset")
	}
	if h.append {
		return 0, semfs.PathErr("write", h.path, semfs.ErrInvalid, "WriteAt on a file opened with O_APPEND")
	}
	h.fsys.mu.Lock()
	h.fsys.writeAt(h.n, p, off)
	h.fsys.mu.Unlock()
	return len(p), nil
}

func (h *file) Seek(offset int64, whence int) (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return 0, errClosed("seek", h.path)
	}
	h.fsys.mu.RLock()
	size := h.n.size()
	h.fsys.mu.RUnlock()
	off, err := seek(h.path, h.off, size, offset, whence)
	if err == nil {
		h.off = off
	}
	return off, err
}

func (h *file) Truncate(size int64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.check("truncate", true); err != nil {
		return err
	}
	if size < 0 {
		return semfs.PathErr("truncate", h.path, semfs.ErrInvalid, "negative size")
	}
	h.fsys.mu.Lock()
	h.fsys.setSize(h.n, size)
	h.n.mtime = h.fsys.stamp()
	h.fsys.mu.Unlock()
	return nil
}

// Sync does nothing: memory is as stable as memfs gets.
func (h *file) Sync() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errClosed("sync", h.path)
	}
	return nil
}

func (h *file) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errClosed("close", h.path)
	}
	h.closed = true
	return nil
}
