package index

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"
)

// eachKernel runs f with the AVX2 kernels (where the CPU has them) and with
// the portable ones, which lookups then use too (quantGo).
func eachKernel(t *testing.T, f func(t *testing.T)) {
	simd := useAVX2
	t.Cleanup(func() { useAVX2, quantGo = simd, false })
	for _, on := range []bool{true, false} {
		if on && !simd {
			continue
		}
		useAVX2, quantGo = on, !on
		t.Run(fmt.Sprintf("simd=%v", on), f)
	}
	useAVX2, quantGo = simd, false
}

// floatNearest is Nearest by the float32 scan (what Nearest returned
// before the quantized scan).
func floatNearest(v *Vectors, q []float32, k int, min float32) []VecHit {
	quantScan = false
	defer func() { quantScan = true }()
	return v.Nearest(q, k, min)
}

// bruteNearest is an independent reference: score every row, sort.
func bruteNearest(keys []string, vecs [][]float32, q []float32, k int, floor float32) []VecHit {
	var all []VecHit
	for i, x := range vecs {
		if s := Cosine(x, q); s >= floor {
			all = append(all, VecHit{keys[i], s})
		}
	}
	slices.SortFunc(all, func(a, b VecHit) int {
		if worse(a, b) {
			return 1
		}
		if worse(b, a) {
			return -1
		}
		return 0
	})
	return all[:min(k, len(all))]
}

// sameHits reports whether a and b are equal hit for hit, comparing scores
// bit for bit.
func sameHits(a, b []VecHit) bool {
	return slices.EqualFunc(a, b, func(x, y VecHit) bool {
		return x.Key == y.Key && math.Float32bits(x.Similarity) == math.Float32bits(y.Similarity)
	})
}

func TestQuantKernelsMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	for _, stride := range []int{16, 32, 48, 112, 512, 528, 1024} {
		rows := 37
		codes := make([]int8, rows*stride)
		for i := range codes {
			codes[i] = int8(rng.IntN(255) - 127)
		}
		// The extremes: a row of +127 and one of -127 against the largest
		// query codes the stride allows, where int32 sums come nearest to
		// overflowing.
		for j := range stride {
			codes[j] = 127
			codes[stride+j] = -127
		}
		top := quantMaxCode(stride)
		q := make([]int16, stride)
		for j := range q {
			q[j] = int16(rng.IntN(2*top+1) - top)
		}
		qMax := make([]int16, stride)
		for j := range qMax {
			qMax[j] = int16(top)
		}
		idx := []int32{3, 0, 36, 1, 1, 20}
		for _, qc := range [][]int16{q, qMax} {
			want := make([]int32, rows)
			for r := range rows {
				var s int64
				for j := range stride {
					s += int64(qc[j]) * int64(codes[r*stride+j])
				}
				if s != int64(int32(s)) {
					t.Fatalf("stride %d: reference sum %d overflows int32", stride, s)
				}
				want[r] = int32(s)
			}
			eachKernel(t, func(t *testing.T) {
				got := make([]int32, rows)
				dotsI8(qc, codes, stride, got)
				if !slices.Equal(got, want) {
					t.Fatalf("stride %d: dotsI8 %v, want %v", stride, got, want)
				}
				gi := make([]int32, len(idx))
				dotsI8Idx(qc, codes, stride, idx, gi)
				for j, r := range idx {
					if gi[j] != want[r] {
						t.Fatalf("stride %d: dotsI8Idx row %d = %d, want %d", stride, r, gi[j], want[r])
					}
				}
			})
		}
	}
}

// checkBound checks that the quantized bounds of vec against q hold the
// float32 dot product of both dot kernels, and returns the upper one's
// slack.
func checkBound(t testing.TB, vec, q []float32) float64 {
	t.Helper()
	stride := quantStride(len(vec))
	codes := make([]int8, stride)
	r := quantizeRow(codes, vec)
	qq, ok := prepareQuery(q, stride)
	if !ok {
		return math.NaN()
	}
	var s [1]int32
	dotsI8Go(qq.codes, codes, stride, s[:])
	lo, b := qq.bounds(s[0], r)
	exact := []float32{dot(vec, q), dotGo(vec, q)}
	for _, f := range exact {
		if math.IsNaN(float64(f)) {
			if !math.IsInf(b, 1) && !math.IsNaN(b) {
				t.Fatalf("float32 dot product NaN but bound %g would skip the row", b)
			}
			continue
		}
		if !(b >= float64(f)) && !math.IsNaN(b) {
			t.Fatalf("bound %g below the float32 dot product %g (row %v, query %v)", b, f, vec, q)
		}
		if !(lo <= float64(f)) && !math.IsNaN(lo) {
			t.Fatalf("lower bound %g above the float32 dot product %g (row %v, query %v)", lo, f, vec, q)
		}
	}
	return b - float64(exact[0])
}

