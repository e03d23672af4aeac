package meta_test

import (
	"testing"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/meta"
)

// TestFuseRRF: a file at 0-based rank r of a signal adds the signal's
// weight / (RRFK + r + 1), summed over the signals that list it.
func TestFuseRRF(t *testing.T) {
	sig := meta.Signals{
		BM25:   []index.ChunkHit{{Path: "/a"}, {Path: "/b"}},
		Vector: []index.ChunkHit{{Path: "/b"}, {Path: "/c"}},
	}
	k, wv := meta.RRFK, meta.RRFWeightVector
	got := meta.Fuse(sig, meta.FusionRRF)
	want := map[string]float64{"/a": 1 / (k + 1), "/b": 1/(k+2) + wv/(k+1), "/c": wv / (k + 2)}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for p, w := range want {
		if !near(got[p], w) {
			t.Errorf("%s: %v, want %v", p, got[p], w)
		}
	}
}
