package postings

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/semfs/semfs/index"
)

// TestMergeEncodedEqualsLists: merging decoded segments without deleted
// documents by copying their encoded lists gives the bytes, positions and
// renumbering that decoding, renumbering and encoding every list gives,
// for both kinds, with terms in some segments only and gaps, frequencies
// and shifts past one varint byte.
func TestMergeEncodedEqualsLists(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for round := range 40 {
		kind := Text
		if round%2 == 1 {
			kind = Trigram
		}
		var segs []*seg
		id := uint32(1)
		for range 1 + r.IntN(9) {
			n := 1 + r.IntN(400) // some segments of more than 128 documents: shifts of two bytes
			var s *Segment
			if kind == Text {
				docs := corpus(r, n, id)
				for i := range docs {
					if r.IntN(10) == 0 { // a frequency past one byte
						for range 200 {
							docs[i].body = append(docs[i].body, "often")
						}
					}
				}
				s = build(docs)
			} else {
				b := NewBuilder(Trigram)
				for range n {
					// Lists dense enough to be bitmaps (one in 3) and
					// not (one in 12 or 40), in and out of the merge.
					var ts []uint32
					for k, tr := range []string{"abc", "bcd", "zzz", "q_q", "~~~"} {
						if r.IntN([]int{3, 3, 12, 40, 3}[k]) == 0 {
							ts = append(ts, index.PackTrigram(tr))
						}
					}
					b.AddTrigrams(ts)
				}
				s = b.Segment()
				for i := range s.IDs {
					s.IDs[i] = id + uint32(i)
				}
			}
			id += uint32(n) + uint32(r.IntN(3))
			if r.IntN(2) == 0 {
				s = s.Compact()
			} else {
				var err error
				if s, err = Decode(s.Encode()); err != nil {
					t.Fatal(err)
				}
			}
			segs = append(segs, &seg{s: s})
		}
		dead := make([][]uint64, len(segs))
		got, gotRemap, ok := mergeEncoded(segs, dead)
		if !ok {
			t.Fatalf("round %d: not merged from the encoded lists", round)
		}
		want, wantRemap := mergeLists(segs, dead)
		want = want.Compact()
		if !bytes.Equal(got.raw, want.raw) {
			t.Fatalf("round %d (kind %d, %d segments): %d bytes, want %d", round, kind, len(segs), len(got.raw), len(want.raw))
		}
		if !slices.Equal(got.tpos, want.tpos) || !slices.Equal(got.toffs, want.toffs) || !slices.Equal(got.dfs, want.dfs) {
			t.Fatalf("round %d: term positions differ", round)
		}
		if !slices.EqualFunc(gotRemap, wantRemap, slices.Equal) {
			t.Fatalf("round %d: renumbering differs", round)
		}
		if !slices.Equal(got.IDs, want.IDs) || !slices.Equal(got.PathLen, want.PathLen) || !slices.Equal(got.BodyLen, want.BodyLen) {
			t.Fatalf("round %d: documents differ", round)
		}
		if _, err := Decode(got.Encode()); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	// A deleted document, or a segment not decoded, takes the lists' way.
	s := build(corpus(r, 10, 1)).Compact()
	if _, _, ok := mergeEncoded([]*seg{{s: s}}, [][]uint64{{1 << 3}}); ok {
		t.Error("merged from the encoded lists with a document deleted")
	}
	if _, _, ok := mergeEncoded([]*seg{{s: build(corpus(r, 10, 1))}}, [][]uint64{nil}); ok {
		t.Error("merged from the encoded lists a segment not encoded")
	}
}

// TestConcatReadsLikeBuilt: a Concat of built segments, read before it
// is encoded (its lists are in its terms section), has the terms and
// lists of the segment built at once, and compacts to its bytes.
func TestConcatReadsLikeBuilt(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	docs := corpus(r, 300, 1)
	for i := range docs {
		if i%50 == 0 { // frequencies past one varint byte
			for range 300 {
				docs[i].body = append(docs[i].body, "often")
			}
		}
	}
	whole := build(docs)
	c := Concat([]*Segment{build(docs[:130]), build(docs[130:131]), build(docs[131:])})
	if c.Terms() != whole.Terms() || c.Len() != whole.Len() || c.postingsLen() != whole.postingsLen() {
		t.Fatalf("%d terms, %d documents, %d postings; want %d, %d, %d",
			c.Terms(), c.Len(), c.postingsLen(), whole.Terms(), whole.Len(), whole.postingsLen())
	}
	for i, term := range whole.terms {
		got, want := c.postings(term), whole.postingsAt(i)
		if !slices.Equal(got.docs, want.docs) || !slices.Equal(got.path, want.path) || !slices.Equal(got.body, want.body) {
			t.Fatalf("term %q: lists differ", term)
		}
		if c.count(term) != len(want.docs) || string(c.termBytes(i)) != term {
			t.Fatalf("term %q: count %d, want %d", term, c.count(term), len(want.docs))
		}
	}
	c.EncodeTerms() // nothing left to do
	if !bytes.Equal(c.Compact().Encode(), whole.Encode()) || !bytes.Equal(c.Encode(), whole.Encode()) {
		t.Fatal("concatenation encodes differently")
	}
}

// AddTrigrams lists each packed trigram's documents, whether its bytes
// are grep's or not (upper case, control bytes), and hands its pooled
// table back clean: builders taking it in turn build their own lists.
func TestAddTrigramsTableClean(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	set := []uint32{index.PackTrigram("abc"), index.PackTrigram("a c"), index.PackTrigram("~}|"), index.PackTrigram("ABC"),
		index.PackTrigram("\x01\x02\x03"), index.PackTrigram("z\x7fz"), 5, 1<<21 - 1}
	for round := range 6 {
		b := NewBuilder(Trigram)
		want := map[uint32][]uint32{}
		for doc := range 50 + round {
			var tris []uint32
			for _, tr := range set {
				if r.IntN(2) == 0 {
					tris = append(tris, tr)
					want[tr] = append(want[tr], uint32(doc))
				}
			}
			b.AddTrigrams(tris)
		}
		s := b.Segment()
		if s.Terms() != len(want) {
			t.Fatalf("round %d: %d terms, want %d", round, s.Terms(), len(want))
		}
		for tr, docs := range want {
			if got := s.postings(TrigramTerm(tr)).docs; !slices.Equal(got, docs) {
				t.Fatalf("round %d: trigram %x in %v, want %v", round, tr, got, docs)
			}
		}
	}
}