// TestQuantBound checks the bound on unit vectors of the two models'
// dimensions, and that it is tight enough to skip most rows.
func TestQuantBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	for _, d := range []int{3, 100, 512} {
		worst := 0.0
		for range 2000 {
			worst = max(worst, checkBound(t, randUnit(rng, d), randUnit(rng, d)))
		}
		// Unit vectors: ‖v − v̂‖ is about √d·max|v|/(127·√12); the bound is
		// twice that. A much looser one would make every row a candidate.
		if worst > 0.05 {
			t.Errorf("%d dims: bound exceeds the dot product by up to %.4f", d, worst)
		}
		t.Logf("%d dims: bound − dot ≤ %.5f", d, worst)
	}
}

// adversarialRows returns rows that stress the bound: zeros, one large
// component among tiny ones, huge and tiny magnitudes, subnormals; with
// overflow, also rows whose float32 dot products with each other overflow.
func adversarialRows(rng *rand.Rand, d int, overflow bool) [][]float32 {
	var out [][]float32
	add := func(f func(j int) float32) {
		v := make([]float32, d)
		for j := range v {
			v[j] = f(j)
		}
		out = append(out, v)
	}
	add(func(int) float32 { return 0 })
	add(func(j int) float32 {
		if j == 0 {
			return 1
		}
		return 1e-4 * float32(rng.NormFloat64())
	})
	add(func(int) float32 { return math.SmallestNonzeroFloat32 })
	mags := []float64{1e-45, 1e-42, 1e-38, 1e-20, 1e-3, 1, 1e3, 1e16}
	if overflow {
		mags = append(mags, 1e19, 1e30, 3e38)
		add(func(int) float32 { return math.MaxFloat32 })
	}
	for _, mag := range mags {
		add(func(int) float32 { return float32(mag * rng.NormFloat64()) })
		add(func(j int) float32 { return float32(mag * float64(1-2*(j%2))) })
	}
	return out
}

func TestQuantBoundAdversarial(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	eachKernel(t, func(t *testing.T) {
		for _, d := range []int{1, 5, 16, 100, 512} {
			rows := adversarialRows(rng, d, true)
			for _, v := range rows {
				for _, q := range rows {
					checkBound(t, v, q)
				}
				checkBound(t, v, randUnit(rng, d))
			}
		}
	})
}

// FuzzQuantDot checks the quantize/kernel pair on arbitrary float32 bits:
// both kernels agree with an int64 sum, codes reproduce the row within the
// stored error, and the bound is at least the float32 dot product.
func FuzzQuantDot(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 0, 0, 0, 0, 128, 191}, uint8(2))
	f.Add(make([]byte, 64), uint8(8))
	f.Fuzz(func(t *testing.T, raw []byte, split uint8) {
		n := len(raw) / 4
		if n < 2 {
			return
		}
		fl := make([]float32, n)
		for i := range fl {
			fl[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		// The row and the query are the two halves (or a row and itself).
		d := n / 2
		v, q := fl[:d], fl[d:2*d]
		if split%3 == 0 {
			q = v
		}
		stride := quantStride(d)
		codes := make([]int8, stride)
		r := quantizeRow(codes, v)
		if !math.IsInf(float64(r.err), 1) {
			var e float64
			for j, x := range v {
				diff := float64(x) - float64(r.scale)*float64(codes[j])
				e += diff * diff
			}
			if math.Sqrt(e) > float64(r.err) {
				t.Fatalf("error %g above stored bound %g", math.Sqrt(e), r.err)
			}
		}
		qq, ok := prepareQuery(q, stride)
		if !ok {
			return
		}
		var want int64
		for j := range stride {
			want += int64(qq.codes[j]) * int64(codes[j])
		}
		var got [2]int32
		dotsI8Go(qq.codes, codes, stride, got[:1])
		dotsI8(qq.codes, codes, stride, got[1:]) // the AVX2 kernel where the CPU has it
		if int64(got[0]) != want || int64(got[1]) != want {
			t.Fatalf("kernels %v, int64 %d", got, want)
		}
		checkBound(t, v, q)
	})
}

// TestNearestQuantEqualsFloat compares Nearest with the float32 scan and a
// brute-force sort on clustered and uniform spaces, for several k and
// floors, bit for bit.
func TestNearestQuantEqualsFloat(t *testing.T) {
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(14, 14))
		for _, d := range []int{1, 7, 16, 100, 512} {
			n := 2000
			if d == 16 {
				n = parallelScan + 500 // sharded over every core
			}
			vecs := clustered(rng, n, d, 30)
			v := NewVectors()
			keys := make([]string, n)
			for i, x := range vecs {
				keys[i] = fmt.Sprintf("k%05d", i)
				v.Set(keys[i], x)
			}
			for qi := range 4 {
				q := randUnit(rng, d)
				if qi%2 == 0 {
					q = vecs[rng.IntN(n)] // a query near the data
				}
				for _, k := range []int{1, 10, 400, 1 << 30} {
					for _, floor := range []float32{-2, 0, 0.5, 0.9} {
						got := v.Nearest(q, k, floor)
						want := floatNearest(v, q, k, floor)
						if !sameHits(got, want) {
							t.Fatalf("d=%d k=%d min=%v: quantized %v\nfloat32 %v", d, k, floor, got, want)
						}
						if k != 10 && floor != 0 {
							continue
						}
						if brute := bruteNearest(keys, vecs, q, k, floor); !sameHits(got, brute) {
							t.Fatalf("d=%d k=%d min=%v: differs from brute force", d, k, floor)
						}
					}
				}
			}
		}
	})
}

