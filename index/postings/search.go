package postings

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
)

// BM25 parameters, as SQLite FTS5's bm25() uses them.
const (
	k1 = 1.2
	b  = 0.75
)

// Weights are the BM25 weights of the two fields of a text document.
type Weights struct{ Path, Body float64 }

// Hit is one scored document.
type Hit struct {
	ID    uint32 // store id
	Score float64
}

// stats are the collection statistics of a query.
type stats struct {
	n     int
	avgdl float64
	idf   []float64 // per query term
}

func (x *Index) stats(terms []string) stats {
	st := stats{n: len(x.where), idf: make([]float64, len(terms))}
	if st.n > 0 {
		st.avgdl = float64(x.liveLen) / float64(st.n)
	}
	for i, t := range terms {
		df := 0
		for _, g := range x.segs {
			if g.ndead == 0 {
				df += g.s.count(t)
				continue
			}
			for _, d := range g.s.postings(t).docs {
				if !g.isDead(d) {
					df++
				}
			}
		}
		// FTS5: log((N - n + 0.5) / (n + 0.5)), floored at 1e-6.
		idf := math.Log((float64(st.n-df) + 0.5) / (float64(df) + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		st.idf[i] = idf
	}
	return st
}

// contrib is term i's share of a document's score: FTS5's bm25() with
// the field frequencies weighted and summed, D the document's tokens in
// both fields.
func (st *stats) contrib(i int, w Weights, tp uint16, tb uint32, D float64) float64 {
	f := float64(tp)*w.Path + float64(tb)*w.Body
	num := f * (k1 + 1.0)
	denom := f + k1*(1-b+b*D/st.avgdl)
	return st.idf[i] * num / denom
}

// hits is a bounded min-heap of the best hits so far: the worst (lowest
// score, then highest id) on top.
type hits struct {
	k int
	h []Hit
}

func worse(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.ID > b.ID
}

func (h *hits) Len() int           { return len(h.h) }
func (h *hits) Less(i, j int) bool { return worse(h.h[i], h.h[j]) }
func (h *hits) Swap(i, j int)      { h.h[i], h.h[j] = h.h[j], h.h[i] }
func (h *hits) Push(v any)         { h.h = append(h.h, v.(Hit)) }
func (h *hits) Pop() any {
	v := h.h[len(h.h)-1]
	h.h = h.h[:len(h.h)-1]
	return v
}

func (h *hits) offer(c Hit) {
	if len(h.h) < h.k {
		heap.Push(h, c)
		return
	}
	if worse(h.h[0], c) {
		h.h[0] = c
		heap.Fix(h, 0)
	}
}

// threshold is the score a document must reach to enter a full heap
// (-Inf while it is not full).
func (h *hits) threshold() float64 {
	if len(h.h) < h.k {
		return math.Inf(-1)
	}
	return h.h[0].Score
}

func (h *hits) sorted() []Hit {
	out := h.h
	slices.SortFunc(out, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}

// Search returns the k best live documents for the query terms by BM25
// (FTS5's bm25() with the field weights w), best first, ties by store id.
// With all, only documents holding every term are ranked; otherwise those
// holding any. allow, when not nil, admits store ids.
//
// A term repeated in terms counts twice, as a repeated FTS5 phrase does.
// Documents holding every term are found from the shortest list; any-term
// lookups skip documents that only hold terms whose best possible share
// cannot lift them into the top k (MaxScore), so a very common word costs
// little.
func (x *Index) Search(terms []string, all bool, k int, w Weights, allow func(uint32) bool) []Hit {
	if len(terms) == 0 || k <= 0 {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	st := x.stats(terms)
	h := &hits{k: k}
	for _, g := range x.segs {
		if all {
			x.searchAll(g, terms, &st, w, allow, h)
		} else {
			x.searchAny(g, terms, &st, w, allow, h)
		}
	}
	return h.sorted()
}

// cursor walks one term's postings in a segment.
type cursor struct {
	term int // index in the query terms
	p    plist
	pos  int
	ub   float64 // upper bound of the term's share
}

// seek moves c to the first document ≥ d (galloping) and reports whether
// it is d.
func (c *cursor) seek(d uint32) bool {
	docs := c.p.docs
	if c.pos >= len(docs) || docs[c.pos] >= d {
		return c.pos < len(docs) && docs[c.pos] == d
	}
	step := 1
	lo, hi := c.pos, c.pos+1
	for hi < len(docs) && docs[hi] < d {
		lo = hi
		step *= 2
		hi = lo + step
	}
	hi = min(hi, len(docs))
	i, _ := slices.BinarySearch(docs[lo:hi], d)
	c.pos = lo + i
	return c.pos < len(docs) && docs[c.pos] == d
}

func (x *Index) score(g *seg, local uint32, terms []string, cs []cursor, st *stats, w Weights, part []float64) float64 {
	D := float64(g.docLen(local))
	clear(part)
	for i := range cs {
		c := &cs[i]
		if c.pos < len(c.p.docs) && c.p.docs[c.pos] == local {
			part[c.term] = st.contrib(c.term, w, c.p.path[c.pos], c.p.body[c.pos], D)
		}
	}
	s := 0.0
	for _, v := range part { // in query order, as FTS5 sums its phrases
		s += v
	}
	return s
}

func (x *Index) searchAll(g *seg, terms []string, st *stats, w Weights, allow func(uint32) bool, h *hits) {
	cs := make([]cursor, len(terms))
	for i, t := range terms {
		cs[i] = cursor{term: i, p: g.s.postings(t)}
		if len(cs[i].p.docs) == 0 {
			return
		}
	}
	slices.SortFunc(cs, func(a, b cursor) int { return cmp.Compare(len(a.p.docs), len(b.p.docs)) })
	part := make([]float64, len(terms))
	lead := &cs[0]
next:
	for ; lead.pos < len(lead.p.docs); lead.pos++ {
		d := lead.p.docs[lead.pos]
		for i := 1; i < len(cs); i++ {
			if !cs[i].seek(d) {
				if cs[i].pos >= len(cs[i].p.docs) {
					return
				}
				continue next
			}
		}
		if g.isDead(d) || allow != nil && !allow(g.s.IDs[d]) {
			continue
		}
		h.offer(Hit{g.s.IDs[d], x.score(g, d, terms, cs, st, w, part)})
	}
}

// searchAny is MaxScore over one segment: cursors sorted by their upper
// bound; the first p of them are "non-essential" (together they cannot
// reach the heap's threshold), so only documents in the others are
// visited, and the non-essential lists are only probed for those.
func (x *Index) searchAny(g *seg, terms []string, st *stats, w Weights, allow func(uint32) bool, h *hits) {
	var cs []cursor
	for i, t := range terms {
		p := g.s.postings(t)
		if len(p.docs) == 0 {
			continue
		}
		// A share is idf·f(k1+1)/(f+K) < idf·(k1+1); the margin absorbs
		// rounding.
		cs = append(cs, cursor{term: i, p: p, ub: st.idf[i] * (k1 + 1) * (1 + 1e-9)})
	}
	if len(cs) == 0 {
		return
	}
	slices.SortFunc(cs, func(a, b cursor) int { return cmp.Compare(a.ub, b.ub) })
	prefix := make([]float64, len(cs)+1) // prefix[i]: sum of ub of cs[:i]
	for i, c := range cs {
		prefix[i+1] = prefix[i] + c.ub
	}
	part := make([]float64, len(terms))
	p := 0
	thr := h.threshold()
	for p < len(cs) && prefix[p+1] < thr {
		p++
	}
	for p < len(cs) {
		d := uint32(math.MaxUint32)
		for i := p; i < len(cs); i++ {
			if c := &cs[i]; c.pos < len(c.p.docs) && c.p.docs[c.pos] < d {
				d = c.p.docs[c.pos]
			}
		}
		if d == math.MaxUint32 {
			return
		}
		ok := !g.isDead(d) && (allow == nil || allow(g.s.IDs[d]))
		if ok {
			// The essential lists' share, then the bound with the rest.
			D := float64(g.docLen(d))
			partial := 0.0
			for i := p; i < len(cs); i++ {
				if c := &cs[i]; c.pos < len(c.p.docs) && c.p.docs[c.pos] == d {
					partial += st.contrib(c.term, w, c.p.path[c.pos], c.p.body[c.pos], D)
				}
			}
			for i := p - 1; i >= 0 && ok; i-- {
				if partial+prefix[i+1] < thr {
					ok = false
					break
				}
				if c := &cs[i]; c.seek(d) {
					partial += st.contrib(c.term, w, c.p.path[c.pos], c.p.body[c.pos], D)
				}
			}
			if ok {
				h.offer(Hit{g.s.IDs[d], x.score(g, d, terms, cs, st, w, part)})
				if t := h.threshold(); t > thr {
					thr = t
					for p < len(cs) && prefix[p+1] < thr {
						p++
					}
				}
			}
		}
		for i := p; i < len(cs); i++ {
			if c := &cs[i]; c.pos < len(c.p.docs) && c.p.docs[c.pos] == d {
				c.pos++
			}
		}
	}
}
