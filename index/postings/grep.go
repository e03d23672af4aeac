package postings

import (
	"math/bits"
	"slices"

	"github.com/semfs/semfs/index"
)

// TrigramTerm is the term of a packed trigram (index.PackTrigram, 21
// bits) in a Trigram segment: three bytes, big-endian.
func TrigramTerm(t uint32) string {
	return string([]byte{byte(t >> 16), byte(t >> 8), byte(t)})
}

// Grep returns the store ids of the live documents that satisfy q, a
// trigram query from index.PlanGrep, in ascending order. A nil q or QAll
// matches every live document.
func (x *Index) Grep(q *index.Query) []uint32 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var out []uint32
	for _, g := range x.segs {
		set := g.eval(q)
		for i, w := range set {
			if g.dead != nil {
				w &^= g.dead[i]
			}
			for w != 0 {
				bit := uint32(i*64) + uint32(bits.TrailingZeros64(w))
				w &= w - 1
				if int(bit) < g.s.Len() {
					out = append(out, g.s.IDs[bit])
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// eval is the bitset of local documents of g satisfying q.
func (g *seg) eval(q *index.Query) []uint64 {
	n := (g.s.Len() + 63) / 64
	set := make([]uint64, n)
	fill := func() {
		for i := range set {
			set[i] = ^uint64(0)
		}
	}
	if q == nil {
		fill()
		return set
	}
	switch q.Op {
	case index.QAll:
		fill()
	case index.QNone:
	case index.QAnd:
		fill()
		for _, t := range q.Trigrams {
			andList(set, g.s.postings(TrigramTerm(index.PackTrigram(t))).docs)
		}
		for _, s := range q.Sub {
			sub := g.eval(s)
			for i := range set {
				set[i] &= sub[i]
			}
		}
	case index.QOr:
		for _, t := range q.Trigrams {
			for _, d := range g.s.postings(TrigramTerm(index.PackTrigram(t))).docs {
				set[d/64] |= 1 << (d % 64)
			}
		}
		for _, s := range q.Sub {
			sub := g.eval(s)
			for i := range set {
				set[i] |= sub[i]
			}
		}
	}
	return set
}

// andList keeps in set only the documents of docs.
func andList(set []uint64, docs []uint32) {
	m := make([]uint64, len(set))
	for _, d := range docs {
		m[d/64] |= 1 << (d % 64)
	}
	for i := range set {
		set[i] &= m[i]
	}
}
