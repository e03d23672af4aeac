package postings

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
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