// quantified reports whether Nearest(q, …) on v is answered by the
// quantized scan (not the float32 fallback).
func quantified(v *Vectors, q []float32) bool {
	_, ok := v.prepareQuery(q)
	return ok
}

// TestNearestQuantAdversarial: exact ties (duplicate rows under several
// keys), rows one float32 step apart, floors exactly at a row's score and k
// cutting through a tie, zero rows and queries, huge and tiny magnitudes;
// then rows whose scores overflow and a NaN row, which the float32 scan
// must answer.
func TestNearestQuantAdversarial(t *testing.T) {
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(15, 15))
		for _, d := range []int{4, 100, 512} {
			var vecs [][]float32
			base := clustered(rng, 120, d, 5)
			for i, x := range base {
				vecs = append(vecs, x)
				switch i % 4 {
				case 0: // the same row again: an exact tie broken by key
					vecs = append(vecs, slices.Clone(x))
				case 1: // one component a float32 step up or down
					y := slices.Clone(x)
					j := rng.IntN(d)
					y[j] = math.Nextafter32(y[j], float32(math.Inf(1-2*(i%8/4))))
					vecs = append(vecs, y)
				case 2: // scaled by a power of two: scores scale exactly
					y := slices.Clone(x)
					for j := range y {
						y[j] *= 0.5
					}
					vecs = append(vecs, y)
				}
			}
			vecs = append(vecs, adversarialRows(rng, d, false)...)
			v := NewVectors()
			keys := make([]string, len(vecs))
			for i := range vecs {
				// Keys in an order unrelated to the rows, so ties are
				// broken by key, not by position.
				keys[i] = fmt.Sprintf("%08x", rng.Uint32())
				v.Set(keys[i], vecs[i])
			}
			queries := [][]float32{base[0], base[1], randUnit(rng, d), make([]float32, d)}
			queries = append(queries, adversarialRows(rng, d, false)[1:]...)
			// Queries so large that scores overflow: the float32 scan.
			for _, x := range adversarialRows(rng, d, true) {
				if n := math.Sqrt(float64(dotGo(x, x))); n > quantQueryMax || math.IsInf(n, 0) {
					queries = append(queries, x)
				}
			}
			check := func(wantQuant bool) {
				t.Helper()
				for qi, q := range queries {
					ref := floatNearest(v, q, 1<<30, float32(math.Inf(-1)))
					floors := []float32{float32(math.Inf(-1)), 0}
					ks := []int{1, 50, 1 << 30}
					for _, at := range []int{0, 1, 40, 41, len(ref) / 2} {
						if at < len(ref) && !math.IsNaN(float64(ref[at].Similarity)) {
							// A floor exactly at a row's score (that row must
							// be in), and k ending on that row or in a tie.
							floors = append(floors, ref[at].Similarity)
							ks = append(ks, at+1)
						}
					}
					for _, k := range ks {
						for _, floor := range floors {
							if qi < 4 && wantQuant != quantified(v, q) {
								t.Fatalf("d=%d query %d: quantized scan used %v, want %v", d, qi, !wantQuant, wantQuant)
							}
							got, want := v.Nearest(q, k, floor), floatNearest(v, q, k, floor)
							if !sameHits(got, want) {
								t.Fatalf("d=%d query %d k=%d min=%v:\nquantized %v\nfloat32   %v", d, qi, k, floor, got, want)
							}
						}
					}
				}
			}
			check(true)
			// Overflowing rows, and a NaN row: scores that are ±Inf or NaN.
			for i, x := range adversarialRows(rng, d, true) {
				v.Set(fmt.Sprintf("o%03d", i), x)
			}
			nan := randUnit(rng, d)
			nan[d/2] = float32(math.NaN())
			v.Set("nan", nan)
			queries = queries[:4]
			check(false)
		}
	})
}

