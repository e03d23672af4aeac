package postings

import (
	"encoding/binary"
	"hash/crc32"
	"slices"
)

// MergeFactor is the tier width of the merge policy: segments whose live
// document counts have the same order of magnitude in base MergeFactor
// form a tier, and a tier of MergeFactor segments is merged into one, so
// an index of n documents holds at most about MergeFactor·log(n)
// segments and each posting is rewritten about log(n) times.
//
// 16 rather than 8 rewrites each posting a quarter less often (log16 n
// against log8 n), which bulk ingest pays for in the writer's
// transactions, at the price of up to twice the segments a query visits
// (docs/bench/ingest.md, ninth session: 100k notes ingest 1.18× faster,
// median of 10 alternated pairs; content search p50 6.3 ms against
// 5.8, where 20 ms is allowed).
const MergeFactor = 16

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

// concatBuilt is Concat of segments a builder made (none decoded). It
// encodes the terms section of the result (EncodeTerms) straight from
// them, each list its lists in segs one after the other, the documents
// shifted by the documents before their segment, without copying the
// postings into lists of the result first; the result reads its postings
// from that section, as a decoded segment does.
func concatBuilt(segs []*Segment) *Segment {
	kind := segs[0].Kind
	out := &Segment{Kind: kind}
	docs, size := 0, 0
	for _, s := range segs {
		docs += len(s.IDs)
		size += s.termsRoom()
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
	e := &encodedTerms{}
	b := make([]byte, 0, size)
	pos := make([]int, len(segs)) // next term of each segment
	var has []int
	for {
		term := ""
		has = has[:0]
		for i, s := range segs {
			if pos[i] >= len(s.terms) {
				continue
			}
			switch t := s.terms[pos[i]]; {
			case len(has) == 0 || t < term:
				term, has = t, append(has[:0], i)
			case t == term:
				has = append(has, i)
			}
		}
		if len(has) == 0 {
			break
		}
		df := uint32(0)
		for _, i := range has {
			s := segs[i]
			df += s.offs[pos[i]+1] - s.offs[pos[i]]
		}
		e.tpos = append(e.tpos, uint32(len(b)))
		b = binary.AppendUvarint(b, uint64(len(term)))
		b = append(b, term...)
		b = binary.AppendUvarint(b, uint64(df))
		e.toffs = append(e.toffs, uint32(len(b)))
		e.dfs = append(e.dfs, df)
		b = slices.Grow(b, listRoom(kind, docs, df))
		buf, n := b[:cap(b)], len(b)
		if nb, ok := bitmapBytes(docs, df); ok && kind == Trigram {
			bm := buf[n : n+nb]
			clear(bm)
			for _, i := range has {
				s := segs[i]
				setBits(bm, s.docs[s.offs[pos[i]]:s.offs[pos[i]+1]], shift[i])
				pos[i]++
			}
			b = buf[:n+nb]
			continue
		}
		last := uint32(0)
		for _, i := range has {
			s, sh := segs[i], shift[i]
			lo, hi := s.offs[pos[i]], s.offs[pos[i]+1]
			for j := lo; j < hi; j++ {
				d := s.docs[j] + sh
				if kind == Text {
					n = putText(buf, n, d-last, s.pathTF[j], s.bodyTF[j])
				} else {
					n = putUvarint(buf, n, d-last)
				}
				last = d
			}
			pos[i]++
		}
		b = buf[:n]
	}
	// The section starts with the number of terms, known only now.
	count := binary.AppendUvarint(nil, uint64(len(e.tpos)))
	b = slices.Insert(b, 0, count...)
	for i := range e.tpos {
		e.tpos[i] += uint32(len(count))
		e.toffs[i] += uint32(len(count))
	}
	e.b = b
	out.pre = e
	out.raw, out.tpos, out.toffs, out.dfs = e.b, e.tpos, e.toffs, e.dfs
	return out
}

// merge joins the live documents of segs (dead: their tombstones) into one
// segment. Documents keep their order, segment by segment, so every
// merged list is the concatenation of the old ones, renumbered; terms are
// walked in order in all segments at once.
func merge(segs []*seg, dead [][]uint64) (*Segment, [][]int32) {
	if out, remap, ok := mergeEncoded(segs, dead); ok {
		return out, remap
	}
	return mergeLists(segs, dead)
}

// mergeLists is merge through each list decoded and renumbered.
func mergeLists(segs []*seg, dead [][]uint64) (*Segment, [][]int32) {
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

// mergeEncoded is merge of decoded segments none of whose documents is
// deleted (a bulk ingest's merges): each document's new number is its
// old one shifted by the documents of the segments before, so a merged
// list is the old lists' bytes one after the other, only the first gap
// of each re-encoded (a Trigram list that is a bitmap, in a segment or
// in the result, is ORed in or written from its documents instead). It
// writes the compact segment (as Compact would) without decoding the
// postings into lists and encoding them again, and reports false, doing
// nothing, when a segment is not decoded or has deleted documents.
func mergeEncoded(segs []*seg, dead [][]uint64) (*Segment, [][]int32, bool) {
	docs, size := 0, 16
	for i, g := range segs {
		if !g.s.encoded() || slices.ContainsFunc(dead[i], func(w uint64) bool { return w != 0 }) ||
			slices.Contains(g.s.dfs, 0) { // an empty list (none is written): mergeLists drops its term
			return nil, nil, false
		}
		docs += g.s.Len()
		size += len(g.s.raw)
	}
	kind := segs[0].s.Kind
	out := &Segment{Kind: kind, IDs: make([]uint32, 0, docs)}
	if kind == Text {
		out.PathLen, out.BodyLen = make([]uint32, 0, docs), make([]uint32, 0, docs)
	}
	remap := make([][]int32, len(segs))
	shift := make([]uint32, len(segs)) // documents before each segment
	for i, g := range segs {
		shift[i] = uint32(len(out.IDs))
		remap[i] = make([]int32, g.s.Len())
		for l := range remap[i] {
			remap[i][l] = int32(shift[i]) + int32(l)
		}
		out.IDs = append(out.IDs, g.s.IDs...)
		if kind == Text {
			out.PathLen = append(out.PathLen, g.s.PathLen...)
			out.BodyLen = append(out.BodyLen, g.s.BodyLen...)
		}
	}
	b := make([]byte, 0, size)
	b = append(b, magic...)
	b = append(b, byte(kind))
	b = out.appendDocs(b)
	head := len(b) // the terms section starts with their count, known at its end
	pos := make([]int, len(segs))
	var has []int
	var scratch []uint32 // a Trigram list's documents
	for {
		var term []byte
		if term, has = nextTerm(segs, pos, has); has == nil {
			break
		}
		df := uint32(0)
		for _, i := range has {
			df += segs[i].s.dfs[pos[i]]
		}
		out.tpos = append(out.tpos, uint32(len(b)))
		b = binary.AppendUvarint(b, uint64(len(term)))
		b = append(b, term...)
		b = binary.AppendUvarint(b, uint64(df))
		out.toffs = append(out.toffs, uint32(len(b)))
		out.dfs = append(out.dfs, df)
		if nb, bm := bitmapBytes(docs, df); kind == Trigram &&
			(bm || slices.ContainsFunc(has, func(i int) bool { return segs[i].s.isBitmap(pos[i]) })) {
			// A bitmap in or out: the lists' documents, shifted, one
			// list after another.
			if bm {
				b = slices.Grow(b, nb)
				b = b[:len(b)+nb]
				clear(b[len(b)-nb:])
			}
			last := uint32(0)
			for _, i := range has {
				s := segs[i].s
				if nbi, in := s.bitmap(s.dfs[pos[i]]); bm && in { // bitmap to bitmap: its bytes, shifted
					orShifted(b[len(b)-nb:], s.raw[s.toffs[pos[i]]:][:nbi], shift[i])
					pos[i]++
					continue
				}
				scratch = s.rawDocs(scratch[:0], pos[i])
				if bm {
					setBits(b[len(b)-nb:], scratch, shift[i])
				} else {
					for _, d := range scratch {
						b = binary.AppendUvarint(b, uint64(d+shift[i]-last))
						last = d + shift[i]
					}
				}
				pos[i]++
			}
			continue
		}
		last := uint32(0) // the last document written to the list
		for k, i := range has {
			// The first gap is from the list's first document to the
			// last one written (for Text, under the same low code bits).
			list := segs[i].s.listBytes(pos[i])
			first, n := binary.Uvarint(list)
			if kind == Text {
				b = binary.AppendUvarint(b, uint64(uint32(first>>2)+shift[i]-last)<<2|first&3)
			} else {
				b = binary.AppendUvarint(b, uint64(uint32(first)+shift[i]-last))
			}
			b = append(b, list[n:]...)
			if k < len(has)-1 {
				last = shift[i] + lastDoc(list, kind)
			}
			pos[i]++
		}
	}
	count := binary.AppendUvarint(nil, uint64(len(out.tpos)))
	b = slices.Insert(b, head, count...)
	for i := range out.tpos {
		out.tpos[i] += uint32(len(count))
		out.toffs[i] += uint32(len(count))
	}
	out.raw = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	return out, remap, true
}

// orShifted sets in bitmap dst the bits of bitmap src, each shift
// documents further. src names no document past its segment (Decode
// checks it), so every bit lands within dst.
func orShifted(dst, src []byte, shift uint32) {
	at, r := int(shift/8), shift%8
	if r == 0 {
		for j, c := range src {
			dst[at+j] |= c
		}
		return
	}
	for j, c := range src {
		if c == 0 {
			continue
		}
		dst[at+j] |= c << r
		if hi := c >> (8 - r); hi != 0 {
			dst[at+j+1] |= hi
		}
	}
}

// nextTerm returns the next term in order across segs (pos: each
// segment's next term) and the segments holding it, in has (reused), or
// a nil has when no term is left.
func nextTerm(segs []*seg, pos []int, has []int) ([]byte, []int) {
	var term []byte
	has = has[:0]
	for i, g := range segs {
		if pos[i] >= len(g.s.tpos) {
			continue
		}
		t := g.s.termBytes(pos[i])
		switch {
		case len(has) == 0 || string(t) < string(term):
			term, has = t, append(has[:0], i)
		case string(t) == string(term):
			has = append(has, i)
		}
	}
	if len(has) == 0 {
		return nil, nil
	}
	return term, has
}

// listBytes is the encoded postings of term i of a decoded segment: from
// its first gap to the next term (or the checksum).
func (s *Segment) listBytes(i int) []byte {
	end := len(s.raw) - 4
	if i+1 < len(s.tpos) {
		end = int(s.tpos[i+1])
	}
	return s.raw[s.toffs[i]:end]
}

// lastDoc is the last document of an encoded list: the sum of its gaps
// (for Text, each a word's high bits, then two frequencies after a word
// of code 0), in one pass over the bytes (a varint ends at a byte below
// 0x80).
func lastDoc(list []byte, kind Kind) uint32 {
	var doc uint32
	var v uint64
	var shift uint
	skip := 0 // frequencies still to pass over after a Text word of code 0
	for _, c := range list {
		if c >= 0x80 {
			v |= uint64(c&0x7f) << shift
			shift += 7
			continue
		}
		v |= uint64(c) << shift
		switch {
		case skip > 0:
			skip--
		case kind == Text:
			doc += uint32(v >> 2)
			if v&3 == 0 {
				skip = 2
			}
		default:
			doc += uint32(v)
		}
		v, shift = 0, 0
	}
	return doc
}
