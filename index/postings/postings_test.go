package postings

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/semfs/semfs/index"
)

// doc is a reference document: its terms per field, in order.
type doc struct {
	id         uint32
	path, body []string
}

func (d doc) textDoc() Doc {
	tfs := map[string]TF{}
	for _, t := range d.path {
		tf := tfs[t]
		tf.Path++
		tfs[t] = tf
	}
	for _, t := range d.body {
		tf := tfs[t]
		tf.Body++
		tfs[t] = tf
	}
	out := Doc{PathLen: uint32(len(d.path)), BodyLen: uint32(len(d.body))}
	for t, tf := range tfs {
		out.Terms = append(out.Terms, TermTF{t, tf})
	}
	return out
}

// corpus makes n documents over a Zipf-like vocabulary, so that some
// terms are in most documents (idf floored) and many scores tie.
func corpus(r *rand.Rand, n int, firstID uint32) []doc {
	vocab := 60
	word := func() string {
		// Skewed: low numbers much more often.
		x := r.Float64()
		return fmt.Sprintf("w%d", int(math.Floor(float64(vocab)*x*x*x)))
	}
	var out []doc
	for i := range n {
		d := doc{id: firstID + uint32(i)}
		for range r.IntN(3) {
			d.path = append(d.path, word())
		}
		for range r.IntN(12) {
			d.body = append(d.body, word())
		}
		out = append(out, d)
	}
	return out
}

func build(docs []doc) *Segment {
	b := NewBuilder(Text)
	for _, d := range docs {
		b.AddText(d.textDoc())
	}
	s := b.Segment()
	for i, d := range docs {
		s.IDs[i] = d.id
	}
	return s
}

// reference scores every live document from its terms, as FTS5's bm25()
// is documented: idf = ln((N-n+0.5)/(n+0.5)) floored at 1e-6, and
// idf·f(k1+1)/(f + k1(1-b+b·D/avgdl)) per query term, f the weighted
// field frequency and D the document's tokens.
func reference(live []doc, terms []string, all bool, k int, w Weights, allow func(uint32) bool) []Hit {
	N := len(live)
	total := 0
	for _, d := range live {
		total += len(d.path) + len(d.body)
	}
	avgdl := float64(total) / float64(N)
	idf := make([]float64, len(terms))
	for i, t := range terms {
		n := 0
		for _, d := range live {
			if slices.Contains(d.path, t) || slices.Contains(d.body, t) {
				n++
			}
		}
		idf[i] = math.Log((float64(N-n) + 0.5) / (float64(n) + 0.5))
		if idf[i] <= 0 {
			idf[i] = 1e-6
		}
	}
	var out []Hit
	for _, d := range live {
		if allow != nil && !allow(d.id) {
			continue
		}
		has, s := 0, 0.0
		for i, t := range terms {
			f := 0.0
			for _, x := range d.path {
				if x == t {
					f += w.Path
				}
			}
			for _, x := range d.body {
				if x == t {
					f += w.Body
				}
			}
			if f > 0 {
				has++
			}
			D := float64(len(d.path) + len(d.body))
			s += idf[i] * (f * (k1 + 1)) / (f + k1*(1-b+b*D/avgdl))
		}
		if has == 0 || all && has < len(terms) {
			continue
		}
		out = append(out, Hit{d.id, s})
	}
	slices.SortFunc(out, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return int(a.ID) - int(b.ID)
	})
	return out[:min(k, len(out))]
}

func sameHits(t *testing.T, what string, got, want []Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d\n got %v\nwant %v", what, len(got), len(want), got, want)
	}
	for i := range got {
		if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-12*math.Abs(want[i].Score) {
			t.Fatalf("%s: hit %d = %+v, want %+v\n got %v\nwant %v", what, i, got[i], want[i], got, want)
		}
	}
}

