package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
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

// BenchmarkNearest100k measures the exact scan of 100k × 100-dim vectors
// (k=400 as content search asks) with the Go and the SIMD dot product.
func BenchmarkNearest100k(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	v := NewVectors()
	for i := range 100_000 {
		v.Set(fmt.Sprint(i), randUnit(rng, 100))
	}
	q := randUnit(rng, 100)
	simd := useAVX2
	defer func() { useAVX2 = simd }()
	for _, on := range []bool{false, true} {
		if on && !simd {
			continue
		}
		useAVX2 = on
		b.Run(fmt.Sprintf("simd=%v", on), func(b *testing.B) {
			for b.Loop() {
				v.Nearest(q, 400, 0.2)
			}
		})
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

// clustered returns n unit vectors of d dims around c random centres (a
// space with the structure embeddings have, unlike uniform noise).
func clustered(rng *rand.Rand, n, d, c int) [][]float32 {
	centres := make([][]float32, c)
	for i := range centres {
		centres[i] = randUnit(rng, d)
	}
	out := make([][]float32, n)
	for i := range out {
		noise := randUnit(rng, d)
		m := centres[rng.IntN(c)]
		v := make([]float32, d)
		var norm float64
		for j := range v {
			v[j] = m[j] + 0.6*noise[j]
			norm += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(norm))
		}
		out[i] = v
	}
	return out
}

// withApprox lowers ApproxMin and sets ApproxScan for one test.
func withApprox(t *testing.T, minRows int, scan float64) {
	oldMin, oldScan := ApproxMin, ApproxScan
	ApproxMin, ApproxScan = minRows, scan
	t.Cleanup(func() { ApproxMin, ApproxScan = oldMin, oldScan })
}

// checkGroups verifies that every row is in exactly the group at[] says.
func checkGroups(t *testing.T, v *Vectors) {
	t.Helper()
	v.mu.RLock()
	defer v.mu.RUnlock()
	g := v.groups
	if g == nil {
		t.Fatal("no groups built")
	}
	if len(g.at) != len(v.keys) {
		t.Fatalf("groups cover %d rows, space has %d", len(g.at), len(v.keys))
	}
	seen := make([]int, len(v.keys))
	for c, l := range g.lists {
		for _, r := range l {
			if int(r) >= len(v.keys) || g.at[r] != int32(c) {
				t.Fatalf("row %d listed in group %d, at says %d", r, c, g.at[r])
			}
			seen[r]++
		}
	}
	for r, n := range seen {
		if n != 1 {
			t.Fatalf("row %d (%s) is in %d groups", r, v.keys[r], n)
		}
	}
}

func keysOf(hits []VecHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Key
	}
	return out
}

// TestVectorsApproxFollowsWrites builds groups, then sets, changes,
// deletes and renames rows; scanning every group must then give exactly
// the exact answer, and every row must sit in one group.
func TestVectorsApproxFollowsWrites(t *testing.T) {
	withApprox(t, 100, 1)
	rng := rand.New(rand.NewPCG(4, 4))
	v := NewVectors()
	for i, x := range clustered(rng, 2000, 16, 20) {
		v.Set(fmt.Sprintf("k%04d", i), x)
	}
	q := randUnit(rng, 16)
	if got := v.NearestApprox(q, 50, -1); !slices.Equal(got, v.Nearest(q, 50, -1)) {
		t.Fatal("before the groups exist NearestApprox must scan exactly")
	}
	for v.building.Load() {
		runtime.Gosched()
	}
	checkGroups(t, v)
	for i := range 300 {
		v.Set(fmt.Sprintf("new%03d", i), randUnit(rng, 16)) // appended rows
		v.Set(fmt.Sprintf("k%04d", i*5), randUnit(rng, 16)) // changed rows
		v.Delete(fmt.Sprintf("k%04d", 1+i*5))
	}
	v.DeleteFunc(func(k string) bool { return k > "k1900" })
	v.Rekey(func(k string) (string, bool) {
		if k < "k0100" {
			return "moved/" + k, true
		}
		return k, false
	})
	checkGroups(t, v)
	for range 20 {
		q := randUnit(rng, 16)
		got, want := v.NearestApprox(q, 40, 0.1), v.Nearest(q, 40, 0.1)
		if !slices.Equal(got, want) {
			t.Fatalf("scanning every group differs from the exact scan:\n got %v\nwant %v", keysOf(got), keysOf(want))
		}
	}
	v.Reset()
	if hits := v.NearestApprox(q, 5, -1); len(hits) != 0 {
		t.Fatalf("reset space found %v", hits)
	}
}

