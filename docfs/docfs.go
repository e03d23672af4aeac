// Package docfs serves read-only document trees stored in a database, as
// seed 003's ChromaFs does: every page is kept as ordered chunks (one per
// section), the tree's shape is loaded once at Open, and reading a page
// reassembles its chunks in order and caches the result. Large files can be
// lazy pointers into a blob tree (an object store, a host directory),
// fetched on first read. Every write fails with semfs.ErrReadOnly (EROFS on
// a mount).
//
// Per-page visibility (groups, public) is part of each page's metadata
// (semfs.MetaFS), so an access layer or a shell session prunes what a
// principal may see: a page outside your groups does not exist for you.
//
// Ingest turns a directory of Markdown/MDX (with access rules in front
// matter or a sidecar file) into a site.
package docfs

import (
	"bytes"
	"container/list"
	"context"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"sort"
	"sync"
	"time"

	"github.com/semfs/semfs"
)

// Page is one file of a site as the store keeps it.
type Page struct {
	Path    string    `json:"path"` // canonical tree path
	Size    int64     `json:"size"`
	ModTime time.Time `json:"modTime"`
	Groups  []string  `json:"groups,omitempty"`
	Public  bool      `json:"public,omitempty"`
	Chunks  int       `json:"chunks"`            // number of stored chunks
	Pointer string    `json:"pointer,omitempty"` // blob path of a lazy page ("" when chunked)
	Title   string    `json:"title,omitempty"`
}

// Store keeps sites. Implementations are safe for concurrent use.
type Store interface {
	// Pages returns every page of site. A missing site is an error
	// wrapping semfs.ErrNotExist.
	Pages(ctx context.Context, site string) ([]Page, error)
	// Chunks returns the chunks of one page in order.
	Chunks(ctx context.Context, site, path string) ([]string, error)
	// ReplaceSite stores a whole site atomically: readers see the old site
	// or the new one, never a mix.
	ReplaceSite(ctx context.Context, site string, pages []Page, chunks map[string][]string) error
	// Sites lists the stored sites.
	Sites(ctx context.Context) ([]string, error)
	// PutBlob and Blob keep small named byte strings with a site (the
	// shell's persisted path tree, for instance).
	PutBlob(ctx context.Context, site, name string, data []byte) error
	Blob(ctx context.Context, site, name string) ([]byte, bool, error)
}

// Options configure Open.
type Options struct {
	// Blobs holds the contents of lazy pages (Page.Pointer). Required when
	// the site has any.
	Blobs semfs.FS
	// CacheBytes bounds the cache of reassembled pages (default 64 MiB).
	CacheBytes int64
}

// FS is a read-only site. It is safe for concurrent use.
type FS struct {
	store Store
	site  string
	opts  Options

	nodes map[string]*node // immutable after Open
	total int64

	cmu   sync.Mutex
	cache *list.List // of *cached, most recent first
	cidx  map[string]*list.Element
	cused int64
}

type node struct {
	page     *Page // nil for directories
	children []string
	mtime    time.Time
}

type cached struct {
	path string
	data []byte
}

var (
	_ semfs.FS         = (*FS)(nil)
	_ semfs.ReadFileFS = (*FS)(nil)
	_ semfs.MetaFS     = (*FS)(nil)
	_ semfs.FilesFS    = (*FS)(nil)
	_ semfs.SizeFS     = (*FS)(nil)
)

// Open loads the shape of site from store.
func Open(ctx context.Context, store Store, site string, opts Options) (*FS, error) {
	pages, err := store.Pages(ctx, site)
	if err != nil {
		return nil, err
	}
	if opts.CacheBytes == 0 {
		opts.CacheBytes = 64 << 20
	}
	f := &FS{store: store, site: site, opts: opts, nodes: map[string]*node{"/": {}},
		cache: list.New(), cidx: map[string]*list.Element{}}
	for i := range pages {
		p := &pages[i]
		if !semfs.ValidPath(p.Path) || p.Path == "/" {
			return nil, fmt.Errorf("docfs: site %q holds an invalid page path %q; re-ingest it", site, p.Path)
		}
		if p.Pointer != "" && opts.Blobs == nil {
			return nil, fmt.Errorf("docfs: site %q has lazy pages but no blob tree was given (Options.Blobs)", site)
		}
		if err := f.add(p); err != nil {
			return nil, err
		}
		f.total += p.Size
	}
	for _, n := range f.nodes {
		sort.Strings(n.children)
	}
	return f, nil
}

