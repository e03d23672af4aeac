// Package objfs is a semfs backend over an S3-compatible object store.
//
// Each regular file is one object, named by the optional key prefix plus the
// file's tree path without its leading slash ("/notes/a.md" → "PREFIX" +
// "notes/a.md"). Directories created through objfs are kept as empty marker
// objects ("notes/"), so an empty directory survives; directories implied by
// the keys below them exist without a marker, as in any bucket.
//
// The structural index — every path with its size and modification time —
// lives in memory, loaded by one listing at Open and kept current by every
// change made through this FS, so Stat, ReadDir, Files and TotalSize cost no
// round trip. Only contents cross the network. Changes made by other writers
// (another daemon on the same bucket) appear after Refresh — called by hand,
// or every Config.RefreshInterval — and a Stat or Open of a path the index
// does not know asks the store before answering "not found".
//
// Reads go through a bounded in-memory cache of whole small objects (keyed by
// path and ETag); large objects are read with ranged requests. Writes are
// spooled to a local temporary file and uploaded on Sync or Close (write-back):
// one PUT, or a multipart upload for large files. S3 replaces an object
// atomically, so a failed upload leaves the previous version intact, and the
// error is returned from Sync or Close.
//
// Rename is a server-side copy followed by a delete, per object; it is not
// atomic for directories. Credentials never appear in errors or logs.
package objfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/semfs/semfs"
)

// Config says which bucket to serve and how.
type Config struct {
	Endpoint  string // host:port of the S3 server
	AccessKey string
	SecretKey string
	Secure    bool   // use https
	Region    string // optional
	Bucket    string
	Prefix    string // optional key prefix; "" or ending in "/"
	// CreateBucket creates the bucket if it does not exist.
	CreateBucket bool

	// CacheBytes bounds the read cache (default 64 MiB); objects up to
	// CacheBytes/16 are cached whole.
	CacheBytes int64
	// PartSize is the multipart part size (default 16 MiB, minimum 5 MiB).
	PartSize uint64
	// SpoolDir holds write-back spool files (default os.TempDir()).
	SpoolDir string
	// MaxRetries bounds how often one request is retried after a network
	// error or a server error before the operation fails (default: the
	// client library's, 10, with backoff capped at 1 s). Every request objfs
	// sends is safe to repeat: reads, and PUTs that replace a whole object.
	MaxRetries int
	// RefreshInterval, if positive, reloads the structural index from the
	// store at this interval, so listings show other daemons' changes
	// within about one interval (Stat and Open of an unknown path ask the
	// store at once regardless). Each refresh is one full listing of the
	// prefix: pick an interval that suits the tree's size. Close stops it.
	RefreshInterval time.Duration
	// ReadRetries is how many times a read whose response body broke
	// mid-transfer is requested again (default 3; negative: none).
	ReadRetries int
}

// ParseURL fills Bucket and Prefix from "s3://bucket/prefix".
func (c *Config) ParseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return fmt.Errorf("objfs: store URL must look like s3://bucket/prefix (got %q)", redact(raw))
	}
	c.Bucket = u.Host
	c.Prefix = strings.TrimPrefix(u.Path, "/")
	if c.Prefix != "" && !strings.HasSuffix(c.Prefix, "/") {
		c.Prefix += "/"
	}
	return nil
}

// redact drops user info from a URL-like string.
func redact(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = url.User("REDACTED")
		return u.String()
	}
	return s
}

// FS is an object-store tree. It is safe for concurrent use.
type FS struct {
	c      *minio.Client
	bucket string
	prefix string
	cfg    Config

	// tree is held shared by single-path mutations and exclusively by
	// Rename, RemoveAll and Refresh, which touch many paths. Lock order:
	// tree, stripe, shared.mu, mu.
	tree    sync.RWMutex
	stripes [64]sync.Mutex // per-path serialisation of uploads

	mu    sync.RWMutex
	nodes map[string]*node   // tree path → node; "/" always present
	open  map[string]*shared // paths with open writable handles
	total int64

	cache *cache

	stopRefresh context.CancelFunc
	refreshDone chan struct{}
	refreshErr  atomic.Pointer[error] // the last background refresh's failure
}

type node struct {
	dir      bool
	marker   bool // a directory with its own marker object
	size     int64
	mtime    time.Time
	etag     string
	children map[string]struct{} // names, for directories
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
)