// TestSearchEqualsReference builds an index of several segments with
// tombstones and re-added documents, and compares every lookup with the
// reference scoring of the live documents, before and after merging.
func TestSearchEqualsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		x := New(Text)
		live := map[uint32]doc{}
		next := uint32(1)
		for s := range 1 + r.IntN(30) {
			docs := corpus(r, 1+r.IntN(40), next)
			// Re-add some live ids (a rename re-indexes a chunk under its id).
			for i := range docs {
				if len(live) > 0 && r.IntN(10) == 0 {
					for id := range live {
						docs[i].id = id
						break
					}
				}
			}
			next += uint32(len(docs))
			seen := map[uint32]bool{}
			docs = slices.DeleteFunc(docs, func(d doc) bool { dup := seen[d.id]; seen[d.id] = true; return dup })
			seg := build(docs)
			if s%2 == 1 { // as loaded from the store: lists decoded on demand
				var err error
				if seg, err = Decode(seg.Encode()); err != nil {
					t.Fatal(err)
				}
			}
			x.Add(int64(s+1), seg, nil)
			for _, d := range docs {
				live[d.id] = d
			}
			for id := range live {
				if r.IntN(8) == 0 {
					x.Delete(id)
					delete(live, id)
				}
			}
		}
		var docs []doc
		for _, d := range live {
			docs = append(docs, d)
		}
		if x.Live() != len(docs) {
			t.Fatalf("round %d: %d live, want %d", round, x.Live(), len(docs))
		}
		check := func(when string) {
			for q := range 30 {
				var terms []string
				for range 1 + r.IntN(4) {
					terms = append(terms, fmt.Sprintf("w%d", int(60*math.Pow(r.Float64(), 2))))
				}
				all := r.IntN(2) == 0
				k := 1 + r.IntN(15)
				w := Weights{Path: []float64{1, 4, 16}[r.IntN(3)], Body: 1}
				var allow func(uint32) bool
				if q%5 == 0 {
					allow = func(id uint32) bool { return id%3 != 0 }
				}
				if len(docs) == 0 {
					if got := x.Search(terms, all, k, w, allow); len(got) != 0 {
						t.Fatalf("empty index found %v", got)
					}
					continue
				}
				sameHits(t, fmt.Sprintf("round %d %s %v all=%v k=%d", round, when, terms, all, k),
					x.Search(terms, all, k, w, allow), reference(docs, terms, all, k, w, allow))
			}
		}
		check("before merge")
		for id := int64(100); ; id++ {
			m := x.PlanMerge()
			if m == nil {
				break
			}
			m.Build()
			dead, ok := x.Dead(m)
			if !ok {
				t.Fatal("merged segment vanished")
			}
			x.Replace(m, id, dead)
		}
		if x.Segments() >= 2*MergeFactor {
			t.Fatalf("round %d: %d segments after merging", round, x.Segments())
		}
		check("after merge")
	}
}

// A tombstone placed between planning a merge and swapping it in must
// survive in the merged segment.
func TestMergeKeepsLateDeletes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := New(Text)
	var all []doc
	for s := range MergeFactor {
		docs := corpus(r, 5, uint32(1+5*s))
		all = append(all, docs...)
		x.Add(int64(s+1), build(docs), nil)
	}
	m := x.PlanMerge()
	if m == nil || len(m.Old) != MergeFactor {
		t.Fatalf("plan: %+v", m)
	}
	m.Build()
	x.Delete(all[3].id, all[17].id)
	dead, ok := x.Dead(m)
	if !ok || len(dead) != 2 {
		t.Fatalf("dead since plan: %v %v", dead, ok)
	}
	x.Replace(m, 99, dead)
	if x.Segments() != 1 || x.Live() != len(all)-2 {
		t.Fatalf("after merge: %d segments, %d live", x.Segments(), x.Live())
	}
	if _, _, ok := x.Locate(all[3].id); ok {
		t.Fatal("a document deleted during the merge is live again")
	}
	if id, l, ok := x.Locate(all[4].id); !ok || id != 99 || m.Seg.IDs[l] != all[4].id {
		t.Fatalf("locate after merge: %d %d %v", id, l, ok)
	}
}

func TestEncodeDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	s := build(corpus(r, 50, 1000))
	s.IDs[7] = 3 // ids need not ascend
	enc := s.Encode()
	got, err := Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.IDs, s.IDs) || !slices.Equal(got.PathLen, s.PathLen) || !slices.Equal(got.BodyLen, s.BodyLen) ||
		got.Terms() != s.Terms() {
		t.Fatal("decoded segment differs")
	}
	for i, term := range s.terms {
		if string(got.termBytes(i)) != term {
			t.Fatalf("term %d: %q, want %q", i, got.termBytes(i), term)
		}
		if j, ok := got.find(term); !ok || j != i {
			t.Fatalf("find(%q) = %d, %v", term, j, ok)
		}
		if _, ok := got.find(term + "\x00"); ok {
			t.Fatalf("found %q", term+"\x00")
		}
		a, b := got.postingsAt(i), s.postingsAt(i)
		if !slices.Equal(a.docs, b.docs) || !slices.Equal(a.path, b.path) || !slices.Equal(a.body, b.body) || got.count(term) != len(b.docs) {
			t.Fatalf("postings of %q differ", term)
		}
	}
	if !slices.Equal(got.Encode(), enc) {
		t.Fatal("a decoded segment encodes differently")
	}
	tb := NewBuilder(Trigram)
	long := strings.Repeat("long", 300) // terms have no length limit
	tb.AddTerms([]string{"abc", "bcd", long})
	tb.AddTerms([]string{"bcd"})
	ts := tb.Segment()
	ts.IDs[0], ts.IDs[1] = 9, 4
	tg, err := Decode(ts.Encode())
	if err != nil || !slices.Equal(tg.postings("bcd").docs, []uint32{0, 1}) || !slices.Equal(tg.IDs, []uint32{9, 4}) ||
		!slices.Equal(tg.postings(long).docs, []uint32{0}) {
		t.Fatalf("trigram segment: %v %+v", err, tg)
	}
	// Every single damaged byte and every truncation is detected.
	for i := range enc {
		bad := slices.Clone(enc)
		bad[i] ^= 0x20
		if _, err := Decode(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flipped byte %d: %v", i, err)
		}
	}
	for n := range len(enc) {
		if _, err := Decode(enc[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
}

// Compact gives exactly what decoding the encoded segment gives, for
// both kinds, an empty segment and ids that do not ascend, with the terms
// encoded ahead (EncodeTerms, before the ids are set) or not.
func TestCompactEqualsDecode(t *testing.T) {
	for _, ahead := range []bool{false, true} {
		t.Run(fmt.Sprint("ahead=", ahead), func(t *testing.T) { testCompact(t, ahead) })
	}
}

func testCompact(t *testing.T, ahead bool) {
	r := rand.New(rand.NewPCG(9, 10))
	text := build(corpus(r, 80, 500))
	text.IDs[3] = 1
	tb := NewBuilder(Trigram)
	tb.AddTerms([]string{"abc", "bcd", strings.Repeat("x", 200)})
	tb.AddTerms(nil)
	tb.AddTerms([]string{"bcd"})
	tri := tb.Segment()
	tri.IDs[0], tri.IDs[2] = 7, 2
	empty := NewBuilder(Text).Segment()
	for _, s := range []*Segment{text, tri, empty} {
		want, err := Decode(s.Encode())
		if ahead {
			ids := s.IDs
			s.IDs = make([]uint32, len(ids)) // not set yet
			s.EncodeTerms()
			s.IDs = ids
		}
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.Encode(), want.Encode()) {
			t.Fatalf("kind %d: encodes differently", s.Kind)
		}
		got := s.Compact()
		same := got.Kind == want.Kind && slices.Equal(got.IDs, want.IDs) && slices.Equal(got.PathLen, want.PathLen) &&
			slices.Equal(got.BodyLen, want.BodyLen) && slices.Equal(got.raw, want.raw) && slices.Equal(got.tpos, want.tpos) &&
			slices.Equal(got.toffs, want.toffs) && slices.Equal(got.dfs, want.dfs) &&
			got.terms == nil && got.offs == nil && got.docs == nil && got.pathTF == nil && got.bodyTF == nil
		if !same {
			t.Fatalf("kind %d: Compact %+v\nDecode(Encode) %+v", s.Kind, got, want)
		}
		if got.Compact() != got || !slices.Equal(got.Encode(), want.Encode()) {
			t.Fatalf("kind %d: a compact segment is not its own compact form", s.Kind)
		}
	}
}

func TestGrepEqualsScan(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	x := New(Trigram)
	tris := []string{"abc", "bcd", "cde", "xyz", "foo"}
	has := map[uint32][]string{}
	next := uint32(1)
	for s := range MergeFactor {
		b := NewBuilder(Trigram)
		var ids []uint32
		for range 30 {
			var ts []uint32
			for _, tr := range tris {
				if r.IntN(2) == 0 {
					ts = append(ts, index.PackTrigram(tr))
				}
			}
			b.AddTrigrams(ts)
			ids = append(ids, next)
			has[next] = nil
			for _, tr := range tris {
				if slices.Contains(ts, index.PackTrigram(tr)) {
					has[next] = append(has[next], tr)
				}
			}
			next++
		}
		seg := b.Segment()
		copy(seg.IDs, ids)
		if s%2 == 1 { // as loaded from the store: lists decoded on demand
			var err error
			if seg, err = Decode(seg.Encode()); err != nil {
				t.Fatal(err)
			}
		}
		x.Add(int64(s), seg, nil)
	}
	for id := range has {
		if r.IntN(5) == 0 {
			x.Delete(id)
			delete(has, id)
		}
	}
	var eval func(q *index.Query, ts []string) bool
	eval = func(q *index.Query, ts []string) bool {
		switch q.Op {
		case index.QNone:
			return false
		case index.QAnd:
			for _, t := range q.Trigrams {
				if !slices.Contains(ts, t) {
					return false
				}
			}
			for _, s := range q.Sub {
				if !eval(s, ts) {
					return false
				}
			}
			return true
		case index.QOr:
			for _, t := range q.Trigrams {
				if slices.Contains(ts, t) {
					return true
				}
			}
			for _, s := range q.Sub {
				if eval(s, ts) {
					return true
				}
			}
			return false
		}
		return true
	}
	queries := []*index.Query{
		nil, {Op: index.QNone},
		{Op: index.QAnd, Trigrams: []string{"abc", "cde"}},
		{Op: index.QOr, Trigrams: []string{"xyz", "foo"}},
		{Op: index.QAnd, Trigrams: []string{"abc"}, Sub: []*index.Query{{Op: index.QOr, Trigrams: []string{"xyz", "bcd"}}}},
		{Op: index.QOr, Sub: []*index.Query{{Op: index.QAnd, Trigrams: []string{"xyz", "foo"}}, {Op: index.QNone}}},
		{Op: index.QAnd, Trigrams: []string{"qqq"}},
	}
	check := func(when string) {
		for _, q := range queries {
			var want []uint32
			for id, ts := range has {
				if q == nil || eval(q, ts) {
					want = append(want, id)
				}
			}
			slices.Sort(want)
			if got := x.Grep(q); !slices.Equal(got, want) {
				t.Errorf("%s %+v: %v, want %v", when, q, got, want)
			}
		}
	}
	check("before merge")
	m := x.PlanMerge()
	if m == nil || len(m.Old) != MergeFactor {
		t.Fatalf("merge planned: %+v", m)
	}
	m.Build()
	dead, _ := x.Dead(m)
	merged, err := Decode(m.Seg.Encode())
	if err != nil {
		t.Fatal(err)
	}
	m.Seg = merged
	x.Replace(m, 30, dead)
	if x.Segments() != 1 {
		t.Fatalf("%d segments after the merge", x.Segments())
	}
	check("after merge")
}

// Examples from Porter's paper (each through the whole algorithm).
func TestStem(t *testing.T) {
	for in, want := range map[string]string{
		"caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
		"feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor",
		"sing": "sing", "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop",
		"tanned": "tan", "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail",
		"filing": "file", "happy": "happi", "sky": "sky", "relational": "relat", "conditional": "condit",
		"rational": "ration", "generalizations": "gener", "oscillators": "oscil", "probate": "probat",
		"rate": "rate", "cease": "ceas", "controlling": "control", "roll": "roll", "go": "go",
		"connection": "connect", "connections": "connect", "connected": "connect", "handlers": "handler",
	} {
		if got := string(Stem([]byte(in))); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
}

// An Analyzer's cached stems give Analyze's terms, also after its cache
// starts over; so does Terms, which goes through a pooled Analyzer.
func TestAnalyzerEqualsAnalyze(t *testing.T) {
	var words []string
	for i := range 3 * maxStems / 2 {
		words = append(words, fmt.Sprintf("connections%d hopping generalizations x%dies", i%(maxStems+7), i))
	}
	text := strings.Join(words, " ")
	var want []string
	Analyze(text, func(t []byte) { want = append(want, string(t)) })
	var a Analyzer
	for round := range 2 {
		var got []string
		a.Each(text, func(t string) { got = append(got, t) })
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: Analyzer and Analyze differ (%d vs %d terms)", round, len(got), len(want))
		}
		if got := Terms(text); !slices.Equal(got, want) {
			t.Fatalf("round %d: Terms and Analyze differ (%d vs %d terms)", round, len(got), len(want))
		}
	}
	if len(a.words) > maxStems {
		t.Fatalf("cache holds %d words", len(a.words))
	}
}

// TextDoc counts each term once per document with its frequency in each
// field, however many words stem to it.
func TestTextDoc(t *testing.T) {
	var a Analyzer
	for range 2 {
		d := a.TextDoc(Terms("connect notes"), "connections connected connect notes x")
		got := map[string]TF{}
		for _, tt := range d.Terms {
			if _, dup := got[tt.Term]; dup {
				t.Fatalf("term %q twice", tt.Term)
			}
			got[tt.Term] = tt.TF
		}
		want := map[string]TF{"connect": {1, 3}, "note": {1, 1}, "x": {0, 1}}
		if len(got) != len(want) || d.PathLen != 2 || d.BodyLen != 5 {
			t.Fatalf("doc %+v", d)
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("%s: %+v, want %+v", k, got[k], v)
			}
		}
	}
}

