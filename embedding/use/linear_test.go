package use

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLinearKernels checks the SIMD kernel (when the CPU has it) against a
// float64 reference, for row counts that exercise the 3-row blocks and the
// leftover rows, with and without accumulation.
func TestLinearKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 4, 5, 7, 31} {
		for _, dk := range [][2]int{{8, 4}, {256, 12}, {512, 1536 / 8}, {1536, 8}} {
			d, k := dk[0], dk[1]
			a := randVec(r, n*d)
			w := randVec(r, k*d)
			b := randVec(r, k)
			init := randVec(r, n*k)
			for _, acc := range []bool{false, true} {
				for _, impl := range []string{"linear", "linearGo"} {
					dst := append([]float32(nil), init...)
					if impl == "linear" {
						linear(dst, a, n, d, w, b, k, acc)
					} else {
						linearGo(dst, a, n, d, w, b, k, acc)
					}
					for i := 0; i < n; i++ {
						for j := 0; j < k; j++ {
							var want float64
							for c := 0; c < d; c++ {
								want += float64(a[i*d+c]) * float64(w[j*d+c])
							}
							want += float64(b[j])
							if acc {
								want += float64(init[i*k+j])
							}
							if got := float64(dst[i*k+j]); math.Abs(got-want) > 1e-4*math.Sqrt(float64(d)) {
								t.Fatalf("%s n=%d d=%d k=%d acc=%v: [%d][%d] = %g, want %g", impl, n, d, k, acc, i, j, got, want)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("SIMD kernels in use: %v", hasSIMD)
}

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}