// Open connects to the store, checks the bucket, and loads the structural
// index with one listing.
func Open(ctx context.Context, cfg Config) (*FS, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("objfs: no bucket configured; pass --store s3://bucket/prefix")
	}
	if cfg.Prefix != "" && !strings.HasSuffix(cfg.Prefix, "/") {
		cfg.Prefix += "/"
	}
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = 64 << 20
	}
	if cfg.PartSize == 0 {
		cfg.PartSize = 16 << 20
	}
	if cfg.ReadRetries == 0 {
		cfg.ReadRetries = 3
	}
	if cfg.PartSize < 5<<20 {
		cfg.PartSize = 5 << 20
	}
	c, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:      credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:     cfg.Secure,
		Region:     cfg.Region,
		MaxRetries: cfg.MaxRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("objfs: bad endpoint %q: %v", cfg.Endpoint, scrub(err, cfg))
	}
	f := &FS{c: c, bucket: cfg.Bucket, prefix: cfg.Prefix, cfg: cfg, cache: newCache(cfg.CacheBytes), open: map[string]*shared{}}
	ok, err := c.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("objfs: cannot reach the object store at %s: %v (check the endpoint and credentials)", cfg.Endpoint, scrub(err, cfg))
	}
	if !ok {
		if !cfg.CreateBucket {
			return nil, fmt.Errorf("objfs: bucket %q does not exist at %s; create it or enable CreateBucket", cfg.Bucket, cfg.Endpoint)
		}
		if err := c.MakeBucket(ctx, cfg.Bucket, minio.MakeBucketOptions{Region: cfg.Region}); err != nil {
			return nil, fmt.Errorf("objfs: create bucket %q: %v", cfg.Bucket, scrub(err, cfg))
		}
	}
	if err := f.Refresh(ctx); err != nil {
		return nil, err
	}
	if cfg.RefreshInterval > 0 {
		rctx, cancel := context.WithCancel(context.Background())
		f.stopRefresh, f.refreshDone = cancel, make(chan struct{})
		go f.refreshLoop(rctx, cfg.RefreshInterval)
	}
	return f, nil
}

// refreshLoop reloads the index every interval until ctx ends. A failed
// refresh keeps the current index and is retried at the next tick.
func (f *FS) refreshLoop(ctx context.Context, every time.Duration) {
	defer close(f.refreshDone)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := f.Refresh(ctx); err != nil && ctx.Err() == nil {
			f.refreshErr.Store(&err)
		} else {
			f.refreshErr.Store(nil)
		}
	}
}

// RefreshErr reports why the last background refresh failed, or nil if it
// succeeded (or none ran).
func (f *FS) RefreshErr() error {
	if e := f.refreshErr.Load(); e != nil {
		return *e
	}
	return nil
}

// Close stops the background refresh. Open files are not affected; close
// them first to upload their changes.
func (f *FS) Close() error {
	if f.stopRefresh != nil {
		f.stopRefresh()
		<-f.refreshDone
		f.stopRefresh = nil
	}
	return nil
}

// scrub removes the secret key from an error's text, should a library ever
// echo it.
func scrub(err error, cfg Config) error {
	if err == nil || cfg.SecretKey == "" {
		return err
	}
	msg := err.Error()
	if strings.Contains(msg, cfg.SecretKey) {
		return errors.New(strings.ReplaceAll(msg, cfg.SecretKey, "REDACTED"))
	}
	return err
}

// Refresh reloads the structural index from the store, picking up changes
// made by other writers.
func (f *FS) Refresh(ctx context.Context) error {
	f.tree.Lock()
	defer f.tree.Unlock()
	nodes := map[string]*node{"/": {dir: true, mtime: time.Now(), children: map[string]struct{}{}}}
	var total int64
	for obj := range f.c.ListObjects(ctx, f.bucket, minio.ListObjectsOptions{Prefix: f.prefix, Recursive: true}) {
		if obj.Err != nil {
			return fmt.Errorf("objfs: list bucket %q: %v", f.bucket, scrub(obj.Err, f.cfg))
		}
		rel := strings.TrimPrefix(obj.Key, f.prefix)
		isDir := strings.HasSuffix(rel, "/")
		rel = strings.TrimSuffix(rel, "/")
		if rel == "" || !semfs.ValidPath(rel) {
			continue // keys that are not valid tree paths are not part of the tree
		}
		p := "/" + rel
		if isDir {
			n := ensureDir(nodes, p)
			if n == nil {
				continue
			}
			n.marker = true
			continue
		}
		if ensureParents(nodes, p) == nil {
			continue
		}
		if old, ok := nodes[p]; ok && old.dir {
			continue // a directory already claims this name
		}
		nodes[p] = &node{size: obj.Size, mtime: obj.LastModified, etag: obj.ETag}
		total += obj.Size
	}
	f.mu.Lock()
	// Files open for writing keep their local state until uploaded.
	for p, s := range f.open {
		if n, ok := f.nodes[p]; ok && ensureParents(nodes, p) != nil {
			if old, ok := nodes[p]; ok && !old.dir {
				total -= old.size
			}
			cp := *n
			nodes[p] = &cp
			total += n.size
			_ = s
		}
	}
	f.nodes, f.total = nodes, total
	f.mu.Unlock()
	return nil
}

// stripe returns the lock serialising uploads of path p.
func (f *FS) stripe(p string) *sync.Mutex {
	h := uint32(2166136261)
	for i := 0; i < len(p); i++ {
		h = (h ^ uint32(p[i])) * 16777619
	}
	return &f.stripes[h%uint32(len(f.stripes))]
}

