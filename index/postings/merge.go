package postings

import (
	"slices"
)

// MergeFactor is the tier width of the merge policy: segments whose live
// document counts have the same order of magnitude in base MergeFactor
// form a tier, and a tier of MergeFactor segments is merged into one, so
// an index of n documents holds at most about MergeFactor·log(n)
// segments and each posting is rewritten about log(n) times.
const MergeFactor = 8

// Merge is a planned merge of segments into one. Plan and Build run
// without the store's write lock: Build reads immutable segments and a
// copy of their tombstones taken by PlanMerge; Dead and Replace then
// carry over the tombstones placed meanwhile.
type Merge struct {
	Old []int64  // ids of the merged segments
	Seg *Segment // the result, after Build

	segs  []*seg
	snap  [][]uint64 // tombstones of segs at planning
	remap [][]int32  // old local → new local, -1 dropped
}

// PlanMerge picks segments to merge: the smallest tier holding
// MergeFactor segments, else a segment more than half of whose documents
// are deleted. It returns nil when nothing needs merging.
func (x *Index) PlanMerge() *Merge {
	x.mu.RLock()
	defer x.mu.RUnlock()
	tiers := map[int][]*seg{}
	best := -1
	for _, g := range x.segs {
		t := 0
		for n := g.live(); n >= MergeFactor; n /= MergeFactor {
			t++
		}
		tiers[t] = append(tiers[t], g)
		if len(tiers[t]) >= MergeFactor && (best < 0 || t < best) {
			best = t
		}
	}
	var pick []*seg
	if best >= 0 {
		pick = tiers[best]
	} else {
		for _, g := range x.segs {
			if g.ndead*2 > g.s.Len() {
				pick = []*seg{g}
				break
			}
		}
	}
	if pick == nil {
		return nil
	}
	m := &Merge{segs: pick}
	for _, g := range pick {
		m.Old = append(m.Old, g.id)
		m.snap = append(m.snap, slices.Clone(g.dead))
	}
	return m
}

// Build merges the planned segments into m.Seg, dropping the documents
// deleted at planning.
func (m *Merge) Build() {
	m.Seg, m.remap = merge(m.segs, m.snap)
}

// Concat joins segments of one kind into one: the documents of segs[0],
// then those of segs[1], and so on.
func Concat(segs []*Segment) *Segment {
	if !slices.ContainsFunc(segs, func(s *Segment) bool { return s.raw != nil }) {
		return concatBuilt(segs)
	}
	gs := make([]*seg, len(segs))
	for i, s := range segs {
		gs[i] = &seg{s: s}
	}
	out, _ := merge(gs, make([][]uint64, len(segs)))
	return out
}

// concatBuilt is Concat of segments a builder made (none decoded): each
// list of the result is its lists in segs one after the other, the
// documents shifted by the documents before their segment, copied whole
// (merge renumbers every posting through a map of the documents, and
// copies each term to compare it).
func concatBuilt(segs []*Segment) *Segment {
	kind := segs[0].Kind
	out := &Segment{Kind: kind}
	total, docs := 0, 0
	for _, s := range segs {
		total += len(s.docs)
		docs += len(s.IDs)
	}
	out.IDs = make([]uint32, 0, docs)
	if kind == Text {
		out.PathLen, out.BodyLen = make([]uint32, 0, docs), make([]uint32, 0, docs)
	}
	shift := make([]uint32, len(segs)) // documents before each segment
	for i, s := range segs {
		shift[i] = uint32(len(out.IDs))
		out.IDs = append(out.IDs, s.IDs...)
		if kind == Text {
			out.PathLen = append(out.PathLen, s.PathLen...)
			out.BodyLen = append(out.BodyLen, s.BodyLen...)
		}
	}
	out.docs = make([]uint32, 0, total)
	if kind == Text {
		out.pathTF, out.bodyTF = make([]uint16, 0, total), make([]uint32, 0, total)
	}
	pos := make([]int, len(segs)) // next term of each segment
	for {
		term, found := "", false
		for i, s := range segs {
			if pos[i] < len(s.terms) && (!found || s.terms[pos[i]] < term) {
				term, found = s.terms[pos[i]], true
			}
		}
		if !found {
			break
		}
		out.terms = append(out.terms, term)
		out.offs = append(out.offs, uint32(len(out.docs)))
		for i, s := range segs {
			if pos[i] >= len(s.terms) || s.terms[pos[i]] != term {
				continue
			}
			a, b := s.offs[pos[i]], s.offs[pos[i]+1]
			n := len(out.docs)
			out.docs = out.docs[:n+int(b-a)]
			for j, d := range s.docs[a:b] {
				out.docs[n+j] = d + shift[i]
			}
			if kind == Text {
				out.pathTF = append(out.pathTF, s.pathTF[a:b]...)
				out.bodyTF = append(out.bodyTF, s.bodyTF[a:b]...)
			}
			pos[i]++
		}
	}
	out.offs = append(out.offs, uint32(len(out.docs)))
	return out
}

