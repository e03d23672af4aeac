package postings

import (
	"math/bits"
	"sync"
)

// Index is the searchable set of live segments of one kind, in memory.
// Each segment carries the store's row id for it and a set of deleted
// (tombstoned) local documents; a store id is live in at most one
// segment. Index is safe for concurrent use.
type Index struct {
	mu      sync.RWMutex
	kind    Kind
	segs    []*seg
	where   map[uint32]loc // live store id → its segment and local number
	liveLen uint64         // Text: tokens of all live documents
}

type seg struct {
	id    int64
	s     *Segment
	dead  []uint64 // bitset over local numbers; nil: none
	ndead int
}

type loc struct {
	seg   *seg
	local uint32
}

func (g *seg) isDead(local uint32) bool {
	return g.dead != nil && g.dead[local/64]&(1<<(local%64)) != 0
}

func (g *seg) live() int { return g.s.Len() - g.ndead }

func (g *seg) docLen(local uint32) uint64 {
	return uint64(g.s.PathLen[local]) + uint64(g.s.BodyLen[local])
}

// New returns an empty index of segments of kind k.
func New(k Kind) *Index {
	return &Index{kind: k, where: map[uint32]loc{}}
}

// Reset drops every segment.
func (x *Index) Reset() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.segs, x.where, x.liveLen = nil, map[uint32]loc{}, 0
}

// Live is the number of live documents.
func (x *Index) Live() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.where)
}

// Segments is the number of segments.
func (x *Index) Segments() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.segs)
}

// Add adds segment s stored under id, with the local documents dead
// already deleted. A store id live in another segment is deleted there
// first (it cannot be live twice).
func (x *Index) Add(id int64, s *Segment, dead []uint32) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.add(id, s, dead)
}

func (x *Index) add(id int64, s *Segment, dead []uint32) *seg {
	g := &seg{id: id, s: s}
	for _, l := range dead {
		x.markDead(g, l)
	}
	x.segs = append(x.segs, g)
	for l, sid := range s.IDs {
		if g.isDead(uint32(l)) {
			continue
		}
		if old, ok := x.where[sid]; ok {
			x.kill(old)
		}
		x.where[sid] = loc{g, uint32(l)}
		if x.kind == Text {
			x.liveLen += g.docLen(uint32(l))
		}
	}
	return g
}

func (x *Index) markDead(g *seg, l uint32) bool {
	if g.isDead(l) {
		return false
	}
	if g.dead == nil {
		g.dead = make([]uint64, (g.s.Len()+63)/64)
	}
	g.dead[l/64] |= 1 << (l % 64)
	g.ndead++
	return true
}

// kill tombstones a live location.
func (x *Index) kill(p loc) {
	if x.markDead(p.seg, p.local) && x.kind == Text {
		x.liveLen -= p.seg.docLen(p.local)
	}
	if cur, ok := x.where[p.seg.s.IDs[p.local]]; ok && cur == p {
		delete(x.where, p.seg.s.IDs[p.local])
	}
}

// Locate returns the segment id and local number of a live store id.
func (x *Index) Locate(sid uint32) (segID int64, local uint32, ok bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	p, ok := x.where[sid]
	if !ok {
		return 0, 0, false
	}
	return p.seg.id, p.local, true
}

// Delete tombstones the live store ids in sids (ids not live are
// ignored).
func (x *Index) Delete(sids ...uint32) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, sid := range sids {
		if p, ok := x.where[sid]; ok {
			x.kill(p)
		}
	}
}

// DeadCount is the number of tombstones over all segments.
func (x *Index) DeadCount() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := 0
	for _, g := range x.segs {
		n += g.ndead
	}
	return n
}

// popcount is the number of set bits of b.
func popcount(b []uint64) int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// Added is a segment for Apply to add: stored under ID, with the local
// documents Dead already deleted.
type Added struct {
	ID   int64
	Seg  *Segment
	Dead []uint32
}

// Apply tombstones the live store ids in del and adds segments, under one
// lock: a lookup sees the index before or after the whole change, never a
// re-indexed document deleted but not yet added again.
func (x *Index) Apply(del []uint32, adds ...Added) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, sid := range del {
		if p, ok := x.where[sid]; ok {
			x.kill(p)
		}
	}
	for _, a := range adds {
		x.add(a.ID, a.Seg, a.Dead)
	}
}

// Load replaces the segments of x with those of y, a freshly loaded index
// of the same kind that must not be used afterwards. Merges planned on x
// before are then dropped (Dead reports false).
func (x *Index) Load(y *Index) {
	y.mu.Lock()
	segs, where, liveLen := y.segs, y.where, y.liveLen
	y.segs, y.where, y.liveLen = nil, map[uint32]loc{}, 0
	y.mu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	x.segs, x.where, x.liveLen = segs, where, liveLen
}

// Segment returns the segment stored under id, or nil. Segments are
// immutable, so a store reloading its index can reuse them.
func (x *Index) Segment(id int64) *Segment {
	x.mu.RLock()
	defer x.mu.RUnlock()
	for _, g := range x.segs {
		if g.id == id {
			return g.s
		}
	}
	return nil
}
