package postings

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Kind is what a segment's postings carry.
type Kind uint8

const (
	// Text postings carry each document's term frequency in the path and
	// body fields, and each document's field lengths (BM25 needs both).
	Text Kind = 1
	// Trigram postings carry document numbers only (grep candidates).
	Trigram Kind = 2
)

// Segment is an immutable set of postings over its documents, numbered
// 0..Len()-1 within the segment ("local" numbers); IDs maps them to the
// store's ids (chunk or file row ids). Postings list local numbers in
// ascending order.
type Segment struct {
	Kind Kind
	// IDs is the store id of each local document. A store fills it when it
	// assigns ids, before Encode.
	IDs []uint32
	// PathLen and BodyLen are each document's token counts (Text only).
	PathLen, BodyLen []uint32

	terms  []string // ascending
	offs   []uint32 // postings of terms[i]: docs[offs[i]:offs[i+1]]
	docs   []uint32
	pathTF []uint16 // Text only, parallel to docs
	bodyTF []uint32

	// A decoded segment keeps its encoded bytes and decodes a term's list
	// when a lookup asks for it (about a third of the memory of decoded
	// lists; a lookup decodes only its own terms' lists): raw[toffs[i]:]
	// holds the dfs[i] postings of term i (Encode). A
	// Concat of built segments reads its lists so too, raw being only its
	// terms section (pre.b).
	raw   []byte
	toffs []uint32
	dfs   []uint32
	// The terms of a decoded segment stay in raw too (no string per term
	// per segment): raw[tpos[i]:] is term i's length and bytes.
	tpos []uint32

	// pre is the encoded terms section, made ahead by EncodeTerms.
	pre *encodedTerms
}

// encodedTerms is the terms section of an encoding (it does not depend
// on the ids), with tpos and toffs relative to its start.
type encodedTerms struct {
	b           []byte
	tpos, toffs []uint32
	dfs         []uint32
}

// Len is the number of documents in s.
func (s *Segment) Len() int { return len(s.IDs) }

// Terms is the number of distinct terms in s.
func (s *Segment) Terms() int {
	if s.raw != nil {
		return len(s.tpos)
	}
	return len(s.terms)
}

// termBytes is term i; the caller must not change or keep it.
func (s *Segment) termBytes(i int) []byte {
	if s.raw != nil {
		b := s.raw[s.tpos[i]:]
		l, n := binary.Uvarint(b)
		return b[n : n+int(l)]
	}
	return []byte(s.terms[i])
}

// find returns the number of term in s.
func (s *Segment) find(term string) (int, bool) {
	if s.raw == nil {
		return slices.BinarySearch(s.terms, term)
	}
	i := sort.Search(len(s.tpos), func(i int) bool { return string(s.termBytes(i)) >= term })
	return i, i < len(s.tpos) && string(s.termBytes(i)) == term
}

// postings returns the list of term (nil when s does not hold it).
func (s *Segment) postings(term string) plist {
	i, ok := s.find(term)
	if !ok {
		return plist{}
	}
	return s.postingsAt(i)
}

// postingsAt returns the list of s.terms[i].
func (s *Segment) postingsAt(i int) plist {
	if s.raw != nil {
		n := s.dfs[i]
		p := plist{docs: make([]uint32, n)}
		if s.Kind == Text {
			p.path, p.body = make([]uint16, n), make([]uint32, n)
		}
		if s.Kind == Trigram {
			p.docs = s.rawDocs(p.docs[:0], i)
			return p
		}
		b, last := s.raw[s.toffs[i]:], uint32(0)
		for j := range p.docs {
			g, path, body, k := readText(b)
			b = b[k:]
			last += g
			p.docs[j], p.path[j], p.body[j] = last, path, body
		}
		return p
	}
	a, b := s.offs[i], s.offs[i+1]
	p := plist{docs: s.docs[a:b]}
	if s.Kind == Text {
		p.path, p.body = s.pathTF[a:b], s.bodyTF[a:b]
	}
	return p
}

