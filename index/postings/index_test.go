package postings

import (
	"math/rand/v2"
	"testing"
)

// Apply deletes and adds in one step; Load swaps in another index's
// segments and drops merges planned before; Segment finds a segment by
// store id for a reload to reuse.
func TestApplyLoadSegment(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	a, b := build(corpus(r, 10, 1)), build(corpus(r, 10, 1))
	for i := range b.IDs {
		b.IDs[i] = a.IDs[i] // b re-indexes a's documents
	}
	x := New(Text)
	x.Add(1, a, nil)
	x.Apply(a.IDs, Added{ID: 2, Seg: b})
	if x.Live() != a.Len() {
		t.Fatalf("after Apply: %d live, want %d", x.Live(), a.Len())
	}
	if seg, _, ok := x.Locate(a.IDs[0]); !ok || seg != 2 {
		t.Errorf("after Apply: id %d in segment %d (%v), want 2", a.IDs[0], seg, ok)
	}
	if x.Segment(2) != b || x.Segment(1) != a || x.Segment(3) != nil {
		t.Errorf("Segment(2, 1, 3) = %p %p %p, want %p %p nil", x.Segment(2), x.Segment(1), x.Segment(3), b, a)
	}
	m := x.PlanMerge() // segment 1 is all deleted
	if m == nil {
		t.Fatal("no merge planned for a deleted segment")
	}
	m.Build()
	y := New(Text)
	y.Add(2, b, []uint32{0})
	x.Load(y)
	if x.Live() != b.Len()-1 || x.Segments() != 1 {
		t.Errorf("after Load: %d live in %d segments, want %d in 1", x.Live(), x.Segments(), b.Len()-1)
	}
	if _, ok := x.Dead(m); ok {
		t.Error("a merge planned before Load is still accepted")
	}
}
