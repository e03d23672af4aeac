// Package memfs is the in-memory semfs backend, the default tree of sessions
// and tests.
//
// The whole tree is one data structure guarded by one read-write mutex.
// Directories keep their children sorted by name, in blocks of at most 512,
// so ReadDir needs no sorting, lookups are binary searches, and an insert
// into a huge directory moves one block, not the whole list. File contents are kept
// in fixed-size chunks of [ChunkSize] bytes: a write into the middle of a
// large file touches one chunk, and a chunk that a snapshot or an open
// reader holds is copied before it is changed (copy on write), so both are
// cheap and never see a torn write.
//
// [FS] implements [semfs.FS] and every writing capability of the contract:
// [semfs.ReadFileFS], [semfs.WriteFileFS] (atomic replace),
// [semfs.OpenFileFS], [semfs.MkdirFS], [semfs.MkdirAllFS], [semfs.RemoveFS],
// [semfs.RemoveAllFS], [semfs.RenameFS], [semfs.FilesFS], [semfs.SizeFS]
// (kept incrementally) and [semfs.SnapshotFS]. [FS.Clone] copies a tree in
// memory, sharing contents copy-on-write, for a session that must not see
// (or disturb) later changes. [FromMap] builds a tree for tests and
// examples.
//
// Snapshot streams are versioned ([SnapshotVersion]) and end with a SHA-256
// checksum; Restore reads and checks the whole stream before it replaces
// the tree, and refuses a damaged one with an error wrapping both
// [semfs.ErrInvalid] and [ErrCorrupt].
//
// # Memory
//
// A node is 64 bytes plus its name and its slot in the parent's block; an
// empty file has no other allocation, so a tree of a million empty files
// holds about 100 MB of heap (see docs/bench/core.md). A non-empty file adds
// one small header and its chunks.
package memfs

import (
	"context"
	"io/fs"
	"iter"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/semfs/semfs"
)

// FS is an in-memory tree. The zero value is not usable; call [New].
type FS struct {
	mu    sync.RWMutex
	root  *node
	total atomic.Int64 // bytes in attached regular files
	now   func() time.Time
}

var (
	_ semfs.FS          = (*FS)(nil)
	_ semfs.ReadFileFS  = (*FS)(nil)
	_ semfs.WriteFileFS = (*FS)(nil)
	_ semfs.OpenFileFS  = (*FS)(nil)
	_ semfs.MkdirFS     = (*FS)(nil)
	_ semfs.MkdirAllFS  = (*FS)(nil)
	_ semfs.RemoveFS    = (*FS)(nil)
	_ semfs.RemoveAllFS = (*FS)(nil)
	_ semfs.RenameFS    = (*FS)(nil)
	_ semfs.FilesFS     = (*FS)(nil)
	_ semfs.SizeFS      = (*FS)(nil)
	_ semfs.SnapshotFS  = (*FS)(nil)
)

// node is a file or a directory. It is kept small on purpose: a tree of a
// million files is a million nodes.
type node struct {
	name  string      // base name; "" for the root
	kids  [][]*node   // directories: children sorted by name, in blocks (dir.go)
	data  *content    // files: contents, nil when empty (file.go)
	mtime int64       // Unix nanoseconds
	mode  fs.FileMode // type and permission bits
	gone  bool        // removed from the tree (an open handle may still hold it)
}

func (n *node) isDir() bool { return n.mode.IsDir() }

// New returns an empty tree.
func New() *FS {
	f := &FS{now: time.Now}
	f.root = &node{mode: fs.ModeDir | 0o755, mtime: f.now().UnixNano()}
	return f
}

// FromMap returns a tree holding the given files (path → contents), with
// their parent directories. It panics on an invalid path or a path
// conflict; it is meant for tests and examples.
func FromMap(files map[string]string) *FS {
	f := New()
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := f.WriteFile(context.Background(), k, []byte(files[k]), 0o644); err != nil {
			panic(err)
		}
	}
	return f
}

func (f *FS) stamp() int64 { return f.now().UnixNano() }

// find resolves the canonical path p. On failure it returns a sentinel:
// ErrNotExist if an element is missing, ErrNotDir if one before the last is
// a file.
func (f *FS) find(p string) (*node, error) {
	n := f.root
	if p == "/" {
		return n, nil
	}
	rest := p[1:]
	for {
		if !n.isDir() {
			return nil, semfs.ErrNotDir
		}
		elem, tail, more := strings.Cut(rest, "/")
		c, _ := n.child(elem)
		if c == nil {
			return nil, semfs.ErrNotExist
		}
		if !more {
			return c, nil
		}
		n, rest = c, tail
	}
}

// parent resolves the directory that holds canonical path p (p != "/").
func (f *FS) parent(p string) (*node, string, error) {
	dir, name := semfs.Split(p)
	d, err := f.find(dir)
	if err != nil {
		return nil, name, err
	}
	if !d.isDir() {
		return nil, name, semfs.ErrNotDir
	}
	return d, name, nil
}