// postingsLen is the number of postings in s (all lists together).
func (s *Segment) postingsLen() int {
	if s.raw == nil {
		return len(s.docs)
	}
	n := 0
	for _, df := range s.dfs {
		n += int(df)
	}
	return n
}

// appendList appends the list of term i to out's postings, each document
// renumbered by remap (-1: left out). It is postingsAt without the
// intermediate list, for merges.
func (s *Segment) appendList(i int, remap []int32, out *Segment) {
	if s.raw == nil {
		a, b := s.offs[i], s.offs[i+1]
		for j, d := range s.docs[a:b] {
			if nd := remap[d]; nd >= 0 {
				out.docs = append(out.docs, uint32(nd))
				if s.Kind == Text {
					out.pathTF = append(out.pathTF, s.pathTF[int(a)+j])
					out.bodyTF = append(out.bodyTF, s.bodyTF[int(a)+j])
				}
			}
		}
		return
	}
	if s.Kind == Trigram {
		start := len(out.docs)
		out.docs = s.rawDocs(out.docs, i)
		kept := out.docs[:start]
		for _, d := range out.docs[start:] {
			if nd := remap[d]; nd >= 0 {
				kept = append(kept, uint32(nd))
			}
		}
		out.docs = kept
		return
	}
	b, last := s.raw[s.toffs[i]:], uint32(0)
	for range s.dfs[i] {
		g, path, body, k := readText(b)
		b = b[k:]
		last += g
		if nd := remap[last]; nd >= 0 {
			out.docs = append(out.docs, uint32(nd))
			out.pathTF = append(out.pathTF, path)
			out.bodyTF = append(out.bodyTF, body)
		}
	}
}

// count is the number of documents in the list of term.
func (s *Segment) count(term string) int {
	i, ok := s.find(term)
	switch {
	case !ok:
		return 0
	case s.raw != nil:
		return int(s.dfs[i])
	}
	return int(s.offs[i+1] - s.offs[i])
}

// plist is one term's postings in one segment.
type plist struct {
	docs []uint32
	path []uint16
	body []uint32
}

// TF is a term's frequency in the two fields of a text document.
type TF struct {
	Path uint16
	Body uint32
}

// Doc is one analysed text document.
type Doc struct {
	Terms            []TermTF // distinct terms
	PathLen, BodyLen uint32
}

// TermTF is one term of a Doc.
type TermTF struct {
	Term string
	TF
}

// TextDoc analyses a document whose path terms are pathTerms (Terms of the
// path's index.IndexText) and whose body is an index.IndexText output.
func TextDoc(pathTerms []string, body string) Doc {
	var a Analyzer
	return a.TextDoc(pathTerms, body)
}

// Builder collects documents into a new Segment.
type Builder struct {
	kind    Kind
	lookup  map[string]int32
	terms   []string // by list number
	post    flatPostings
	pathLen []uint32
	bodyLen []uint32
	n       uint32
	tri     []int32 // AddTrigrams: list number + 1 of each packed trigram
}

// NewBuilder returns an empty builder of segments of kind k.
func NewBuilder(k Kind) *Builder {
	return &Builder{kind: k, lookup: map[string]int32{}}
}

// Len is the number of documents added.
func (b *Builder) Len() int { return int(b.n) }

// list returns the list number of term.
func (b *Builder) list(term string) int32 {
	i, ok := b.lookup[term]
	if !ok {
		i = int32(len(b.terms))
		b.lookup[term] = i
		b.terms = append(b.terms, term)
	}
	return i
}

// AddText adds a text document as the next local number.
func (b *Builder) AddText(d Doc) {
	lists, path, body := b.post.reserve(len(d.Terms), true)
	for k, t := range d.Terms {
		lists[k], path[k], body[k] = b.list(t.Term), t.Path, t.Body
	}
	b.post.endDoc()
	b.pathLen = append(b.pathLen, d.PathLen)
	b.bodyLen = append(b.bodyLen, d.BodyLen)
	b.n++
}