// checkQuant verifies that the int8 copy is the quantization of every row
// (the consistency check after mutations).
func checkQuant(t *testing.T, v *Vectors) {
	t.Helper()
	v.mu.RLock()
	defer v.mu.RUnlock()
	n := len(v.keys)
	if len(v.codes) != n*v.stride || len(v.quant) != n || len(v.data) != n*v.dims {
		t.Fatalf("%d rows: %d codes (stride %d), %d bounds, %d floats", n, len(v.codes), v.stride, len(v.quant), len(v.data))
	}
	codes := make([]int8, v.stride)
	for i := range n {
		r := quantizeRow(codes, v.data[i*v.dims:(i+1)*v.dims])
		if r != v.quant[i] || !slices.Equal(codes, v.codes[i*v.stride:(i+1)*v.stride]) {
			t.Fatalf("row %d (%s): stored quantization differs from its vector's", i, v.keys[i])
		}
	}
}

func TestQuantFollowsWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 16))
	v := NewVectors()
	for i := range 500 {
		v.Set(fmt.Sprintf("k%03d", i), randUnit(rng, 24))
	}
	for i := range 100 {
		v.Set(fmt.Sprintf("k%03d", i*3), randUnit(rng, 24)) // replaced
		v.Delete(fmt.Sprintf("k%03d", i*3+1))
	}
	v.DeleteFunc(func(k string) bool { return k > "k450" })
	v.Rekey(func(k string) (string, bool) {
		if k < "k050" {
			return "m/" + k, true
		}
		return k, false
	})
	checkQuant(t, v)
	q := randUnit(rng, 24)
	if got, want := v.Nearest(q, 30, 0), floatNearest(v, q, 30, 0); !sameHits(got, want) {
		t.Fatalf("after writes: %v, float32 %v", got, want)
	}
	v.Set("other", randUnit(rng, 40)) // a new model's dimension replaces the space
	checkQuant(t, v)
	if v.Len() != 1 {
		t.Fatalf("len %d after a dimension change", v.Len())
	}
	v.Reset()
	checkQuant(t, v)
	v.Set("a", []float32{1, 2, 3})
	checkQuant(t, v)
}

// TestNearestApproxQuantEqualsFloat: inside the probed groups the quantized
// scan must give what comparing every probed row in float32 gives.
func TestNearestApproxQuantEqualsFloat(t *testing.T) {
	withApprox(t, 1000, 0.3)
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(17, 17))
		v := NewVectors()
		vecs := clustered(rng, 8000, 32, 60)
		for i, x := range vecs {
			v.Set(fmt.Sprintf("k%05d", i), x)
		}
		v.BuildApprox()
		for range 10 {
			q := vecs[rng.IntN(len(vecs))]
			for _, k := range []int{10, 400} {
				got := v.NearestApprox(q, k, 0)
				quantScan = false
				want := v.NearestApprox(q, k, 0)
				quantScan = true
				if !sameHits(got, want) {
					t.Fatalf("k=%d: quantized %v\nfloat32 %v", k, keysOf(got), keysOf(want))
				}
			}
		}
	})
}

// TestQuantSkipsMostRows: on a clustered 512-dim space, the rows whose
// bound reaches the k-th score (the least the quantized scan compares in
// float32) must be a small share, or the int8 scan buys nothing.
func TestQuantSkipsMostRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 18))
	vecs := clustered(rng, 10000, 512, 100)
	v := NewVectors()
	for i, x := range vecs {
		v.Set(fmt.Sprint(i), x)
	}
	for range 5 {
		q := vecs[rng.IntN(len(vecs))]
		hits := v.Nearest(q, 100, 0)
		kth := float64(hits[len(hits)-1].Similarity)
		qq, _ := prepareQuery(q, v.stride)
		out := make([]int32, len(vecs))
		dotsI8(qq.codes, v.codes, v.stride, out)
		reach := 0
		for i, s := range out {
			if _, up := qq.bounds(s, v.quant[i]); up >= kth {
				reach++
			}
		}
		if reach > len(vecs)/20 {
			t.Fatalf("%d of %d rows reach the 100th score %.4f", reach, len(vecs), kth)
		}
		t.Logf("%d of %d rows reach the 100th score", reach, len(vecs))
	}
}

