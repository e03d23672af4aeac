package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func randUnit(rng *rand.Rand, d int) []float32 {
	v := make([]float32, d)
	var n float64
	for i := range v {
		v[i] = float32(rng.NormFloat64())
		n += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

func TestVectorsNearestExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	v := NewVectors()
	vecs := map[string][]float32{}
	for i := range 500 {
		k := fmt.Sprintf("k%03d", i)
		vecs[k] = randUnit(rng, 16)
		v.Set(k, vecs[k])
	}
	v.Delete("k007")
	delete(vecs, "k007")
	v.Rekey(func(k string) (string, bool) {
		if k == "k010" {
			return "moved", true
		}
		return k, false
	})
	vecs["moved"] = vecs["k010"]
	delete(vecs, "k010")
	q := randUnit(rng, 16)
	got := v.Nearest(q, 5, -1)
	// Brute force.
	best := ""
	var bs float32 = -2
	for k, x := range vecs {
		if s := Cosine(q, x); s > bs {
			best, bs = k, s
		}
	}
	if len(got) != 5 || got[0].Key != best || got[0].Similarity != bs {
		t.Fatalf("nearest %+v, want %s %v", got, best, bs)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Similarity > got[i-1].Similarity {
			t.Fatalf("unsorted: %+v", got)
		}
	}
	if v.Len() != 499 {
		t.Fatalf("len %d", v.Len())
	}
	if hits := v.Nearest(q, 5, 2); len(hits) != 0 {
		t.Fatalf("min not applied: %+v", hits)
	}
}

// BenchmarkNearest100k measures the exact scan of 100k × 100-dim vectors.
func BenchmarkNearest100k(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	v := NewVectors()
	for i := range 100_000 {
		v.Set(fmt.Sprint(i), randUnit(rng, 100))
	}
	q := randUnit(rng, 100)
	b.ResetTimer()
	for b.Loop() {
		v.Nearest(q, 10, 0.2)
	}
}

// TestVectorsNearestParallel checks the sharded scan against a brute force
// on a space large enough to be scanned in parallel.
func TestVectorsNearestParallel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	v := NewVectors()
	var keys []string
	var vecs [][]float32
	for i := range parallelScan + 1000 {
		k := fmt.Sprintf("k%06d", i)
		x := randUnit(rng, 8)
		v.Set(k, x)
		keys = append(keys, k)
		vecs = append(vecs, x)
	}
	q := randUnit(rng, 8)
	got := v.Nearest(q, 25, 0.5)
	var want []VecHit
	for i, x := range vecs {
		if s := Cosine(q, x); s >= 0.5 {
			want = append(want, VecHit{keys[i], s})
		}
	}
	slices.SortFunc(want, func(a, b VecHit) int {
		if worse(a, b) {
			return 1
		}
		if worse(b, a) {
			return -1
		}
		return 0
	})
	want = want[:25]
	if !slices.Equal(got, want) {
		t.Fatalf("parallel nearest differs:\n got %v\nwant %v", got, want)
	}
}