// insert adds c to dir at s (as returned by child).
func (f *FS) insert(dir *node, s slot, c *node) {
	dir.insertAt(s, c)
	dir.mtime = c.mtime
}

// detach removes the child c at s of dir, marking its subtree gone and
// taking its bytes out of the total.
func (f *FS) detach(dir *node, s slot, c *node) {
	dir.deleteAt(s)
	dir.mtime = f.stamp()
	f.total.Add(-markGone(c))
}

// markGone marks the subtree at n as removed from the tree and returns the
// bytes its files held.
func markGone(n *node) int64 {
	n.gone = true
	bytes := n.size()
	for _, blk := range n.kids {
		for _, c := range blk {
			bytes += markGone(c)
		}
	}
	return bytes
}

// mkdirs creates the missing directories of canonical path p, which must
// lead to a directory, and returns it.
func (f *FS) mkdirs(p string, perm fs.FileMode) (*node, error) {
	n := f.root
	if p == "/" {
		return n, nil
	}
	rest := p[1:]
	for {
		elem, tail, more := strings.Cut(rest, "/")
		c, i := n.child(elem)
		if c == nil {
			c = &node{name: strings.Clone(elem), mode: fs.ModeDir | perm.Perm(), mtime: f.stamp()}
			f.insert(n, i, c)
		} else if !c.isDir() {
			return nil, semfs.ErrNotDir
		}
		if !more {
			return c, nil
		}
		n, rest = c, tail
	}
}

func begin(ctx context.Context, op, name string) (string, error) {
	p, err := semfs.Clean(op, name)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", semfs.PathErr(op, p, err, "")
	}
	return p, nil
}