func (f *FS) add(p *Page) error {
	if _, ok := f.nodes[p.Path]; ok {
		return fmt.Errorf("docfs: site %q holds %q twice, or as both a page and a directory; re-ingest it", f.site, p.Path)
	}
	f.nodes[p.Path] = &node{page: p, mtime: p.ModTime}
	for child := p.Path; child != "/"; {
		dir, name := semfs.Split(child)
		d, ok := f.nodes[dir]
		if ok && d.page != nil {
			return fmt.Errorf("docfs: site %q holds %q below the page %q; re-ingest it", f.site, p.Path, dir)
		}
		if !ok {
			d = &node{}
			f.nodes[dir] = d
		}
		// child is new here: the page itself, or a directory made just now.
		d.children = append(d.children, name)
		if ok {
			break
		}
		child = dir
	}
	// A directory's time is its newest page's.
	semfs.Ancestors(p.Path, func(dir string) bool {
		if d := f.nodes[dir]; p.ModTime.After(d.mtime) {
			d.mtime = p.ModTime
		}
		return true
	})
	return nil
}

// Site returns the site's name.
func (f *FS) Site() string { return f.site }

// Store returns the store the site was loaded from.
func (f *FS) Store() Store { return f.store }

func (f *FS) lookup(op, name string) (string, *node, error) {
	p, err := semfs.Clean(op, name)
	if err != nil {
		return "", nil, err
	}
	n, ok := f.nodes[p]
	if !ok {
		var blocked string
		semfs.Ancestors(p, func(d string) bool {
			if a, ok := f.nodes[d]; ok && a.page != nil {
				blocked = d
				return false
			}
			return true
		})
		if blocked != "" {
			return p, nil, semfs.PathErr(op, p, semfs.ErrNotDir, blocked+" is a file")
		}
		return p, nil, semfs.PathErr(op, p, semfs.ErrNotExist, "")
	}
	return p, n, nil
}

// Stat implements semfs.FS.
func (f *FS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	p, n, err := f.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return n.info(p), nil
}

// ReadDir implements semfs.FS.
func (f *FS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	p, n, err := f.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if n.page != nil {
		return nil, semfs.PathErr("readdir", p, semfs.ErrNotDir, "")
	}
	out := make([]fs.DirEntry, len(n.children))
	for i, c := range n.children {
		cp := semfs.Join(p, c)
		out[i] = fs.FileInfoToDirEntry(f.nodes[cp].info(cp))
	}
	return out, nil
}

// ReadFile implements semfs.ReadFileFS: chunks reassembled in order (or a
// lazy page fetched from the blob tree), cached.
func (f *FS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	p, n, err := f.lookup("read", name)
	if err != nil {
		return nil, err
	}
	if n.page == nil {
		return nil, semfs.PathErr("read", p, semfs.ErrIsDir, "list it with ls")
	}
	data, err := f.contents(ctx, p, n.page)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(data), nil
}

func (f *FS) contents(ctx context.Context, p string, pg *Page) ([]byte, error) {
	f.cmu.Lock()
	if e, ok := f.cidx[p]; ok {
		f.cache.MoveToFront(e)
		data := e.Value.(*cached).data
		f.cmu.Unlock()
		return data, nil
	}
	f.cmu.Unlock()
	var data []byte
	if pg.Pointer != "" {
		b, err := semfs.ReadFile(ctx, f.opts.Blobs, pg.Pointer)
		if err != nil {
			return nil, semfs.RewritePath(err, "read", p)
		}
		data = b
	} else {
		chunks, err := f.store.Chunks(ctx, f.site, p)
		if err != nil {
			return nil, semfs.RewritePath(err, "read", p)
		}
		var buf bytes.Buffer
		buf.Grow(int(pg.Size))
		for _, c := range chunks {
			buf.WriteString(c)
		}
		data = buf.Bytes()
	}
	if int64(len(data)) != pg.Size {
		return nil, semfs.PathErr("read", p, semfs.ErrInvalid, fmt.Sprintf(
			"stored page is %d bytes but its record says %d; re-ingest the site", len(data), pg.Size))
	}
	f.remember(p, data)
	return data, nil
}

