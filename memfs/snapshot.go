package memfs

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/semfs/semfs"
)

// Snapshot format.
//
//	magic    "semfsmem" (8 bytes)
//	version  uvarint
//	records  in pre-order (a directory before anything below it), each:
//	           kind   byte: 'd' directory, 'f' file
//	           path   uvarint length + bytes (canonical tree path)
//	           mode   uvarint (permission bits)
//	           mtime  varint (Unix nanoseconds)
//	           'f' only: size uvarint + size bytes of contents
//	end      byte 0, uvarint record count, uvarint total file bytes
//	checksum SHA-256 of every byte above (32 bytes), then end of stream
//
// Versions: 1 — first format.
const (
	snapshotMagic   = "semfsmem"
	SnapshotVersion = 1
)

// ErrCorrupt is wrapped (together with semfs.ErrInvalid) by Restore errors
// about a stream that is not a valid memfs snapshot.
var ErrCorrupt = errors.New("corrupt memfs snapshot")

type snapEntry struct {
	path   string
	mode   fs.FileMode
	mtime  int64
	size   int64
	chunks []*chunk
}

// Snapshot writes everything the tree holds to w. The tree is locked only
// while its structure is copied; contents are shared copy-on-write and
// written out after the lock is released.
func (f *FS) Snapshot(ctx context.Context, w io.Writer) error {
	if err := ctx.Err(); err != nil {
		return semfs.PathErr("snapshot", "/", err, "")
	}
	f.mu.RLock()
	var entries []snapEntry
	var walk func(n *node, p string)
	walk = func(n *node, p string) {
		for _, c := range n.children() {
			cp := semfs.Join(p, c.name)
			e := snapEntry{path: cp, mode: c.mode, mtime: c.mtime, size: c.size()}
			if view := shareChunks(c.data); !c.isDir() && view != nil {
				e.chunks = view.chunks
			}
			entries = append(entries, e)
			if c.isDir() {
				walk(c, cp)
			}
		}
	}
	walk(f.root, "/")
	f.mu.RUnlock()

	bw := bufio.NewWriterSize(w, 256<<10)
	h := sha256.New()
	out := io.MultiWriter(bw, h)
	// Each record's header is built in rec and written once.
	rec := append(make([]byte, 0, 4096), snapshotMagic...)
	rec = binary.AppendUvarint(rec, SnapshotVersion)
	out.Write(rec)
	var total int64
	zeros := make([]byte, ChunkSize)
	for i, e := range entries {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return semfs.PathErr("snapshot", "/", err, "")
			}
		}
		kind := byte('f')
		if e.mode.IsDir() {
			kind = 'd'
		}
		rec = append(rec[:0], kind)
		rec = binary.AppendUvarint(rec, uint64(len(e.path)))
		rec = append(rec, e.path...)
		rec = binary.AppendUvarint(rec, uint64(e.mode.Perm()))
		rec = binary.AppendVarint(rec, e.mtime)
		if kind == 'f' {
			rec = binary.AppendUvarint(rec, uint64(e.size))
		}
		out.Write(rec)
		if kind == 'f' {
			for off := int64(0); off < e.size; off += ChunkSize {
				k := min(ChunkSize, e.size-off)
				c := e.chunks[off/ChunkSize]
				var b []byte
				if c != nil {
					b = c.b
				}
				out.Write(b)
				out.Write(zeros[:k-int64(len(b))])
			}
			total += e.size
		}
	}
	rec = append(rec[:0], 0)
	rec = binary.AppendUvarint(rec, uint64(len(entries)))
	rec = binary.AppendUvarint(rec, uint64(total))
	out.Write(rec)
	bw.Write(h.Sum(nil))
	if err := bw.Flush(); err != nil {
		return semfs.PathErr("snapshot", "/", err, "")
	}
	return nil
}

// Restore replaces the whole tree with the snapshot read from r. The stream
// is read and validated completely (format, version, paths, structure,
// checksum) before anything is replaced: on any error the tree is as it was.
func (f *FS) Restore(ctx context.Context, r io.Reader) error {
	nf, err := decode(ctx, r)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	markGone(f.root)
	f.root = nf.root
	f.total.Store(nf.total.Load())
	return nil
}

func corrupt(format string, args ...any) error {
	return semfs.PathErr("restore", "/", fmt.Errorf("%w: %w: "+format, append([]any{semfs.ErrInvalid, ErrCorrupt}, args...)...), "")
}

// hashReader hashes exactly the bytes its caller consumes.
type hashReader struct {
	br  *bufio.Reader
	h   hash.Hash
	one [1]byte
}

func (r *hashReader) ReadByte() (byte, error) {
	b, err := r.br.ReadByte()
	if err == nil {
		r.one[0] = b
		r.h.Write(r.one[:])
	}
	return b, err
}

