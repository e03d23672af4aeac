package objfs

import (
	"container/list"
	"sync"
)

// cache is a byte-bounded LRU of whole object contents keyed by path+ETag,
// so a changed object is never served stale.
type cache struct {
	mu    sync.Mutex
	max   int64
	used  int64
	ll    *list.List
	items map[string]*list.Element
}

type cacheEntry struct {
	key  string
	data []byte
}

func newCache(max int64) *cache {
	return &cache{max: max, ll: list.New(), items: map[string]*list.Element{}}
}

func cacheKey(path, etag string) string { return path + "\x00" + etag }

func (c *cache) get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*cacheEntry).data, true
	}
	return nil, false
}

func (c *cache) put(key string, data []byte) {
	if int64(len(data)) > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.ll.MoveToFront(e)
		return
	}
	c.items[key] = c.ll.PushFront(&cacheEntry{key: key, data: data})
	c.used += int64(len(data))
	for c.used > c.max {
		e := c.ll.Back()
		ce := e.Value.(*cacheEntry)
		c.ll.Remove(e)
		delete(c.items, ce.key)
		c.used -= int64(len(ce.data))
	}
}

// dropPath removes every cached version of path.
func (c *cache) dropPath(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	prefix := path + "\x00"
	for k, e := range c.items {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			c.ll.Remove(e)
			delete(c.items, k)
			c.used -= int64(len(e.Value.(*cacheEntry).data))
		}
	}
}