// Concat of segments built from consecutive runs of documents is the
// segment built from all of them at once, byte for byte.
func TestConcat(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	docs := corpus(r, 90, 1)
	whole := build(docs).Encode()
	got := Concat([]*Segment{build(docs[:20]), build(docs[20:21]), build(docs[21:])}).Encode()
	if !slices.Equal(got, whole) {
		t.Fatal("concatenated segment differs from the one built at once")
	}
	tb := func(lo, hi int) *Segment {
		b := NewBuilder(Trigram)
		for i := lo; i < hi; i++ {
			b.AddTrigrams([]uint32{uint32(i % 7), uint32(i%5 + 100), 4000})
		}
		s := b.Segment()
		for i := range s.IDs {
			s.IDs[i] = uint32(lo + i)
		}
		return s
	}
	raw, err := Decode(tb(10, 30).Encode())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Concat([]*Segment{tb(0, 10), raw, tb(30, 40)}).Encode(), tb(0, 40).Encode(); !slices.Equal(got, want) {
		t.Fatal("concatenated trigram segment differs")
	}
	if got, want := Concat([]*Segment{tb(0, 10), tb(10, 30), tb(30, 30), tb(30, 40)}).Encode(), tb(0, 40).Encode(); !slices.Equal(got, want) {
		t.Fatal("concatenated built trigram segments differ")
	}
	// Decoded or not, the segments concatenate to the same bytes.
	parts := []*Segment{build(docs[:20]), build(docs[20:21]), build(docs[21:])}
	for i, p := range parts {
		for j := range p.IDs {
			p.IDs[j] = uint32(100*i + j)
		}
	}
	built := Concat(parts).Encode()
	if d, err := Decode(parts[1].Encode()); err != nil {
		t.Fatal(err)
	} else {
		parts[1] = d
	}
	if got := Concat(parts).Encode(); !slices.Equal(got, built) {
		t.Fatal("concatenation of built segments differs from merge's")
	}
}