func (r *hashReader) Read(p []byte) (int, error) {
	n, err := r.br.Read(p)
	r.h.Write(p[:n])
	return n, err
}

func decode(ctx context.Context, r io.Reader) (*FS, error) {
	hr := &hashReader{br: bufio.NewReaderSize(r, 256<<10), h: sha256.New()}
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(hr, magic); err != nil || string(magic) != snapshotMagic {
		return nil, corrupt("bad magic")
	}
	version, err := binary.ReadUvarint(hr)
	if err != nil {
		return nil, corrupt("truncated header")
	}
	if version != SnapshotVersion {
		return nil, corrupt("unsupported version %d (this build reads %d)", version, SnapshotVersion)
	}
	nf := New()
	var count, total uint64
	var pb []byte // path buffer, reused
	for {
		if count%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, semfs.PathErr("restore", "/", err, "")
			}
		}
		kind, err := hr.ReadByte()
		if err != nil {
			return nil, corrupt("truncated stream")
		}
		if kind == 0 {
			break
		}
		if kind != 'd' && kind != 'f' {
			return nil, corrupt("bad record kind %d", kind)
		}
		plen, err := binary.ReadUvarint(hr)
		if err != nil || plen == 0 || plen > semfs.MaxPathLen {
			return nil, corrupt("bad path length")
		}
		pb = slices.Grow(pb[:0], int(plen))[:plen]
		if _, err := io.ReadFull(hr, pb); err != nil {
			return nil, corrupt("truncated path")
		}
		p := string(pb)
		if c, err := semfs.Clean("restore", p); err != nil || c != p || p == "/" {
			return nil, corrupt("bad path %q", p)
		}
		perm, err := binary.ReadUvarint(hr)
		if err != nil || perm > uint64(fs.ModePerm) {
			return nil, corrupt("bad mode")
		}
		mtime, err := binary.ReadVarint(hr)
		if err != nil {
			return nil, corrupt("truncated record")
		}
		dir, base, err := nf.parent(p)
		if err != nil {
			return nil, corrupt("%s comes before its parent directory", p)
		}
		existing, i := dir.child(base)
		if existing != nil {
			return nil, corrupt("duplicate path %s", p)
		}
		n := &node{name: strings.Clone(base), mode: fs.FileMode(perm), mtime: mtime}
		if kind == 'd' {
			n.mode |= fs.ModeDir
		} else {
			size, err := binary.ReadUvarint(hr)
			if err != nil || size > 1<<62 {
				return nil, corrupt("bad size")
			}
			var chunks []*chunk
			for off := uint64(0); off < size; off += ChunkSize {
				b := make([]byte, min(ChunkSize, size-off))
				if _, err := io.ReadFull(hr, b); err != nil {
					return nil, corrupt("truncated contents of %s", p)
				}
				chunks = append(chunks, &chunk{b: b})
			}
			if size > 0 {
				n.data = &content{chunks: chunks, size: int64(size)}
			}
			total += size
		}
		dir.insertAt(i, n)
		count++
	}
	wantCount, err1 := binary.ReadUvarint(hr)
	wantTotal, err2 := binary.ReadUvarint(hr)
	if err1 != nil || err2 != nil || wantCount != count || wantTotal != total {
		return nil, corrupt("record count or byte total does not match")
	}
	sum := hr.h.Sum(nil)
	got := make([]byte, len(sum))
	if _, err := io.ReadFull(hr.br, got); err != nil || !bytes.Equal(got, sum) {
		return nil, corrupt("checksum mismatch")
	}
	if _, err := hr.br.ReadByte(); err != io.EOF {
		return nil, corrupt("trailing bytes after checksum")
	}
	nf.total.Store(int64(total))
	return nf, nil
}

// Clone returns an independent copy of the tree. Contents are not copied:
// both trees share chunks copy-on-write, so a clone costs one node per file
// and directory, and a later write to either tree copies at most the chunks
// it touches.
func (f *FS) Clone() *FS {
	f.mu.RLock()
	defer f.mu.RUnlock()
	c := &FS{now: f.now, root: cloneNode(f.root)}
	c.total.Store(f.total.Load())
	return c
}

func cloneNode(n *node) *node {
	out := &node{name: n.name, mtime: n.mtime, mode: n.mode}
	out.data = shareChunks(n.data)
	if len(n.kids) > 0 {
		out.kids = make([][]*node, len(n.kids))
		for i, blk := range n.kids {
			nb := make([]*node, len(blk))
			for j, k := range blk {
				nb[j] = cloneNode(k)
			}
			out.kids[i] = nb
		}
	}
	return out
}
