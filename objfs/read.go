package objfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/semfs/semfs"
)

// storeErr shapes an object-store failure as the contract's error: a
// missing key is ErrNotExist; anything else keeps its text (credentials
// scrubbed) with no sentinel, which front ends report as an I/O error.
func (f *FS) storeErr(op, p string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &fs.PathError{Op: op, Path: p, Err: err}
	}
	switch minio.ToErrorResponse(err).Code {
	case "NoSuchKey", "NotFound":
		return semfs.PathErr(op, p, semfs.ErrNotExist, "")
	case "NoSuchBucket":
		return semfs.PathErr(op, p, semfs.ErrNotExist, fmt.Sprintf("bucket %q no longer exists", f.bucket))
	case "AccessDenied":
		return semfs.PathErr(op, p, semfs.ErrPermission, "the object store refused the credentials")
	}
	return &fs.PathError{Op: op, Path: p, Err: fmt.Errorf("object store: %v", scrub(err, f.cfg))}
}

// retryRead runs get, which reads an object or a range of it, again when
// it fails for a reason other than an answer from the store (a connection
// reset or a body cut mid-transfer): a read is safe to repeat. The client
// library already retries requests that fail before a response; this covers
// the response body.
func (f *FS) retryRead(ctx context.Context, get func() error) error {
	var err error
	for attempt := 0; ; attempt++ {
		err = get()
		if err == nil || attempt >= f.cfg.ReadRetries || ctx.Err() != nil || minio.ToErrorResponse(err).Code != "" {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(50<<attempt) * time.Millisecond):
		}
	}
}

// stat returns a copy of the file node at p for reading, consulting the
// store when the index does not know p.
func (f *FS) fileNode(ctx context.Context, op, p string) (node, error) {
	f.mu.RLock()
	n, err := f.lookupLocked(op, p)
	var out node
	if err == nil {
		out = *n
	}
	f.mu.RUnlock()
	if err != nil {
		if !errors.Is(err, semfs.ErrNotExist) {
			return node{}, err
		}
		hn, herr := f.head(ctx, p)
		if herr != nil {
			return node{}, err
		}
		out = *hn
	}
	if out.dir {
		return node{}, semfs.PathErr(op, p, semfs.ErrIsDir, "list it with ReadDir")
	}
	return out, nil
}

// wholeLimit is the largest object cached and read whole.
func (f *FS) wholeLimit() int64 { return f.cfg.CacheBytes / 16 }

