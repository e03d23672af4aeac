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
	for _, kern := range []string{"avx2", "avx512-6rows", "avx512"} {
		if kern != "avx2" && !hasAVX512 {
			continue
		}
		t.Run(kern, func(t *testing.T) {
			defer func(z, r bool) { useAVX512, use12Rows = z, r }(useAVX512, use12Rows)
			useAVX512 = kern != "avx2"
			use12Rows = kern == "avx512"
			testLinearKernels(t)
		})
	}
}

func testLinearKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 4, 5, 7, 13, 24, 31} {
		for _, dk := range [][2]int{{8, 16}, {256, 12}, {256, 48}, {512, 192}, {1536, 32}, {7, 3}} {
			d, k := dk[0], dk[1]
			a := randVec(r, n*d)
			w16 := randHalves(r, d*k) // [d][k], the file layout
			w := halfsToFloat32(w16)
			m := newMatrix(w16, d, k)
			wT := transpose(w, d, k)
			b := randVec(r, k)
			init := randVec(r, n*k)
			for _, acc := range []bool{false, true} {
				for _, impl := range []string{"linear", "linearGo"} {
					dst := append([]float32(nil), init...)
					if n%2 == 1 {
						// Spare capacity: linear may run whole 6-row blocks.
						dst = append(make([]float32, 0, (n+5)*k), init...)
						a = append(make([]float32, 0, (n+5)*d), a...)
						a[:cap(a)][n*d] = float32(math.NaN()) // must be cleared, not used
					}
					if impl == "linear" {
						linear(dst, a, n, &m, b, acc, 1+n%3)
					} else {
						linearGo(dst, a, n, d, wT, b, k, acc)
					}
					for i := 0; i < n; i++ {
						for j := 0; j < k; j++ {
							var want float64
							for c := 0; c < d; c++ {
								want += float64(a[i*d+c]) * float64(w[c*k+j])
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

// BenchmarkLinear measures the matrix kernel on a batch-32 sized FFN layer
// (384 token rows, 512 → 1536).
func BenchmarkLinear(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, d, k = 384, 512, 1536
	a, bias := randVec(r, n*d), randVec(r, k)
	m := newMatrix(randHalves(r, d*k), d, k)
	dst := make([]float32, n*k)
	for _, kern := range []string{"avx2", "avx512-6rows", "avx512"} {
		if kern != "avx2" && !hasAVX512 {
			continue
		}
		b.Run(kern, func(b *testing.B) {
			defer func(z, r bool) { useAVX512, use12Rows = z, r }(useAVX512, use12Rows)
			useAVX512 = kern != "avx2"
			use12Rows = kern == "avx512"
			cpu0 := cpuTime()
			for b.Loop() {
				linear(dst, a, n, &m, bias, false, 1)
			}
			b.ReportMetric(float64(b.N)*n*d*k*2/(cpuTime()-cpu0).Seconds()/1e9, "GFLOP/cpu-s")
		})
	}
}

// randHalves returns float16 bit patterns of magnitude 2^-6..2^2, random sign.
func randHalves(r *rand.Rand, n int) []uint16 {
	v := make([]uint16, n)
	for i := range v {
		v[i] = uint16(r.IntN(2))<<15 | uint16(9+r.IntN(8))<<10 | uint16(r.IntN(1024))
	}
	return v
}

func halfsToFloat32(h []uint16) []float32 {
	f := make([]float32, len(h))
	for i, x := range h {
		f[i] = halfToFloat(x)
	}
	return f
}

// TestAttentionKernels checks dot1x4 (strided rows) and wsum64 against Go.
func TestAttentionKernels(t *testing.T) {
	if !hasSIMD {
		t.Skip("no AVX2+FMA+F16C: attention uses the portable loops")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, dh := range []int{8, 64, 128} {
		const stride = 3 * 128
		q := randVec(r, dh)
		rows := randVec(r, 4*stride)
		var got [4]float32
		dot1x4(&q[0], &rows[0], stride, dh, &got)
		for j := range 4 {
			want := dot(q, rows[j*stride:j*stride+dh])
			if math.Abs(float64(got[j]-want)) > 1e-4 {
				t.Errorf("dh=%d: dot1x4[%d] = %g, want %g", dh, j, got[j], want)
			}
		}
		if dh%64 == 0 {
			const n = 5
			p := randVec(r, n)
			v := randVec(r, n*stride)
			o := make([]float32, dh)
			for c := 0; c < dh; c += 64 {
				wsum64(&p[0], &v[c], stride, n, &o[c])
			}
			for c := range o {
				var want float32
				for j := range n {
					want += p[j] * v[j*stride+c]
				}
				if math.Abs(float64(o[c]-want)) > 1e-4 {
					t.Fatalf("dh=%d: wsum64[%d] = %g, want %g", dh, c, o[c], want)
				}
			}
		}
	}
}