// AddTerms adds a document of distinct terms (a Trigram segment) as the
// next local number.
func (b *Builder) AddTerms(terms []string) {
	lists, _, _ := b.post.reserve(len(terms), false)
	for k, t := range terms {
		lists[k] = b.list(t)
	}
	b.post.endDoc()
	b.n++
}

// triPool holds AddTrigrams' list indexes (8 MiB each, all zero), so that
// a Put of one file does not allocate and clear one.
var triPool = sync.Pool{New: func() any {
	s := make([]int32, 1<<21)
	return &s
}}

// AddTrigrams adds a document of distinct packed trigrams
// (index.PackTrigram; a Trigram segment) as the next local number.
func (b *Builder) AddTrigrams(tris []uint32) {
	if b.tri == nil {
		b.tri = *triPool.Get().(*[]int32)
	}
	lists, _, _ := b.post.reserve(len(tris), false)
	for k, t := range tris {
		t &= 1<<21 - 1
		i := b.tri[t] - 1
		if i < 0 {
			i = int32(len(b.terms))
			b.tri[t] = i + 1
			b.terms = append(b.terms, TrigramTerm(t))
		}
		lists[k] = i
	}
	b.post.endDoc()
	b.n++
}

// Segment returns the built segment; its IDs are zero until the caller
// sets them. A builder builds one segment: it holds no postings after.
func (b *Builder) Segment() *Segment {
	if b.tri != nil {
		// Hand the index back clean: only the entries of b's terms are set.
		for _, t := range b.terms {
			b.tri[uint32(t[0])<<16|uint32(t[1])<<8|uint32(t[2])] = 0
		}
		tri := b.tri
		triPool.Put(&tri)
		b.tri = nil
	}
	s := b.post.flatten(b.kind, b.terms, int(b.n))
	if b.kind == Text {
		s.PathLen, s.BodyLen = b.pathLen, b.bodyLen
	}
	return s
}

// flatPostings collects a builder's postings in document order — each
// posting's list number and, for Text, its frequencies — and sorts them
// into per-term lists once, in flatten: a slice per term, appended to and
// grown document by document, was a fifth of a small-file ingest's
// allocations. A document's postings go in one piece into blocks taken
// from and given back to pools: one growing slice was copied at every
// growth and allocated anew for every batch.
type flatPostings struct {
	lists [][]int32  // blocks: the list number of each posting
	path  [][]uint16 // Text: each posting's frequency in the path
	body  [][]uint32 // Text: and in the body
	n     int        // postings
	ends  []uint32   // the end of each document's postings (counted over all blocks)
}

// flatBlock is the capacity of a pooled block of a flatPostings; a
// document with more postings gets a block of its own.
const flatBlock = 1 << 14

var (
	listBlocks = sync.Pool{New: func() any { return new([flatBlock]int32) }}
	pathBlocks = sync.Pool{New: func() any { return new([flatBlock]uint16) }}
	bodyBlocks = sync.Pool{New: func() any { return new([flatBlock]uint32) }}
)

// reserve returns room for the next n postings (with tf, for their
// frequencies too), in one block.
func (f *flatPostings) reserve(n int, tf bool) (lists []int32, path []uint16, body []uint32) {
	last := len(f.lists) - 1
	if last < 0 || cap(f.lists[last])-len(f.lists[last]) < n {
		f.newBlock(n, tf)
		last++
	}
	f.n += n
	l := f.lists[last]
	f.lists[last], lists = l[:len(l)+n], l[len(l):len(l)+n]
	if tf {
		p, b := f.path[last], f.body[last]
		f.path[last], path = p[:len(p)+n], p[len(p):len(p)+n]
		f.body[last], body = b[:len(b)+n], b[len(b):len(b)+n]
	}
	return lists, path, body
}