// Stat describes name.
func (f *FS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	p, err := begin(ctx, "stat", name)
	if err != nil {
		return nil, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	n, err := f.find(p)
	if err != nil {
		return nil, semfs.PathErr("stat", p, err, "")
	}
	info := infoOf(n)
	if p == "/" {
		info.name = "/"
	}
	return &info, nil
}

// ReadDir lists the directory name, sorted by name.
func (f *FS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	p, err := begin(ctx, "readdir", name)
	if err != nil {
		return nil, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	n, err := f.find(p)
	if err != nil {
		return nil, semfs.PathErr("readdir", p, err, "")
	}
	if !n.isDir() {
		return nil, semfs.PathErr("readdir", p, semfs.ErrNotDir, "")
	}
	count := n.count()
	infos := make([]fileInfo, 0, count)
	out := make([]fs.DirEntry, count)
	for _, blk := range n.kids {
		for _, c := range blk {
			infos = append(infos, infoOf(c))
		}
	}
	for i := range infos {
		out[i] = &infos[i]
	}
	return out, nil
}

// Mkdir creates the directory name.
func (f *FS) Mkdir(ctx context.Context, name string, perm fs.FileMode) error {
	p, err := begin(ctx, "mkdir", name)
	if err != nil {
		return err
	}
	if p == "/" {
		return semfs.PathErr("mkdir", p, semfs.ErrExist, "the root always exists")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	dir, base, err := f.parent(p)
	if err != nil {
		return semfs.PathErr("mkdir", p, err, "")
	}
	c, i := dir.child(base)
	if c != nil {
		return semfs.PathErr("mkdir", p, semfs.ErrExist, "")
	}
	f.insert(dir, i, &node{name: strings.Clone(base), mode: fs.ModeDir | perm.Perm(), mtime: f.stamp()})
	return nil
}

// MkdirAll creates name and its missing parents; it succeeds if name is
// already a directory.
func (f *FS) MkdirAll(ctx context.Context, name string, perm fs.FileMode) error {
	p, err := begin(ctx, "mkdir", name)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.mkdirs(p, perm); err != nil {
		return semfs.PathErr("mkdir", p, err, "a file is in the way")
	}
	return nil
}

// Remove removes a file or an empty directory.
func (f *FS) Remove(ctx context.Context, name string) error {
	p, err := begin(ctx, "remove", name)
	if err != nil {
		return err
	}
	if p == "/" {
		return semfs.PathErr("remove", p, semfs.ErrInvalid, "the root cannot be removed")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	dir, base, err := f.parent(p)
	if err != nil {
		return semfs.PathErr("remove", p, err, "")
	}
	c, s := dir.child(base)
	if c == nil {
		return semfs.PathErr("remove", p, semfs.ErrNotExist, "")
	}
	if !c.empty() {
		return semfs.PathErr("remove", p, semfs.ErrNotEmpty, "")
	}
	f.detach(dir, s, c)
	return nil
}

// RemoveAll removes name and everything below it; it succeeds if name does
// not exist. RemoveAll("/") empties the tree.
func (f *FS) RemoveAll(ctx context.Context, name string) error {
	p, err := begin(ctx, "removeall", name)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if p == "/" {
		for _, blk := range f.root.kids {
			for _, c := range blk {
				f.total.Add(-markGone(c))
			}
		}
		f.root.kids = nil
		f.root.mtime = f.stamp()
		return nil
	}
	dir, base, err := f.parent(p)
	if err == semfs.ErrNotExist {
		return nil // nothing there
	}
	if err != nil {
		return semfs.PathErr("removeall", p, err, "")
	}
	if c, s := dir.child(base); c != nil {
		f.detach(dir, s, c)
	}
	return nil
}

// Rename moves oldname to newname with the semantics of rename(2) (see
// [semfs.RenameFS]).
func (f *FS) Rename(ctx context.Context, oldname, newname string) error {
	o, err := begin(ctx, "rename", oldname)
	if err != nil {
		return err
	}
	n, err := semfs.Clean("rename", newname)
	if err != nil {
		return err
	}
	if o == "/" || n == "/" {
		return semfs.PathErr("rename", o, semfs.ErrInvalid, "the root cannot be moved or replaced")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	odir, obase, err := f.parent(o)
	if err != nil {
		return semfs.PathErr("rename", o, err, "")
	}
	src, _ := odir.child(obase)
	if src == nil {
		return semfs.PathErr("rename", o, semfs.ErrNotExist, "")
	}
	if o == n {
		return nil
	}
	if src.isDir() && semfs.HasPrefix(n, o) {
		return semfs.PathErr("rename", o, semfs.ErrInvalid, "cannot move a directory below itself: "+n)
	}
	ndir, nbase, err := f.parent(n)
	if err != nil {
		return semfs.PathErr("rename", n, err, "")
	}
	dst, ns := ndir.child(nbase)
	if dst != nil {
		switch {
		case src.isDir() && !dst.isDir():
			return semfs.PathErr("rename", n, semfs.ErrNotDir, "cannot replace a file with a directory")
		case !src.isDir() && dst.isDir():
			return semfs.PathErr("rename", n, semfs.ErrIsDir, "cannot replace a directory with a file")
		case dst.isDir() && !dst.empty():
			return semfs.PathErr("rename", n, semfs.ErrNotEmpty, "")
		}
		f.detach(ndir, ns, dst)
	}
	_, at := odir.child(obase) // the detach may have moved it
	odir.deleteAt(at)
	odir.mtime = f.stamp()
	src.name = strings.Clone(nbase)
	_, ns = ndir.child(nbase)
	ndir.insertAt(ns, src)
	ndir.mtime = f.stamp()
	return nil
}

// Files yields every regular file below root in sorted path order. The
// list is taken at the call; later changes do not affect it.
func (f *FS) Files(ctx context.Context, root string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		p, err := begin(ctx, "files", root)
		if err != nil {
			yield("", err)
			return
		}
		f.mu.RLock()
		n, err := f.find(p)
		if err != nil {
			f.mu.RUnlock()
			yield("", semfs.PathErr("files", p, err, ""))
			return
		}
		var out []string
		if !n.isDir() {
			out = []string{p}
		} else {
			out = collect(n, p, nil)
		}
		f.mu.RUnlock()
		for _, name := range out {
			if !yield(name, nil) {
				return
			}
		}
	}
}

// collect appends the files below dir (at canonical path p) in full-path
// byte order. A subdirectory's paths all start with "name/", so it sorts
// among its siblings as name+"/" would: visiting children in that order
// yields sorted paths without a final sort.
func collect(dir *node, p string, out []string) []string {
	kids := dir.children()
	needSort := false
	for i := 1; i < len(kids); i++ {
		if kids[i-1].isDir() && strings.HasPrefix(kids[i].name, kids[i-1].name) {
			needSort = true
			break
		}
	}
	if needSort {
		slices.SortFunc(kids, func(a, b *node) int { return strings.Compare(sortKey(a), sortKey(b)) })
	}
	for _, c := range kids {
		cp := semfs.Join(p, c.name)
		if c.isDir() {
			out = collect(c, cp, out)
		} else {
			out = append(out, cp)
		}
	}
	return out
}

func sortKey(n *node) string {
	if n.isDir() {
		return n.name + "/"
	}
	return n.name
}

// TotalSize returns the bytes stored in all regular files, in O(1).
func (f *FS) TotalSize(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, semfs.PathErr("totalsize", "/", err, "")
	}
	return f.total.Load(), nil
}

// fileInfo is a copy of a node's attributes; it is both the fs.FileInfo and
// the fs.DirEntry of memfs.
type fileInfo struct {
	name  string
	size  int64
	mtime int64
	mode  fs.FileMode
}

func infoOf(n *node) fileInfo {
	return fileInfo{name: n.name, size: n.size(), mtime: n.mtime, mode: n.mode}
}

func (i *fileInfo) Name() string               { return i.name }
func (i *fileInfo) Size() int64                { return i.size }
func (i *fileInfo) Mode() fs.FileMode          { return i.mode }
func (i *fileInfo) ModTime() time.Time         { return time.Unix(0, i.mtime) }
func (i *fileInfo) IsDir() bool                { return i.mode.IsDir() }
func (i *fileInfo) Sys() any                   { return nil }
func (i *fileInfo) Type() fs.FileMode          { return i.mode.Type() }
func (i *fileInfo) Info() (fs.FileInfo, error) { return i, nil }
func (i *fileInfo) String() string             { return fs.FormatFileInfo(i) }