// merge joins the live documents of segs (dead: their tombstones) into one
// segment. Documents keep their order, segment by segment, so every
// merged list is the concatenation of the old ones, renumbered; terms are
// walked in order in all segments at once.
func merge(segs []*seg, dead [][]uint64) (*Segment, [][]int32) {
	kind := segs[0].s.Kind
	out := &Segment{Kind: kind}
	remap := make([][]int32, len(segs))
	total, docs := 0, 0
	for _, g := range segs {
		total += g.s.postingsLen()
		docs += g.s.Len()
	}
	out.IDs = make([]uint32, 0, docs)
	if kind == Text {
		out.PathLen, out.BodyLen = make([]uint32, 0, docs), make([]uint32, 0, docs)
	}
	for i, g := range segs {
		remap[i] = make([]int32, g.s.Len())
		for l := range g.s.Len() {
			if dead[i] != nil && dead[i][l/64]&(1<<(l%64)) != 0 {
				remap[i][l] = -1
				continue
			}
			remap[i][l] = int32(len(out.IDs))
			out.IDs = append(out.IDs, g.s.IDs[l])
			if kind == Text {
				out.PathLen = append(out.PathLen, g.s.PathLen[l])
				out.BodyLen = append(out.BodyLen, g.s.BodyLen[l])
			}
		}
	}
	out.docs = make([]uint32, 0, total)
	if kind == Text {
		out.pathTF, out.bodyTF = make([]uint16, 0, total), make([]uint32, 0, total)
	}
	pos := make([]int, len(segs)) // next term of each segment
	for {
		var term []byte
		found := false
		for i, g := range segs {
			if pos[i] < g.s.Terms() {
				if t := g.s.termBytes(pos[i]); !found || string(t) < string(term) {
					term, found = t, true
				}
			}
		}
		if !found {
			break
		}
		start := len(out.docs)
		for i, g := range segs {
			if pos[i] >= g.s.Terms() || string(g.s.termBytes(pos[i])) != string(term) {
				continue
			}
			g.s.appendList(pos[i], remap[i], out)
			pos[i]++
		}
		if len(out.docs) > start {
			out.terms = append(out.terms, string(term))
			out.offs = append(out.offs, uint32(start))
		}
	}
	out.offs = append(out.offs, uint32(len(out.docs)))
	return out, remap
}

// Dead returns the local numbers in m.Seg of documents deleted since
// PlanMerge, and false when a merged segment is no longer in x (the
// merge must then be dropped). Call it and Replace under the store's
// write lock.
func (x *Index) Dead(m *Merge) ([]uint32, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var dead []uint32
	for i, g := range m.segs {
		if !slices.Contains(x.segs, g) {
			return nil, false
		}
		if g.ndead == 0 {
			continue
		}
		for l := range g.s.Len() {
			if g.isDead(uint32(l)) && m.remap[i][l] >= 0 {
				dead = append(dead, uint32(m.remap[i][l]))
			}
		}
	}
	return dead, true
}

// Replace swaps the merged segments for m.Seg, stored under id, with the
// local documents dead deleted.
func (x *Index) Replace(m *Merge, id int64, dead []uint32) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.segs = slices.DeleteFunc(x.segs, func(g *seg) bool { return slices.Contains(m.segs, g) })
	for _, g := range m.segs {
		for l, sid := range g.s.IDs {
			if p, ok := x.where[sid]; ok && p.seg == g {
				delete(x.where, sid)
				if x.kind == Text {
					x.liveLen -= g.docLen(uint32(l))
				}
			}
		}
	}
	x.add(id, m.Seg, dead)
}