// newBlock starts a block with room for at least n postings.
func (f *flatPostings) newBlock(n int, tf bool) {
	if n > flatBlock {
		f.lists = append(f.lists, make([]int32, 0, n))
		if tf {
			f.path = append(f.path, make([]uint16, 0, n))
			f.body = append(f.body, make([]uint32, 0, n))
		}
		return
	}
	f.lists = append(f.lists, listBlocks.Get().(*[flatBlock]int32)[:0])
	if tf {
		f.path = append(f.path, pathBlocks.Get().(*[flatBlock]uint16)[:0])
		f.body = append(f.body, bodyBlocks.Get().(*[flatBlock]uint32)[:0])
	}
}

// endDoc ends the postings of the current document.
func (f *flatPostings) endDoc() { f.ends = append(f.ends, uint32(f.n)) }

// release gives the pooled blocks back; f is empty after.
func (f *flatPostings) release() {
	for _, b := range f.lists {
		if cap(b) == flatBlock {
			listBlocks.Put((*[flatBlock]int32)(b[:flatBlock]))
		}
	}
	for _, b := range f.path {
		if cap(b) == flatBlock {
			pathBlocks.Put((*[flatBlock]uint16)(b[:flatBlock]))
		}
	}
	for _, b := range f.body {
		if cap(b) == flatBlock {
			bodyBlocks.Put((*[flatBlock]uint32)(b[:flatBlock]))
		}
	}
	*f = flatPostings{}
}

// flatten makes a segment of n documents from the postings (list i is
// terms[i]'s; terms without postings are left out), terms in order. It
// releases f.
func (f *flatPostings) flatten(kind Kind, terms []string, n int) *Segment {
	defer f.release()
	next := make([]uint32, len(terms)) // postings per list, then each list's next slot
	for _, b := range f.lists {
		for _, l := range b {
			next[l]++
		}
	}
	order := make([]int32, 0, len(terms))
	for i, c := range next {
		if c > 0 {
			order = append(order, int32(i))
		}
	}
	slices.SortFunc(order, func(x, y int32) int { return strings.Compare(terms[x], terms[y]) })
	total := f.n
	s := &Segment{Kind: kind, IDs: make([]uint32, n), terms: make([]string, len(order)),
		offs: make([]uint32, len(order)+1), docs: make([]uint32, total)}
	var at uint32
	for i, o := range order {
		s.terms[i] = terms[o]
		s.offs[i] = at
		at, next[o] = at+next[o], at
	}
	s.offs[len(order)] = at
	if kind == Text {
		s.pathTF, s.bodyTF = make([]uint16, total), make([]uint32, total)
	}
	// Documents in order: each list gets its documents ascending. A
	// document's postings are in one block (reserve), which holds the
	// postings from base on.
	bi, base, lo := 0, uint32(0), uint32(0)
	for doc, hi := range f.ends {
		if hi == lo {
			continue
		}
		for hi-base > uint32(len(f.lists[bi])) {
			base += uint32(len(f.lists[bi]))
			bi++
		}
		lists := f.lists[bi][lo-base : hi-base]
		if kind == Text {
			path, body := f.path[bi][lo-base:hi-base], f.body[bi][lo-base:hi-base]
			for i, l := range lists {
				j := next[l]
				next[l] = j + 1
				s.docs[j], s.pathTF[j], s.bodyTF[j] = uint32(doc), path[i], body[i]
			}
		} else {
			for _, l := range lists {
				j := next[l]
				next[l] = j + 1
				s.docs[j] = uint32(doc)
			}
		}
		lo = hi
	}
	return s
}

// TextBuilder analyses text documents and builds a Text segment of them.
// It counts a document's terms by the numbers its Analyzer gives them and
// appends postings by those numbers, so a word costs one map lookup and a
// document none. Not safe for concurrent use.
type TextBuilder struct {
	a       Analyzer
	post    flatPostings // list numbers are term numbers
	pathLen []uint32
	bodyLen []uint32
}

// Add analyses a document as TextDoc does and adds it as the next local
// number.
func (b *TextBuilder) Add(pathTerms []string, body string) { b.add(pathTerms, body, false) }

// AddRaw is Add(pathTerms, index.IndexText(text)) without building that
// string.
func (b *TextBuilder) AddRaw(pathTerms []string, text string) { b.add(pathTerms, text, true) }

