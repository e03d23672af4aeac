package shell

import (
	"container/list"
	"context"
	"io/fs"
	"sync"
	"time"

	"github.com/semfs/semfs"
)

// readCache is a bounded LRU of file contents keyed by path and validated
// by size and modification time, so a changed file is read again.
type readCache struct {
	mu    sync.Mutex
	max   int64
	used  int64
	ll    *list.List
	items map[string]*list.Element
}

type cacheEntry struct {
	path string
	size int64
	mod  time.Time
	data []byte
}

func newReadCache(max int64) *readCache {
	return &readCache{max: max, ll: list.New(), items: map[string]*list.Element{}}
}

func (c *readCache) get(p string, info fs.FileInfo) ([]byte, bool) {
	if c.max <= 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[p]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if e.size != info.Size() || !e.mod.Equal(info.ModTime()) {
		c.removeLocked(el)
		return nil, false
	}
	c.ll.MoveToFront(el)
	return e.data, true
}

func (c *readCache) put(p string, info fs.FileInfo, data []byte) {
	size := int64(len(data))
	if c.max <= 0 || size > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[p]; ok {
		c.removeLocked(el)
	}
	c.items[p] = c.ll.PushFront(&cacheEntry{path: p, size: info.Size(), mod: info.ModTime(), data: data})
	c.used += size
	for c.used > c.max {
		c.removeLocked(c.ll.Back())
	}
}

func (c *readCache) remove(p string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[p]; ok {
		c.removeLocked(el)
	}
}

func (c *readCache) removeLocked(el *list.Element) {
	e := el.Value.(*cacheEntry)
	c.ll.Remove(el)
	delete(c.items, e.path)
	c.used -= int64(len(e.data))
}

// readFile reads the regular file p as the session sees it: a path hidden
// from the session's view is absent; contents come from the cache when the
// file has not changed, and from the FS otherwise.
func (s *Session) readFile(ctx context.Context, p string) ([]byte, error) {
	info, err := s.nav.stat(ctx, p)
	if err != nil {
		return nil, err
	}
	return s.readFileInfo(ctx, p, info)
}

func (s *Session) readFileInfo(ctx context.Context, p string, info fs.FileInfo) ([]byte, error) {
	if info.IsDir() {
		return nil, semfs.PathErr("read", p, semfs.ErrIsDir, "")
	}
	if data, ok := s.cache.get(p, info); ok {
		return data, nil
	}
	data, err := semfs.ReadFile(ctx, s.fsys, p)
	if err != nil {
		return nil, err
	}
	s.cache.put(p, info, data)
	return data, nil
}