// TestVectorsApproxInstallAfterWrites trains groups on a copy, changes the
// space, then installs them: the changed and new rows must be grouped too.
func TestVectorsApproxInstallAfterWrites(t *testing.T) {
	withApprox(t, 100, 1)
	rng := rand.New(rand.NewPCG(5, 5))
	v := NewVectors()
	for i, x := range clustered(rng, 1500, 8, 10) {
		v.Set(fmt.Sprintf("k%04d", i), x)
	}
	v.mu.RLock()
	data, gen := slices.Clone(v.data), v.gen
	v.mu.RUnlock()
	x := trainIVF(data, 8, 1)
	for i := range 200 {
		v.Delete(fmt.Sprintf("k%04d", i*7))
		v.Set(fmt.Sprintf("n%04d", i), randUnit(rng, 8))
		v.Set(fmt.Sprintf("k%04d", i*7+3), randUnit(rng, 8))
	}
	v.install(x, data, gen)
	checkGroups(t, v)
	q := randUnit(rng, 8)
	if got, want := v.NearestApprox(q, 100, -1), v.Nearest(q, 100, -1); !slices.Equal(got, want) {
		t.Fatalf("after install, full group scan differs:\n got %v\nwant %v", keysOf(got), keysOf(want))
	}
}

// TestVectorsApproxRecall checks the default scan share on a clustered
// space: at k=400 the approximate lookup must find at least 95% of the
// exact answer, while scanning well under all the rows.
func TestVectorsApproxRecall(t *testing.T) {
	withApprox(t, 1000, ApproxScan)
	rng := rand.New(rand.NewPCG(6, 6))
	v := NewVectors()
	vecs := clustered(rng, 40000, 32, 200)
	for i, x := range vecs {
		v.Set(fmt.Sprintf("k%05d", i), x)
	}
	v.building.Store(true)
	v.build()
	checkGroups(t, v)
	found, total := 0, 0
	for range 30 {
		// Queries near the data, as a query about the corpus is.
		q := vecs[rng.IntN(len(vecs))]
		want := map[string]bool{}
		for _, h := range v.Nearest(q, 400, -1) {
			want[h.Key] = true
		}
		for _, h := range v.NearestApprox(q, 400, -1) {
			if want[h.Key] {
				found++
			}
		}
		total += len(want)
	}
	if recall := float64(found) / float64(total); recall < 0.95 {
		t.Fatalf("recall@400 %.3f < 0.95 with ApproxScan %.2f", recall, ApproxScan)
	}
}

// BenchmarkNearestApprox200k compares the exact scan with the grouped one
// on 200 000 clustered 100-dim vectors (the synthetic corpus's chunk count),
// k=400 as content search asks, each by the float32 and the int8 scan.
func BenchmarkNearestApprox200k(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	v := NewVectors()
	vecs := clustered(rng, 200_000, 100, 500)
	for i, x := range vecs {
		v.Set(fmt.Sprint(i), x)
	}
	v.building.Store(true)
	v.build()
	q := vecs[7]
	for _, scan := range []string{"float32", "int8"} {
		quantScan = scan == "int8"
		b.Run("exact/scan="+scan, func(b *testing.B) {
			for b.Loop() {
				v.Nearest(q, 400, 0)
			}
		})
		b.Run("approx/scan="+scan, func(b *testing.B) {
			for b.Loop() {
				v.NearestApprox(q, 400, 0)
			}
		})
	}
	quantScan = true
}

// TestApproxTinySpace: a build asked for on a space that has (or has
// shrunk to) fewer rows than groups builds none instead of panicking, and
// lookups stay exact; trainIVF itself starts at most one group per row.
func TestApproxTinySpace(t *testing.T) {
	withApprox(t, 1, .3)
	rng := rand.New(rand.NewPCG(3, 3))
	v := NewVectors()
	for i := range 10 {
		v.Set(fmt.Sprint("k", i), randUnit(rng, 3))
	}
	// A lookup may start a (futile) background build; let it end before
	// withApprox restores the settings it reads.
	t.Cleanup(func() {
		for v.building.Load() {
			runtime.Gosched()
		}
	})
	v.BuildApprox()
	q := randUnit(rng, 3)
	if got, want := v.NearestApprox(q, 4, -1), v.Nearest(q, 4, -1); !slices.Equal(got, want) {
		t.Fatalf("NearestApprox = %v, Nearest = %v", got, want)
	}
	data := make([]float32, 5*3)
	for i := range data {
		data[i] = float32(i%7) + 1
	}
	if x := trainIVF(data, 3, 1); len(x.centroids)/3 > 5 || len(x.at) != 5 {
		t.Fatalf("5 rows: %d groups, %d rows assigned", len(x.centroids)/3, len(x.at))
	}
}