func (f *FS) remember(p string, data []byte) {
	if int64(len(data)) > f.opts.CacheBytes {
		return
	}
	f.cmu.Lock()
	defer f.cmu.Unlock()
	if _, ok := f.cidx[p]; ok {
		return
	}
	f.cidx[p] = f.cache.PushFront(&cached{path: p, data: data})
	f.cused += int64(len(data))
	for f.cused > f.opts.CacheBytes {
		e := f.cache.Back()
		c := e.Value.(*cached)
		f.cache.Remove(e)
		delete(f.cidx, c.path)
		f.cused -= int64(len(c.data))
	}
}

// Open implements semfs.FS.
func (f *FS) Open(ctx context.Context, name string) (fs.File, error) {
	p, n, err := f.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if n.page == nil {
		return nil, semfs.PathErr("open", p, semfs.ErrIsDir, "list it with ls")
	}
	data, err := f.contents(ctx, p, n.page)
	if err != nil {
		return nil, err
	}
	return &file{r: bytes.NewReader(data), info: n.info(p), path: p}, nil
}

// Meta implements semfs.MetaFS: a page's visibility, size and times.
func (f *FS) Meta(ctx context.Context, name string) (semfs.Meta, error) {
	p, n, err := f.lookup("meta", name)
	if err != nil {
		return semfs.Meta{}, err
	}
	m := semfs.Meta{Path: p, CreatedAt: n.mtime, UpdatedAt: n.mtime, CreatedBy: "docs:" + f.site}
	if n.page != nil {
		m.Size = n.page.Size
		m.Groups = append([]string(nil), n.page.Groups...)
		m.Public = n.page.Public
		m.Summary = n.page.Title
	}
	return m, nil
}

// SetTags implements semfs.MetaFS: a document tree is read-only.
func (f *FS) SetTags(ctx context.Context, name string, tags semfs.Tags) error {
	p, _, err := f.lookup("tag", name)
	if err != nil {
		return err
	}
	return semfs.PathErr("tag", p, semfs.ErrReadOnly, "document trees are read-only; change the source and re-ingest")
}

// Files implements semfs.FilesFS.
func (f *FS) Files(ctx context.Context, root string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		p, n, err := f.lookup("files", root)
		if err != nil {
			yield("", err)
			return
		}
		if n.page != nil {
			yield(p, nil)
			return
		}
		var out []string
		for q, m := range f.nodes {
			if m.page != nil && semfs.HasPrefix(q, p) {
				out = append(out, q)
			}
		}
		sort.Strings(out)
		for _, q := range out {
			if !yield(q, nil) {
				return
			}
		}
	}
}

// TotalSize implements semfs.SizeFS.
func (f *FS) TotalSize(ctx context.Context) (int64, error) { return f.total, nil }

func (n *node) info(p string) fs.FileInfo {
	fi := fileInfo{name: semfs.BaseName(p), mtime: n.mtime, dir: n.page == nil}
	if n.page != nil {
		fi.size = n.page.Size
	}
	return fi
}

type fileInfo struct {
	name  string
	size  int64
	mtime time.Time
	dir   bool
}

func (fi fileInfo) Name() string { return fi.name }
func (fi fileInfo) Size() int64  { return fi.size }
func (fi fileInfo) Mode() fs.FileMode {
	if fi.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (fi fileInfo) ModTime() time.Time { return fi.mtime }
func (fi fileInfo) IsDir() bool        { return fi.dir }
func (fi fileInfo) Sys() any           { return nil }

type file struct {
	r      *bytes.Reader
	info   fs.FileInfo
	path   string
	closed bool
}

var _ semfs.ReadAtFile = (*file)(nil)

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *file) Read(b []byte) (int, error) {
	if f.closed {
		return 0, semfs.PathErr("read", f.path, fs.ErrClosed, "")
	}
	return f.r.Read(b)
}
func (f *file) ReadAt(b []byte, off int64) (int, error) {
	if f.closed {
		return 0, semfs.PathErr("read", f.path, fs.ErrClosed, "")
	}
	return f.r.ReadAt(b, off)
}
func (f *file) Seek(off int64, whence int) (int64, error) { return f.r.Seek(off, whence) }
func (f *file) Close() error {
	if f.closed {
		return semfs.PathErr("close", f.path, fs.ErrClosed, "")
	}
	f.closed = true
	return nil
}

var _ io.Seeker = (*file)(nil)