// benchSpace fills a space with n clustered unit vectors of d dims (c
// clusters, the shape of clustered) from a fixed seed, and returns it with
// a query near one cluster that is not itself in the space.
func benchSpace(n, d, c int) (*Vectors, []float32) {
	rng := rand.New(rand.NewPCG(21, uint64(n)))
	centres := make([][]float32, c)
	for i := range centres {
		centres[i] = randUnit(rng, d)
	}
	member := func() []float32 {
		noise := randUnit(rng, d)
		m := centres[rng.IntN(c)]
		x := make([]float32, d)
		var norm float64
		for j := range x {
			x[j] = m[j] + 0.6*noise[j]
			norm += float64(x[j]) * float64(x[j])
		}
		for j := range x {
			x[j] /= float32(math.Sqrt(norm))
		}
		return x
	}
	v := NewVectors()
	for i := range n {
		v.Set(fmt.Sprintf("f%07d", i), member())
	}
	return v, member()
}

// BenchmarkNearestQuant compares the int8 scan with exact re-rank against
// the float32 scan on clustered unit vectors: 100k × 100 dims (content
// chunks), 100k and 1M × 512 dims (tag vectors; the 1M space only with
// -bench 'NearestQuant/n=1M', it needs ~3 GB). k=400/min 0 is what content
// search asks; k=200/min 0.5 and all/min 0.5 are the tag query with and
// without a limit.
func BenchmarkNearestQuant(b *testing.B) {
	for _, sz := range []struct {
		name    string
		n, d, c int
	}{
		{"n=100k/d=100", 100_000, 100, 500},
		{"n=100k/d=512", 100_000, 512, 500},
		{"n=1M/d=512", 1_000_000, 512, 2000},
	} {
		b.Run(sz.name, func(b *testing.B) {
			v, q := benchSpace(sz.n, sz.d, sz.c)
			for _, c := range []struct {
				name  string
				k     int
				floor float32
			}{{"k=400", 400, 0}, {"k=200,min=0.5", 200, 0.5}, {"k=all,min=0.5", 1 << 30, 0.5}} {
				for _, scan := range []string{"float32", "int8"} {
					b.Run(c.name+"/scan="+scan, func(b *testing.B) {
						quantScan = scan == "int8"
						defer func() { quantScan = true }()
						cpu := cpuTime()
						for b.Loop() {
							v.Nearest(q, c.k, c.floor)
						}
						b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
					})
				}
			}
		})
	}
}

// BenchmarkDotsI8 measures the kernels on rows that stay in cache (rows=64)
// and on rows streamed from memory (rows=131072, 64 MB at 512 dims), per
// row; the float32 dot product over the same rows for comparison.
func BenchmarkDotsI8(b *testing.B) {
	rng := rand.New(rand.NewPCG(22, 22))
	for _, d := range []int{100, 512} {
		for _, rows := range []int{64, 131072} {
			stride := quantStride(d)
			codes := make([]int8, rows*stride)
			for i := range codes {
				codes[i] = int8(rng.IntN(255) - 127)
			}
			qq, _ := prepareQuery(randUnit(rng, d), stride)
			out := make([]int32, quantBlock)
			b.Run(fmt.Sprintf("d=%d/rows=%d/int8", d, rows), func(b *testing.B) {
				for b.Loop() {
					for r := 0; r < rows; r += quantBlock {
						e := min(rows, r+quantBlock)
						dotsI8(qq.codes, codes[r*stride:e*stride], stride, out[:e-r])
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
			})
			data := make([]float32, rows*d)
			for i := range data {
				data[i] = float32(rng.NormFloat64())
			}
			q := randUnit(rng, d)
			b.Run(fmt.Sprintf("d=%d/rows=%d/float32", d, rows), func(b *testing.B) {
				var sink float32
				for b.Loop() {
					for r := range rows {
						sink += dot(data[r*d:(r+1)*d], q)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
			})
		}
	}
}

// cpuTime is the process's user+system CPU time so far: on a machine
// shared with other work, CPU per operation is steadier than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
