package objfs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/semfs/semfs"
)

// put uploads r (size bytes) as the object at p and records it in the
// index. On failure the previous object and the index are unchanged.
func (f *FS) put(ctx context.Context, op, p string, r io.Reader, size int64) (node, error) {
	if err := ctx.Err(); err != nil {
		return node{}, &fs.PathError{Op: op, Path: p, Err: err}
	}
	if err := f.checkKey(op, p); err != nil {
		return node{}, err
	}
	info, err := f.c.PutObject(ctx, f.bucket, f.key(p), r, size, minio.PutObjectOptions{
		PartSize:    f.cfg.PartSize,
		ContentType: "application/octet-stream",
	})
	if err != nil {
		return node{}, f.storeErr(op, p, err)
	}
	mtime := info.LastModified
	if mtime.IsZero() {
		mtime = time.Now()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if ensureParents(f.nodes, p) == nil {
		return node{}, semfs.PathErr(op, p, semfs.ErrNotDir, "a parent became a file")
	}
	if old, ok := f.nodes[p]; ok && !old.dir {
		f.total -= old.size
	}
	n := node{size: size, mtime: mtime, etag: info.ETag}
	f.nodes[p] = &n
	f.total += size
	f.cache.dropPath(p)
	return n, nil
}

// maxKeyLen is S3's limit on object key length, in bytes.
const maxKeyLen = 1024

// checkKey refuses paths whose object key would exceed the store's limit.
func (f *FS) checkKey(op, p string) error {
	if n := len(f.key(p)); n > maxKeyLen {
		return semfs.PathErr(op, p, semfs.ErrInvalid, fmt.Sprintf(
			"path too long for the object store: its key would be %d bytes and S3 keys are limited to %d bytes (including the %d-byte prefix); use a shorter path", n, maxKeyLen, len(f.prefix)))
	}
	return nil
}

// prepareParents checks that p can be created and writes marker objects for
// missing parent directories when create is set; with create unset a missing
// parent is ErrNotExist (open(2) semantics).
func (f *FS) prepareParents(ctx context.Context, op, p string, create bool) error {
	var missing []string
	f.mu.RLock()
	var err error
	semfs.Ancestors(p, func(d string) bool {
		n, ok := f.nodes[d]
		switch {
		case !ok:
			missing = append(missing, d)
		case !n.dir:
			err = semfs.PathErr(op, p, semfs.ErrNotDir, d+" is a file")
			return false
		}
		return true
	})
	if err == nil {
		if n, ok := f.nodes[p]; ok && n.dir {
			err = semfs.PathErr(op, p, semfs.ErrIsDir, "a directory exists at this path")
		}
	}
	f.mu.RUnlock()
	if err != nil {
		return err
	}
	if len(missing) > 0 && !create {
		return semfs.PathErr(op, p, semfs.ErrNotExist, "parent directory "+missing[0]+" does not exist")
	}
	for _, d := range missing {
		if err := f.putMarker(ctx, op, d); err != nil {
			return semfs.RewritePath(err, op, p)
		}
	}
	return nil
}

// putMarker writes the marker object of directory d and records it.
func (f *FS) putMarker(ctx context.Context, op, d string) error {
	if err := ctx.Err(); err != nil {
		return &fs.PathError{Op: op, Path: d, Err: err}
	}
	if err := f.checkKey(op, d+"/"); err != nil {
		return err
	}
	_, err := f.c.PutObject(ctx, f.bucket, f.key(d)+"/", bytes.NewReader(nil), 0, minio.PutObjectOptions{})
	if err != nil {
		return f.storeErr(op, d, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n := ensureDir(f.nodes, d)
	if n == nil {
		return semfs.PathErr(op, d, semfs.ErrNotDir, "a file exists at this path")
	}
	n.marker = true
	return nil
}

// WriteFile implements semfs.WriteFileFS: one PUT replaces the object
// atomically.
func (f *FS) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	p, err := semfs.Clean("write", name)
	if err != nil {
		return err
	}
	if p == "/" {
		return semfs.PathErr("write", p, semfs.ErrIsDir, "the root is a directory")
	}
	if err := f.checkKey("write", p); err != nil {
		return err
	}
	f.tree.RLock()
	defer f.tree.RUnlock()
	lk := f.stripe(p)
	lk.Lock()
	defer lk.Unlock()
	if err := f.prepareParents(ctx, "write", p, true); err != nil {
		return err
	}
	f.mu.RLock()
	s := f.open[p]
	f.mu.RUnlock()
	if s != nil {
		// The file is open: replace the shared contents its handles see,
		// then store them.
		s.mu.Lock()
		defer s.mu.Unlock()
		if err := s.spool.Truncate(0); err != nil {
			return &fs.PathError{Op: "write", Path: p, Err: errSpool}
		}
		if _, err := s.spool.WriteAt(data, 0); err != nil {
			return &fs.PathError{Op: "write", Path: p, Err: errSpool}
		}
		s.dirty = true
		f.touch(s)
		return f.upload(ctx, s, "write")
	}
	_, err = f.put(ctx, "write", p, bytes.NewReader(data), int64(len(data)))
	return err
}

// Mkdir implements semfs.MkdirFS.
func (f *FS) Mkdir(ctx context.Context, name string, perm fs.FileMode) error {
	p, err := semfs.Clean("mkdir", name)
	if err != nil {
		return err
	}
	f.tree.RLock()
	defer f.tree.RUnlock()
	lk := f.stripe(p)
	lk.Lock()
	defer lk.Unlock()
	f.mu.RLock()
	_, exists := f.nodes[p]
	f.mu.RUnlock()
	if exists || p == "/" {
		return semfs.PathErr("mkdir", p, semfs.ErrExist, "")
	}
	if err := f.prepareParents(ctx, "mkdir", p, false); err != nil {
		return err
	}
	return f.putMarker(ctx, "mkdir", p)
}

// MkdirAll implements semfs.MkdirAllFS.
func (f *FS) MkdirAll(ctx context.Context, name string, perm fs.FileMode) error {
	p, err := semfs.Clean("mkdir", name)
	if err != nil {
		return err
	}
	f.tree.RLock()
	defer f.tree.RUnlock()
	lk := f.stripe(p)
	lk.Lock()
	defer lk.Unlock()
	f.mu.RLock()
	n, exists := f.nodes[p]
	f.mu.RUnlock()
	if exists {
		if n.dir {
			return nil
		}
		return semfs.PathErr("mkdir", p, semfs.ErrNotDir, "a file exists at this path")
	}
	if err := f.prepareParents(ctx, "mkdir", p, true); err != nil {
		return err
	}
	return f.putMarker(ctx, "mkdir", p)
}

// Remove implements semfs.RemoveFS.
func (f *FS) Remove(ctx context.Context, name string) error {
	p, err := semfs.Clean("remove", name)
	if err != nil {
		return err
	}
	if p == "/" {
		return semfs.PathErr("remove", p, semfs.ErrInvalid, "the root cannot be removed")
	}
	if err := ctx.Err(); err != nil {
		return &fs.PathError{Op: "remove", Path: p, Err: err}
	}
	f.tree.RLock()
	defer f.tree.RUnlock()
	lk := f.stripe(p)
	lk.Lock()
	defer lk.Unlock()
	f.mu.RLock()
	n, err := f.lookupLocked("remove", p)
	var cp node
	if err == nil {
		cp = *n
		if n.dir && len(n.children) > 0 {
			err = semfs.PathErr("remove", p, semfs.ErrNotEmpty, "remove its contents first, or use RemoveAll")
		}
	}
	f.mu.RUnlock()
	if err != nil {
		return err
	}
	key := f.key(p)
	if cp.dir {
		key += "/"
	}
	if !cp.dir || cp.marker {
		if err := f.c.RemoveObject(ctx, f.bucket, key, minio.RemoveObjectOptions{}); err != nil {
			return f.storeErr("remove", p, err)
		}
	}
	return f.forget(ctx, []string{p})
}

// forget drops paths from the index and keeps their parents alive: a
// directory that loses its last child gets a marker so it survives a
// Refresh, as a directory does on disk.
func (f *FS) forget(ctx context.Context, paths []string) error {
	f.mu.Lock()
	parents := map[string]bool{}
	for _, p := range paths {
		n, ok := f.nodes[p]
		if !ok {
			continue
		}
		if !n.dir {
			f.total -= n.size
		}
		if s, ok := f.open[p]; ok {
			s.orphan = true
			delete(f.open, p)
		}
		delete(f.nodes, p)
		f.cache.dropPath(p)
		dir, base := semfs.Split(p)
		if parent, ok := f.nodes[dir]; ok {
			delete(parent.children, base)
			parents[dir] = true
		}
	}
	var orphans []string
	for d := range parents {
		if n, ok := f.nodes[d]; ok && d != "/" && !n.marker && len(n.children) == 0 {
			orphans = append(orphans, d)
		}
	}
	f.mu.Unlock()
	for _, d := range orphans {
		if err := f.putMarker(ctx, "remove", d); err != nil {
			return err
		}
	}
	return nil
}

// subtree lists p and every node below it, deepest first.
func (f *FS) subtreeLocked(p string) []string {
	var out []string
	for q := range f.nodes {
		if q != "/" && semfs.HasPrefix(q, p) {
			out = append(out, q)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] > out[j] })
	return out
}

// RemoveAll implements semfs.RemoveAllFS with batched deletes.
func (f *FS) RemoveAll(ctx context.Context, name string) error {
	p, err := semfs.Clean("removeall", name)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &fs.PathError{Op: "removeall", Path: p, Err: err}
	}
	f.tree.Lock()
	defer f.tree.Unlock()
	f.mu.RLock()
	_, err = f.lookupLocked("removeall", p)
	var paths []string
	var keys []string
	if err == nil {
		paths = f.subtreeLocked(p)
		for _, q := range paths {
			n := f.nodes[q]
			switch {
			case !n.dir:
				keys = append(keys, f.key(q))
			case n.marker:
				keys = append(keys, f.key(q)+"/")
			}
		}
	}
	f.mu.RUnlock()
	if err != nil {
		if errorsIs(err, semfs.ErrNotExist) {
			return nil
		}
		return err
	}
	if err := f.removeKeys(ctx, "removeall", p, keys); err != nil {
		return err
	}
	return f.forget(ctx, paths)
}