// ensureParents makes every ancestor of p a directory node and links p into
// its parent. It returns nil if an ancestor is a file.
func ensureParents(nodes map[string]*node, p string) *node {
	dir, name := semfs.Split(p)
	parent := ensureDir(nodes, dir)
	if parent == nil {
		return nil
	}
	parent.children[name] = struct{}{}
	return parent
}

// ensureDir makes p (and its ancestors) directories; nil if a file is in
// the way.
func ensureDir(nodes map[string]*node, p string) *node {
	if n, ok := nodes[p]; ok {
		if !n.dir {
			return nil
		}
		return n
	}
	if ensureParents(nodes, p) == nil {
		return nil
	}
	n := &node{dir: true, mtime: time.Now(), children: map[string]struct{}{}}
	nodes[p] = n
	return n
}

func (f *FS) key(p string) string { return f.prefix + strings.TrimPrefix(p, "/") }

// lookup returns the node at p (under f.mu), and an error shaped for op.
func (f *FS) lookupLocked(op, p string) (*node, error) {
	if n, ok := f.nodes[p]; ok {
		return n, nil
	}
	// Distinguish "a file is in the way" from "missing".
	var blocked string
	semfs.Ancestors(p, func(d string) bool {
		if n, ok := f.nodes[d]; ok && !n.dir {
			blocked = d
			return false
		}
		return true
	})
	if blocked != "" {
		return nil, semfs.PathErr(op, p, semfs.ErrNotDir, blocked+" is a file")
	}
	return nil, semfs.PathErr(op, p, semfs.ErrNotExist, "")
}

// Stat implements semfs.FS.
func (f *FS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	p, err := semfs.Clean("stat", name)
	if err != nil {
		return nil, err
	}
	f.mu.RLock()
	n, err := f.lookupLocked("stat", p)
	var info fs.FileInfo
	if err == nil {
		info = n.info(p)
	}
	f.mu.RUnlock()
	if err != nil && errors.Is(err, semfs.ErrNotExist) {
		if n, herr := f.head(ctx, p); herr == nil {
			return n.info(p), nil
		}
	}
	return info, err
}

// head asks the store about a path the index does not know (written by
// another writer since the last Refresh) and adds it to the index.
func (f *FS) head(ctx context.Context, p string) (*node, error) {
	if p == "/" {
		return nil, semfs.ErrNotExist
	}
	st, err := f.c.StatObject(ctx, f.bucket, f.key(p), minio.StatObjectOptions{})
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n, ok := f.nodes[p]; ok {
		return n, nil
	}
	if ensureParents(f.nodes, p) == nil {
		return nil, semfs.ErrNotDir
	}
	n := &node{size: st.Size, mtime: st.LastModified, etag: st.ETag}
	f.nodes[p] = n
	f.total += st.Size
	return n, nil
}

// ReadDir implements semfs.FS.
func (f *FS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	p, err := semfs.Clean("readdir", name)
	if err != nil {
		return nil, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	n, err := f.lookupLocked("readdir", p)
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, semfs.PathErr("readdir", p, semfs.ErrNotDir, "")
	}
	names := make([]string, 0, len(n.children))
	for c := range n.children {
		names = append(names, c)
	}
	sort.Strings(names)
	out := make([]fs.DirEntry, len(names))
	for i, c := range names {
		cp := semfs.Join(p, c)
		out[i] = fs.FileInfoToDirEntry(f.nodes[cp].info(cp))
	}
	return out, nil
}

// Files implements semfs.FilesFS from the in-memory index.
func (f *FS) Files(ctx context.Context, root string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		p, err := semfs.Clean("files", root)
		if err != nil {
			yield("", err)
			return
		}
		f.mu.RLock()
		n, err := f.lookupLocked("files", p)
		var files []string
		if err == nil {
			if !n.dir {
				files = []string{p}
			} else {
				for q, m := range f.nodes {
					if !m.dir && q != p && semfs.HasPrefix(q, p) {
						files = append(files, q)
					}
				}
			}
		}
		f.mu.RUnlock()
		if err != nil {
			yield("", err)
			return
		}
		sort.Strings(files)
		for _, q := range files {
			if !yield(q, nil) {
				return
			}
		}
	}
}

// TotalSize implements semfs.SizeFS.
func (f *FS) TotalSize(ctx context.Context) (int64, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.total, nil
}

// info is a node's FileInfo.
func (n *node) info(p string) fs.FileInfo {
	fi := fileInfo{name: semfs.BaseName(p), size: n.size, mtime: n.mtime, dir: n.dir}
	return fi
}

type fileInfo struct {
	name  string
	size  int64
	mtime time.Time
	dir   bool
}

func (fi fileInfo) Name() string { return fi.name }
func (fi fileInfo) Size() int64 {
	if fi.dir {
		return 0
	}
	return fi.size
}
func (fi fileInfo) Mode() fs.FileMode {
	if fi.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (fi fileInfo) ModTime() time.Time { return fi.mtime }
func (fi fileInfo) IsDir() bool        { return fi.dir }
func (fi fileInfo) Sys() any           { return nil }
