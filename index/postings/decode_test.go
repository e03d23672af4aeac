package postings

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/semfs/semfs/index"
)

// useDecoded decodes b and, when that succeeds, runs every lookup and a
// merge over the segment: damaged bytes whose checksum still matches (a
// bug in a writer, not a disk) must fail Decode or decode to something
// usable, never panic Open or a lookup.
func useDecoded(t *testing.T, b []byte) bool {
	t.Helper()
	defer func() {
		if e := recover(); e != nil {
			t.Fatalf("panic on a damaged segment (kind byte %d, %d bytes): %v", b[len(magic)], len(b), e)
		}
	}()
	s, err := Decode(b)
	if err != nil {
		return false
	}
	x := New(s.Kind)
	x.Add(1, s, nil)
	x.Search([]string{"w1", "w2"}, false, 5, Weights{1, 1}, nil)
	x.Search([]string{"w1", "w2"}, true, 5, Weights{1, 1}, nil)
	q, _, _ := index.PlanGrep("abc", false, false)
	x.Grep(q)
	if m := x.PlanMerge(); m != nil {
		m.Build()
	}
	return true
}

// withSum replaces the checksum of b (its last 4 bytes) by a right one.
func withSum(b []byte) []byte {
	b = append([]byte(nil), b[:len(b)-4]...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func damageSources(r *rand.Rand) [][]byte {
	b := NewBuilder(Trigram)
	for i := range 30 {
		b.AddTrigrams([]uint32{uint32(i % 7), uint32(i%5 + 100), 4000})
	}
	return [][]byte{build(corpus(r, 30, 1)).Encode(), b.Segment().Encode()}
}

// A term length read from the last bytes was checked against the bytes
// before it was read, so a length up to the varint's own size sliced past
// the end (review R1 finding 4).
func TestDecodeDamagedNeverPanics(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	srcs := damageSources(r)
	n := 50000
	if testing.Short() {
		n = 5000
	}
	for i := range n {
		m := append([]byte(nil), srcs[i%2]...)
		for range 1 + r.IntN(3) {
			m[len(magic)+r.IntN(len(m)-4-len(magic))] = byte(r.IntN(256))
		}
		if r.IntN(4) == 0 {
			m = append(m[:len(magic)+1+r.IntN(len(m)-4-len(magic)-1)], 0, 0, 0, 0)
		}
		useDecoded(t, withSum(m))
	}
	// The case found: the last byte is a term length of 1, which the old
	// check compared with the bytes left before reading it (no documents,
	// one term, length 1, no term bytes).
	body := append([]byte(magic), byte(Trigram), 0, 1, 1)
	useDecoded(t, withSum(append(body, 0, 0, 0, 0)))
}

// FuzzDecode: any bytes with a right checksum decode or fail, never
// panic.
func FuzzDecode(f *testing.F) {
	for _, s := range damageSources(rand.New(rand.NewPCG(1, 1))) {
		f.Add(s[:len(s)-4])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) <= len(magic) {
			return
		}
		useDecoded(t, withSum(append(body, 0, 0, 0, 0)))
	})
}

// TestTextPostingCodes: a Text posting reads back as written for gaps and
// frequencies at the edges of their varint bytes, and the three coded
// frequency pairs cost no byte beyond the gap's word (one byte for a gap
// below 32), where any other pair writes both out.
func TestTextPostingCodes(t *testing.T) {
	freqs := []struct {
		path  uint16
		body  uint32
		coded bool
	}{{0, 1, true}, {0, 2, true}, {1, 0, true}, {0, 0, false}, {1, 1, false}, {0, 3, false}, {2, 0, false}, {1<<16 - 1, 1<<32 - 1, false}}
	for _, gap := range []uint32{0, 1, 31, 32, 1 << 12, 1<<32 - 1} {
		for _, f := range freqs {
			buf := make([]byte, maxPosting(Text)+1)
			n := putText(buf, 0, gap, f.path, f.body)
			want := len(binary.AppendUvarint(nil, uint64(gap)<<2))
			if !f.coded {
				want += len(binary.AppendUvarint(nil, uint64(f.path))) + len(binary.AppendUvarint(nil, uint64(f.body)))
			}
			if n != want || n > maxPosting(Text) {
				t.Errorf("gap %d, freqs (%d,%d): %d bytes, want %d", gap, f.path, f.body, n, want)
			}
			g, path, body, k := readText(buf[:n])
			if g != gap || path != f.path || body != f.body || k != n {
				t.Errorf("gap %d, freqs (%d,%d): read gap %d, freqs (%d,%d), %d bytes of %d", gap, f.path, f.body, g, path, body, k, n)
			}
			if gap < 32 && f.coded && n != 1 {
				t.Errorf("gap %d, freqs (%d,%d): %d bytes, want 1", gap, f.path, f.body, n)
			}
		}
	}
}

// TestTrigramBitmapChecked: a Trigram list denser than its segment's
// bitmap is stored as that bitmap, half the bytes of its gaps here, reads
// back as its documents, and a bitmap whose bits do not match its df or
// name a document past the segment fails Decode even under a right
// checksum.
func TestTrigramBitmapChecked(t *testing.T) {
	abc := index.PackTrigram("abc")
	b := NewBuilder(Trigram)
	for i := range 19 {
		if i%4 != 1 {
			b.AddTrigrams([]uint32{abc})
		} else {
			b.AddTrigrams(nil)
		}
	}
	s := b.Segment()
	enc := s.Encode()
	got, err := Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint32{0, 2, 3, 4, 6, 7, 8, 10, 11, 12, 14, 15, 16, 18}
	if docs := got.postings(TrigramTerm(abc)).docs; !slices.Equal(docs, want) {
		t.Fatalf("bitmap list reads %v, want %v", docs, want)
	}
	// The list is the three bytes before the checksum: 14 documents of 19.
	bm := enc[len(enc)-7 : len(enc)-4]
	if !slices.Equal(bm, []byte{0b11011101, 0b11011101, 0b101}) {
		t.Fatalf("bitmap bytes %08b", bm)
	}
	for _, c := range []struct {
		name string
		last byte
	}{{"a bit past the documents", 0b1001}, {"a bit fewer than df", 0b001}, {"a bit more than df", 0b111}} {
		bad := slices.Clone(enc)
		bad[len(bad)-5] = c.last
		if _, err := Decode(withSum(bad)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Decode = %v, want ErrCorrupt", c.name, err)
		}
	}
}