// fetch returns the whole contents of the object at p, through the cache.
func (f *FS) fetch(ctx context.Context, op, p string, n node) ([]byte, error) {
	if data, ok, err := f.spoolData(p); ok {
		return data, err
	}
	if err := ctx.Err(); err != nil {
		return nil, &fs.PathError{Op: op, Path: p, Err: err}
	}
	key := cacheKey(p, n.etag)
	if data, ok := f.cache.get(key); ok {
		return data, nil
	}
	var data []byte
	err := f.retryRead(ctx, func() error {
		obj, err := f.c.GetObject(ctx, f.bucket, f.key(p), minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		defer obj.Close()
		buf := bytes.NewBuffer(make([]byte, 0, n.size))
		if _, err := io.Copy(buf, obj); err != nil {
			return err
		}
		data = buf.Bytes()
		return nil
	})
	if err != nil {
		return nil, f.storeErr(op, p, err)
	}
	if n.etag != "" && int64(len(data)) <= f.wholeLimit() {
		f.cache.put(key, data)
	}
	return data, nil
}

// ReadFile implements semfs.ReadFileFS.
func (f *FS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	p, err := semfs.Clean("read", name)
	if err != nil {
		return nil, err
	}
	n, err := f.fileNode(ctx, "read", p)
	if err != nil {
		return nil, err
	}
	data, err := f.fetch(ctx, "read", p, n)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(data), nil
}

// Open implements semfs.FS. Small objects are read whole through the cache;
// large ones are read with ranged requests as the caller reads.
func (f *FS) Open(ctx context.Context, name string) (fs.File, error) {
	p, err := semfs.Clean("open", name)
	if err != nil {
		return nil, err
	}
	n, err := f.fileNode(ctx, "open", p)
	if err != nil {
		return nil, err
	}
	info := n.info(p)
	if n.size <= f.wholeLimit() || n.etag == "" {
		data, err := f.fetch(ctx, "open", p, n)
		if err != nil {
			return nil, err
		}
		return &memFile{r: bytes.NewReader(data), info: info, path: p}, nil
	}
	return &remoteFile{f: f, ctx: context.WithoutCancel(ctx), info: info, path: p, etag: n.etag}, nil
}

// memFile is an open small file.
type memFile struct {
	r      *bytes.Reader
	info   fs.FileInfo
	path   string
	closed bool
}

var _ semfs.ReadAtFile = (*memFile)(nil)

func (m *memFile) Stat() (fs.FileInfo, error) { return m.info, nil }
func (m *memFile) Read(b []byte) (int, error) {
	if m.closed {
		return 0, semfs.PathErr("read", m.path, fs.ErrClosed, "")
	}
	return m.r.Read(b)
}
func (m *memFile) ReadAt(b []byte, off int64) (int, error) {
	if m.closed {
		return 0, semfs.PathErr("read", m.path, fs.ErrClosed, "")
	}
	return m.r.ReadAt(b, off)
}
func (m *memFile) Seek(off int64, whence int) (int64, error) { return m.r.Seek(off, whence) }
func (m *memFile) Close() error {
	if m.closed {
		return semfs.PathErr("close", m.path, fs.ErrClosed, "")
	}
	m.closed = true
	return nil
}

// remoteFile reads a large object one block at a time, keeping the last
// block so nearby reads cost no extra round trip. A read that starts at the
// beginning or continues where the last block ended opens one streaming
// request to the end of the object and takes the following blocks from it,
// so a sequential read costs one round trip rather than one per block; a
// read elsewhere fetches just its block with a ranged request.
type remoteFile struct {
	f      *FS
	ctx    context.Context
	info   fs.FileInfo
	path   string
	etag   string
	mu     sync.Mutex
	off    int64
	blkOff int64
	blk    []byte
	closed bool

	body    io.ReadCloser // open streaming request, or nil
	bodyPos int64         // offset of the next byte body delivers
}

// fetchBlock returns the bytes [start, end] of the object (caller holds
// r.mu). A broken stream or request is retried (reads are safe to repeat).
func (r *remoteFile) fetchBlock(start, end int64) ([]byte, error) {
	want := end - start + 1
	sequential := start == 0 || (r.blk != nil && start == r.blkOff+int64(len(r.blk)))
	blk := make([]byte, want)
	err := r.f.retryRead(r.ctx, func() error {
		if r.body != nil && r.bodyPos == start {
			if _, err := io.ReadFull(r.body, blk); err == nil {
				r.bodyPos += want
				return nil
			}
		}
		r.closeBody()
		opts := minio.GetObjectOptions{}
		last := end
		if sequential {
			last = r.info.Size() - 1
		}
		if err := opts.SetRange(start, last); err != nil {
			return err
		}
		if r.etag != "" {
			opts.SetMatchETag(r.etag)
		}
		obj, err := r.f.c.GetObject(r.ctx, r.f.bucket, r.f.key(r.path), opts)
		if err != nil {
			return err
		}
		if _, err := io.ReadFull(obj, blk); err != nil {
			obj.Close()
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				return &fs.PathError{Op: "read", Path: r.path, Err: fmt.Errorf("object store returned fewer bytes than the %d-byte range; the object changed while open, reopen it", want)}
			}
			return err
		}
		if sequential && last > end {
			r.body, r.bodyPos = obj, end+1
		} else {
			obj.Close()
		}
		return nil
	})
	if err != nil {
		r.closeBody()
		return nil, r.f.storeErr("read", r.path, err)
	}
	return blk, nil
}

func (r *remoteFile) closeBody() {
	if r.body != nil {
		r.body.Close()
		r.body = nil
	}
}

const remoteBlock = 1 << 20

var _ semfs.ReadAtFile = (*remoteFile)(nil)

func (r *remoteFile) Stat() (fs.FileInfo, error) { return r.info, nil }

// readAt serves b from the current block, fetching the block holding off
// when needed (caller holds r.mu).
func (r *remoteFile) readAt(b []byte, off int64) (int, error) {
	if r.closed {
		return 0, semfs.PathErr("read", r.path, fs.ErrClosed, "")
	}
	if off < 0 {
		return 0, semfs.PathErr("read", r.path, semfs.ErrInvalid, "negative offset")
	}
	size := r.info.Size()
	n := 0
	for n < len(b) {
		pos := off + int64(n)
		if pos >= size {
			return n, io.EOF
		}
		if pos < r.blkOff || pos >= r.blkOff+int64(len(r.blk)) || r.blk == nil {
			start := pos - pos%remoteBlock
			end := min(start+remoteBlock, size) - 1
			blk, err := r.fetchBlock(start, end)
			if err != nil {
				return n, err
			}
			r.blkOff, r.blk = start, blk
		}
		n += copy(b[n:], r.blk[pos-r.blkOff:])
	}
	return n, nil
}

func (r *remoteFile) Read(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, err := r.readAt(b, r.off)
	r.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (r *remoteFile) ReadAt(b []byte, off int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.readAt(b, off)
}

func (r *remoteFile) Seek(off int64, whence int) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch whence {
	case io.SeekCurrent:
		off += r.off
	case io.SeekEnd:
		off += r.info.Size()
	case io.SeekStart:
	default:
		return 0, semfs.PathErr("seek", r.path, semfs.ErrInvalid, "bad whence")
	}
	if off < 0 {
		return 0, semfs.PathErr("seek", r.path, semfs.ErrInvalid, "negative offset")
	}
	r.off = off
	return off, nil
}

func (r *remoteFile) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return semfs.PathErr("close", r.path, fs.ErrClosed, "")
	}
	r.closed = true
	r.blk = nil
	r.closeBody()
	return nil
}