func (f *FS) removeKeys(ctx context.Context, op, p string, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	ch := make(chan minio.ObjectInfo, len(keys))
	for _, k := range keys {
		ch <- minio.ObjectInfo{Key: k}
	}
	close(ch)
	for rerr := range f.c.RemoveObjects(ctx, f.bucket, ch, minio.RemoveObjectsOptions{}) {
		if rerr.Err != nil {
			code := minio.ToErrorResponse(rerr.Err).Code
			if code == "NoSuchKey" {
				continue
			}
			return f.storeErr(op, p, rerr.Err)
		}
	}
	return nil
}

// Rename implements semfs.RenameFS: a server-side copy of every object
// below oldname, then deletion of the originals. It is atomic per object,
// not per directory.
func (f *FS) Rename(ctx context.Context, oldname, newname string) error {
	o, err := semfs.Clean("rename", oldname)
	if err != nil {
		return err
	}
	nw, err := semfs.Clean("rename", newname)
	if err != nil {
		return err
	}
	if o == "/" || nw == "/" {
		return semfs.PathErr("rename", o, semfs.ErrInvalid, "the root cannot be moved or replaced")
	}
	if err := ctx.Err(); err != nil {
		return &fs.PathError{Op: "rename", Path: o, Err: err}
	}
	f.tree.Lock()
	defer f.tree.Unlock()
	if o == nw {
		f.mu.RLock()
		_, err := f.lookupLocked("rename", o)
		f.mu.RUnlock()
		return err
	}
	if semfs.HasPrefix(nw, o) {
		return semfs.PathErr("rename", o, semfs.ErrInvalid, "cannot move a directory below itself")
	}
	// Check source and destination.
	f.mu.RLock()
	src, err := f.lookupLocked("rename", o)
	var srcDir bool
	var moves []string // source paths, deepest first
	var replaced []string
	if err == nil {
		srcDir = src.dir
		if dst, ok := f.nodes[nw]; ok {
			switch {
			case srcDir && !dst.dir:
				err = semfs.PathErr("rename", nw, semfs.ErrNotDir, "cannot replace a file with a directory")
			case !srcDir && dst.dir:
				err = semfs.PathErr("rename", nw, semfs.ErrIsDir, "cannot replace a directory with a file")
			case dst.dir && len(dst.children) > 0:
				err = semfs.PathErr("rename", nw, semfs.ErrNotEmpty, "the destination directory is not empty")
			case dst.dir:
				replaced = []string{nw}
			}
		} else {
			parent := semfs.Dir(nw)
			pn, ok := f.nodes[parent]
			switch {
			case !ok:
				_, perr := f.lookupLocked("rename", parent)
				err = semfs.RewritePath(perr, "rename", nw)
			case !pn.dir:
				err = semfs.PathErr("rename", nw, semfs.ErrNotDir, parent+" is a file")
			}
		}
		if err == nil {
			moves = f.subtreeLocked(o)
		}
	}
	f.mu.RUnlock()
	if err != nil {
		return err
	}
	// Copy every object (files and markers), shallowest first so a crash
	// leaves a usable tree at the destination.
	type move struct {
		from, to string
		n        node
	}
	var plan []move
	for i := len(moves) - 1; i >= 0; i-- {
		q := moves[i]
		f.mu.RLock()
		n := *f.nodes[q]
		f.mu.RUnlock()
		plan = append(plan, move{from: q, to: nw + strings.TrimPrefix(q, o), n: n})
	}
	var oldKeys []string
	for _, m := range plan {
		if m.n.dir && !m.n.marker && m.from != o {
			continue // implicit directories come with their contents
		}
		srcKey, dstKey := f.key(m.from), f.key(m.to)
		if m.n.dir {
			// Directories get a fresh marker at their new name (some
			// servers refuse to copy directory objects).
			if _, err := f.c.PutObject(ctx, f.bucket, dstKey+"/", bytes.NewReader(nil), 0, minio.PutObjectOptions{}); err != nil {
				return f.storeErr("rename", nw, err)
			}
			if m.n.marker {
				oldKeys = append(oldKeys, srcKey+"/")
			}
			continue
		}
		if s, ok := f.open[m.from]; ok {
			// Store what the open handles wrote so far, so the copy moves
			// the current contents.
			s.mu.Lock()
			err := f.upload(ctx, s, "rename")
			s.mu.Unlock()
			if err != nil {
				return err
			}
		}
		_, err := f.c.CopyObject(ctx,
			minio.CopyDestOptions{Bucket: f.bucket, Object: dstKey},
			minio.CopySrcOptions{Bucket: f.bucket, Object: srcKey})
		if err != nil {
			return f.storeErr("rename", m.from, err)
		}
		oldKeys = append(oldKeys, srcKey)
	}
	if err := f.removeKeys(ctx, "rename", o, oldKeys); err != nil {
		return err
	}
	// Update the index.
	f.mu.Lock()
	for _, r := range replaced {
		delete(f.nodes, r)
	}
	for _, m := range plan {
		if s, ok := f.open[m.from]; ok {
			delete(f.open, m.from)
			s.path = m.to
			f.open[m.to] = s
		}
		delete(f.nodes, m.from)
		dir, base := semfs.Split(m.from)
		if parent, ok := f.nodes[dir]; ok {
			delete(parent.children, base)
		}
		f.cache.dropPath(m.from)
	}
	for _, m := range plan {
		if oldDst, ok := f.nodes[m.to]; ok && !oldDst.dir {
			f.total -= oldDst.size
		}
		n := m.n
		if n.dir {
			n.children = map[string]struct{}{}
			if m.from == o {
				n.marker = true
			}
		}
		ensureParents(f.nodes, m.to)
		nn := n
		f.nodes[m.to] = &nn
		f.cache.dropPath(m.to)
	}
	// Re-link children of moved directories.
	for _, m := range plan {
		dir, base := semfs.Split(m.to)
		if parent, ok := f.nodes[dir]; ok && parent.dir {
			parent.children[base] = struct{}{}
		}
	}
	srcParent := semfs.Dir(o)
	orphan := ""
	if n, ok := f.nodes[srcParent]; ok && srcParent != "/" && !n.marker && len(n.children) == 0 {
		orphan = srcParent
	}
	f.mu.Unlock()
	if orphan != "" {
		return f.putMarker(ctx, "rename", orphan)
	}
	return nil
}

func errorsIs(err, target error) bool { return semfs.Sentinel(err) == target }