// A TextBuilder builds the segment Builder builds from TextDoc documents,
// also when its word cache starts over in between.
func TestTextBuilder(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var tb TextBuilder
	b := NewBuilder(Text)
	for i := range 400 {
		var words []string
		for range 400 {
			words = append(words, fmt.Sprintf("w%dings", r.IntN(4*maxStems)), "connections")
		}
		body := strings.Join(words, " ")
		path := Terms(fmt.Sprintf("notes %d connected", i%3))
		if i%2 == 0 {
			tb.Add(path, body)
		} else {
			tb.AddRaw(path, "Some_Raw "+body)
			body = index.IndexText("Some_Raw " + body)
		}
		b.AddText(TextDoc(path, body))
	}
	if tb.a.words == nil || len(tb.a.terms) <= maxStems {
		t.Fatalf("the word cache never started over (%d terms)", len(tb.a.terms))
	}
	if !slices.Equal(tb.Segment().Encode(), b.Segment().Encode()) {
		t.Fatal("TextBuilder and Builder segments differ")
	}
}

// A Builder's segment lists, for each term, exactly the documents that
// added it, ascending, with their frequencies — with documents that add
// nothing, terms first seen late, and trigrams added as packed numbers.
func TestBuilderLists(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	text, tri := NewBuilder(Text), NewBuilder(Trigram)
	want := map[string][]TF{} // term → TF per document (zero: absent)
	wantTri := map[uint32][]bool{}
	const docs = 300
	for d := range docs {
		var terms []TermTF
		var tris []uint32
		if d%7 != 3 { // every seventh document adds nothing
			count := r.IntN(20)
			if d%2 == 0 {
				count = 300 // the text postings fill more than one block too
			}
			for i := range count {
				term := fmt.Sprintf("t%d", r.IntN(10+2*d)) // later documents bring new terms
				if slices.ContainsFunc(terms, func(x TermTF) bool { return x.Term == term }) {
					continue
				}
				terms = append(terms, TermTF{term, TF{Path: uint16(i % 3), Body: uint32(1 + r.IntN(5))}})
			}
			// Enough postings to fill several of flatPostings' blocks,
			// and a few documents too large for one.
			n := r.IntN(30)
			switch {
			case d%100 == 10:
				n = flatBlock + 500
			case d%3 == 0:
				n = 600
			}
			seen := map[uint32]bool{}
			for range n {
				if t := uint32(r.IntN(1 << 21)); !seen[t] {
					seen[t] = true
					tris = append(tris, t)
				}
			}
		}
		text.AddText(Doc{Terms: terms, PathLen: 1, BodyLen: 2})
		tri.AddTrigrams(tris)
		for _, tt := range terms {
			if want[tt.Term] == nil {
				want[tt.Term] = make([]TF, docs)
			}
			want[tt.Term][d] = tt.TF
		}
		for _, t := range tris {
			if wantTri[t] == nil {
				wantTri[t] = make([]bool, docs)
			}
			wantTri[t][d] = true
		}
	}
	seg := text.Segment()
	if seg.Len() != docs || len(seg.terms) != len(want) || !slices.IsSorted(seg.terms) {
		t.Fatalf("text segment: %d documents, %d terms (want %d), sorted %v", seg.Len(), len(seg.terms), len(want), slices.IsSorted(seg.terms))
	}
	for term, tfs := range want {
		p := seg.postings(term)
		var docs []uint32
		for d, tf := range tfs {
			if tf != (TF{}) {
				docs = append(docs, uint32(d))
			}
		}
		if !slices.Equal(p.docs, docs) {
			t.Fatalf("%s: documents %v, want %v", term, p.docs, docs)
		}
		for i, d := range p.docs {
			if got := (TF{p.path[i], p.body[i]}); got != tfs[d] {
				t.Fatalf("%s in document %d: %+v, want %+v", term, d, got, tfs[d])
			}
		}
	}
	tseg := tri.Segment()
	if tseg.Len() != docs || len(tseg.terms) != len(wantTri) {
		t.Fatalf("trigram segment: %d documents, %d terms, want %d", tseg.Len(), len(tseg.terms), len(wantTri))
	}
	for packed, in := range wantTri {
		var docs []uint32
		for d, ok := range in {
			if ok {
				docs = append(docs, uint32(d))
			}
		}
		if p := tseg.postings(TrigramTerm(packed)); !slices.Equal(p.docs, docs) {
			t.Fatalf("trigram %x: documents %v, want %v", packed, p.docs, docs)
		}
	}
}