func (b *TextBuilder) add(pathTerms []string, body string, raw bool) {
	a := &b.a
	a.pinned = true
	bodyLen := a.count(pathTerms, body, raw)
	lists, path, bodies := b.post.reserve(len(a.seen), true)
	for k, id := range a.seen {
		tf := &a.tf[id]
		lists[k], path[k], bodies[k] = id, tf.Path, tf.Body
		*tf = TF{}
	}
	b.post.endDoc()
	b.pathLen = append(b.pathLen, uint32(len(pathTerms)))
	b.bodyLen = append(b.bodyLen, bodyLen)
}

// Len is the number of documents added.
func (b *TextBuilder) Len() int { return len(b.pathLen) }

// Segment returns the built segment; its IDs are zero until the caller
// sets them. A builder builds one segment: it holds no postings after.
func (b *TextBuilder) Segment() *Segment {
	s := b.post.flatten(Text, b.a.terms, len(b.pathLen))
	s.PathLen, s.BodyLen = b.pathLen, b.bodyLen
	return s
}

// magic starts every encoded segment; its last byte is the format version.
const magic = "SFP\x02"

// ErrCorrupt is returned by Decode for bytes that are not a whole segment.
var ErrCorrupt = errors.New("postings: corrupt segment")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Encode returns s as bytes: magic, kind, the documents (ids as zig-zag
// deltas, field lengths), the terms in order each with its postings
// (for Text, document gaps with their frequencies, putText; for Trigram,
// document gaps as uvarints or a bitmap, bitmapBytes), and a CRC-32C of
// everything before it.
func (s *Segment) Encode() []byte {
	if s.encoded() {
		return s.raw
	}
	return s.encode(nil)
}

// encoded reports whether s.raw holds all of s encoded (decoded or
// compacted), not only its terms section (a Concat of built segments).
func (s *Segment) encoded() bool { return s.raw != nil && s.pre == nil }

// Compact returns s as Decode(s.Encode()) would (the encoded bytes, each
// term's list decoded when a lookup asks for it) without parsing the
// bytes again: the encoder notes where each term and list starts.
func (s *Segment) Compact() *Segment {
	if s.encoded() {
		return s
	}
	c := &Segment{Kind: s.Kind, IDs: s.IDs, PathLen: s.PathLen, BodyLen: s.BodyLen}
	c.raw = s.encode(c)
	return c
}

// EncodeTerms encodes the terms and their postings now, so that a later
// Encode or Compact, once the ids are set, only writes the documents and
// copies them: a store prepares a segment on every core before its single
// writer assigns ids.
func (s *Segment) EncodeTerms() {
	if s.raw == nil && s.pre == nil {
		s.pre = s.encodeTerms(nil)
	}
}

// encode is Encode; with c, it sets c.tpos, c.toffs and c.dfs to the
// positions Decode finds.
func (s *Segment) encode(c *Segment) []byte {
	pre := s.pre
	size := 16 + 5*len(s.IDs)
	if pre == nil {
		size += s.termsRoom()
	} else {
		size += len(pre.b)
	}
	out := make([]byte, 0, size)
	out = append(out, magic...)
	out = append(out, byte(s.Kind))
	out = s.appendDocs(out)
	if pre == nil {
		pre = s.encodeTerms(out)
		out = pre.b
	} else {
		out = append(out, pre.b...)
	}
	if c != nil {
		base := uint32(len(out) - len(pre.b))
		if s.pre == nil {
			base = 0 // encodeTerms wrote after out's start
		}
		c.tpos, c.toffs = make([]uint32, len(pre.tpos)), make([]uint32, len(pre.toffs))
		for i := range pre.tpos {
			c.tpos[i], c.toffs[i] = base+pre.tpos[i], base+pre.toffs[i]
		}
		c.dfs = pre.dfs
	}
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
}

// appendDocs appends the documents section of s to out: their number,
// the ids as zig-zag deltas and, for Text, the two field lengths.
func (s *Segment) appendDocs(out []byte) []byte {
	out = binary.AppendUvarint(out, uint64(len(s.IDs)))
	prev := int64(0)
	for _, id := range s.IDs {
		out = binary.AppendVarint(out, int64(id)-prev)
		prev = int64(id)
	}
	if s.Kind == Text {
		for i := range s.IDs {
			out = binary.AppendUvarint(out, uint64(s.PathLen[i]))
			out = binary.AppendUvarint(out, uint64(s.BodyLen[i]))
		}
	}
	return out
}

// encodeTerms appends the terms section of s to out: the number of
// terms, then each term with its postings (see Encode). Positions are of
// the bytes returned, out included.
func (s *Segment) encodeTerms(out []byte) *encodedTerms {
	e := &encodedTerms{tpos: make([]uint32, 0, len(s.terms)), toffs: make([]uint32, 0, len(s.terms)), dfs: make([]uint32, 0, len(s.terms))}
	if out == nil {
		out = make([]byte, 0, s.termsRoom())
	}
	out = binary.AppendUvarint(out, uint64(len(s.terms)))
	for i, t := range s.terms {
		e.tpos = append(e.tpos, uint32(len(out)))
		out = binary.AppendUvarint(out, uint64(len(t)))
		out = append(out, t...)
		a, b := s.offs[i], s.offs[i+1]
		out = binary.AppendUvarint(out, uint64(b-a))
		e.toffs = append(e.toffs, uint32(len(out)))
		e.dfs = append(e.dfs, b-a)
		// Room for the list at its longest, then plain stores.
		out = slices.Grow(out, listRoom(s.Kind, len(s.IDs), b-a))
		buf, n := out[:cap(out)], len(out)
		last := uint32(0)
		if s.Kind == Text {
			for j := a; j < b; j++ {
				n = putText(buf, n, s.docs[j]-last, s.pathTF[j], s.bodyTF[j])
				last = s.docs[j]
			}
		} else if nb, ok := bitmapBytes(len(s.IDs), b-a); ok {
			n = putBitmap(buf, n, nb, s.docs[a:b])
		} else {
			for _, d := range s.docs[a:b] {
				n = putUvarint(buf, n, d-last)
				last = d
			}
		}
		out = buf[:n]
	}
	e.b = out
	return e
}

// termsRoom is about the bytes the terms section of a built s takes
// encoded: the room its encoder allocates at once (it grows the buffer
// past that only if a list needs more). Text postings take 1.5 bytes
// each in the synthetic notes of the eval, a dense Trigram list a bitmap:
// four bytes a posting, the room the encoders used to take, was five
// times the bytes written, allocated and cleared for every batch.
func (s *Segment) termsRoom() int {
	n := binary.MaxVarintLen32
	nb, _ := bitmapBytes(len(s.IDs), 0)
	for i, t := range s.terms {
		df := int(s.offs[i+1] - s.offs[i])
		n += len(t) + 2*binary.MaxVarintLen32
		if s.Kind == Text {
			n += 2 * df
		} else {
			n += min(df+df/8, nb+1)
		}
	}
	return n
}

// putUvarint stores v as a uvarint (binary.AppendUvarint's bytes) at
// b[n:], which has room for it, and returns the position after it.
func putUvarint(b []byte, n int, v uint32) int {
	for v >= 0x80 {
		b[n] = byte(v) | 0x80
		v >>= 7
		n++
	}
	b[n] = byte(v)
	return n + 1
}

// A Text posting is one uvarint of its document gap shifted left by
// two, whose low bits name the frequencies (path, body) when they are
// one of the three commonest pairs; code 0 is followed by both as
// uvarints. In the synthetic notes of the eval, (0,1), (0,2) and (1,0)
// are 89 % of the postings: most take one byte instead of three.
var textFreqs = [4]struct {
	path uint16
	body uint32
}{{}, {0, 1}, {0, 2}, {1, 0}}

// textCode is the code of the frequencies path and body (0: written out).
func textCode(path uint16, body uint32) uint32 {
	for c := uint32(1); c < 4; c++ {
		if f := textFreqs[c]; f.path == path && f.body == body {
			return c
		}
	}
	return 0
}

// maxPosting is the most bytes one posting of kind k takes.
func maxPosting(k Kind) int {
	if k == Text {
		return 2*binary.MaxVarintLen32 + 3 // a 34-bit word, a uint16, a uint32
	}
	return binary.MaxVarintLen32
}

// putText stores a Text posting (document gap and frequencies) at b[n:],
// which has room for it (maxPosting), and returns the position after it.
func putText(b []byte, n int, gap uint32, path uint16, body uint32) int {
	c := textCode(path, body)
	n += binary.PutUvarint(b[n:], uint64(gap)<<2|uint64(c))
	if c == 0 {
		n = putUvarint(b, n, uint32(path))
		n = putUvarint(b, n, body)
	}
	return n
}

// readText reads the Text posting at the start of b, which Decode has
// checked: its document gap, frequencies, and length in bytes.
func readText(b []byte) (gap uint32, path uint16, body uint32, n int) {
	w, n := binary.Uvarint(b)
	gap = uint32(w >> 2)
	if c := w & 3; c != 0 {
		return gap, textFreqs[c].path, textFreqs[c].body, n
	}
	p, k := binary.Uvarint(b[n:])
	n += k
	v, k := binary.Uvarint(b[n:])
	return gap, uint16(p), uint32(v), n + k
}

// A Trigram list of more documents than its segment has bytes of a
// bitmap of them (df > ⌈n/8⌉) is that bitmap instead of gaps (bit d%8
// of byte d/8 for document d): a gap takes a byte at least, and in the
// synthetic notes of the eval three quarters of all trigram postings are
// in such lists, which a bitmap holds in about half the bytes. Whether a
// list is a bitmap follows from its df and the segment's documents.

// bitmapBytes returns the bytes of a bitmap of n documents, and whether
// a Trigram list of df of them is one.
func bitmapBytes(n int, df uint32) (int, bool) {
	nb := (n + 7) / 8
	return nb, uint64(df) > uint64(nb)
}

// isBitmap reports whether list i of a decoded s is a bitmap.
func (s *Segment) isBitmap(i int) bool {
	_, ok := s.bitmap(s.dfs[i])
	return ok
}

// rawDocs appends the documents of list i of a decoded Trigram segment
// to dst.
func (s *Segment) rawDocs(dst []uint32, i int) []uint32 {
	b := s.raw[s.toffs[i]:]
	if nb, ok := s.bitmap(s.dfs[i]); ok {
		return readBitmap(dst, b[:nb])
	}
	last := uint32(0)
	for range s.dfs[i] {
		g, k := binary.Uvarint(b)
		b = b[k:]
		last += uint32(g)
		dst = append(dst, last)
	}
	return dst
}

// bitmap is bitmapBytes for a list of df documents of s.
func (s *Segment) bitmap(df uint32) (int, bool) {
	if s.Kind != Trigram {
		return 0, false
	}
	return bitmapBytes(len(s.IDs), df)
}

// listRoom is the most bytes a list of df of n documents of kind k takes.
func listRoom(k Kind, n int, df uint32) int {
	if nb, ok := bitmapBytes(n, df); ok && k == Trigram {
		return nb
	}
	return int(df) * maxPosting(k)
}

// putBitmap stores at b[n:] the nb-byte bitmap of docs and returns the
// position after it; b has room for it.
func putBitmap(b []byte, n, nb int, docs []uint32) int {
	clear(b[n : n+nb])
	setBits(b[n:n+nb], docs, 0)
	return n + nb
}

// setBits sets in bitmap bm the bits of docs, each shifted by shift.
func setBits(bm []byte, docs []uint32, shift uint32) {
	for _, d := range docs {
		d += shift
		bm[d>>3] |= 1 << (d & 7)
	}
}

// readBitmap appends the documents of bitmap bm to dst, ascending.
func readBitmap(dst []uint32, bm []byte) []uint32 {
	i := 0
	for ; i+8 <= len(bm); i += 8 {
		for w := binary.LittleEndian.Uint64(bm[i:]); w != 0; w &= w - 1 {
			dst = append(dst, uint32(i*8+bits.TrailingZeros64(w)))
		}
	}
	for ; i < len(bm); i++ {
		for c := bm[i]; c != 0; c &= c - 1 {
			dst = append(dst, uint32(i*8+bits.TrailingZeros8(c)))
		}
	}
	return dst
}

// checkBitmap reports whether bm is a bitmap of df of n documents: df
// bits set, none at n or above.
func checkBitmap(bm []byte, n, df int) bool {
	set := 0
	for i, c := range bm {
		if i == len(bm)-1 && n%8 != 0 && c>>(n%8) != 0 {
			return false
		}
		set += bits.OnesCount8(c)
	}
	return set == df
}

// decoder reads an encoded segment, remembering the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint(max uint64) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > max {
		d.err = ErrCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = ErrCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Decode parses an encoded segment, checking its checksum and structure:
// damaged bytes fail with ErrCorrupt rather than decoding to fewer
// postings.
func Decode(b []byte) (*Segment, error) {
	if len(b) < len(magic)+1+4 || string(b[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: bad header", ErrCorrupt)
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	s := &Segment{Kind: Kind(body[len(magic)])}
	if s.Kind != Text && s.Kind != Trigram {
		return nil, fmt.Errorf("%w: kind %d", ErrCorrupt, s.Kind)
	}
	d := &decoder{b: body[len(magic)+1:]}
	n := d.uvarint(uint64(len(d.b)))
	s.IDs = make([]uint32, n)
	prev := int64(0)
	for i := range s.IDs {
		prev += d.varint()
		if prev < 0 || prev > 1<<32-1 {
			d.err = ErrCorrupt
		}
		s.IDs[i] = uint32(prev)
	}
	if s.Kind == Text {
		s.PathLen, s.BodyLen = make([]uint32, n), make([]uint32, n)
		for i := range s.IDs {
			s.PathLen[i] = uint32(d.uvarint(1<<32 - 1))
			s.BodyLen[i] = uint32(d.uvarint(1<<32 - 1))
		}
	}
	nt := d.uvarint(uint64(len(d.b)))
	var prevTerm []byte
	for range nt {
		if d.err != nil {
			break
		}
		pos := uint32(len(body) - len(d.b))
		l := d.uvarint(uint64(len(d.b)))
		if d.err == nil && l > uint64(len(d.b)) { // checked against the bytes left after the length itself
			d.err = ErrCorrupt
		}
		if d.err != nil {
			break
		}
		t := d.b[:l]
		if len(s.tpos) > 0 && string(prevTerm) >= string(t) {
			d.err = ErrCorrupt
			break
		}
		prevTerm = t
		s.tpos = append(s.tpos, pos)
		d.b = d.b[l:]
		df := d.uvarint(n)
		s.toffs = append(s.toffs, uint32(len(body)-len(d.b)))
		s.dfs = append(s.dfs, uint32(df))
		if nb, ok := s.bitmap(uint32(df)); ok && d.err == nil {
			if nb > len(d.b) || !checkBitmap(d.b[:nb], int(n), int(df)) {
				d.err = ErrCorrupt
				break
			}
			d.b = d.b[nb:]
			continue
		}
		last := uint64(0)
		for j := range df {
			var g uint64
			if s.Kind == Text {
				w := d.uvarint(n<<2 | 3)
				if g = w >> 2; w&3 == 0 {
					d.uvarint(1<<16 - 1)
					d.uvarint(1<<32 - 1)
				}
			} else {
				g = d.uvarint(n)
			}
			doc := last + g
			if j > 0 && g == 0 || doc >= n || d.err != nil {
				d.err = ErrCorrupt
				break
			}
			last = doc
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = ErrCorrupt
	}
	if d.err != nil {
		return nil, d.err
	}
	s.raw, s.offs = b, nil
	return s, nil
}
