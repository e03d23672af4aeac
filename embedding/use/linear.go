package use

// linear computes dst[i][j] = a[i]·wT[j] + b[j] for n rows of a (width d) and
// k outputs, or adds that to dst when acc is set. wT is [k][d] row-major.
//
// The loop keeps a block of 4 weight rows hot in L1 while it walks all input
// rows 3 at a time; with AVX2+FMA each block is one call of an assembly
// kernel holding 12 vector accumulators.
func linear(dst, a []float32, n, d int, wT, b []float32, k int, acc bool) {
	if n == 0 {
		return
	}
	_ = a[n*d-1]
	_ = wT[k*d-1]
	_ = dst[n*k-1]
	if !hasSIMD || d%8 != 0 || k%4 != 0 {
		linearGo(dst, a, n, d, wT, b, k, acc)
		return
	}
	var out12 [12]float32
	var out4 [4]float32
	for j := 0; j < k; j += 4 {
		w := &wT[j*d]
		i := 0
		for ; i+3 <= n; i += 3 {
			dot3x4(&a[i*d], d, w, d, d, &out12)
			for r := 0; r < 3; r++ {
				store4(dst[(i+r)*k+j:(i+r)*k+j+4], out12[4*r:4*r+4], b[j:j+4], acc)
			}
		}
		for ; i < n; i++ {
			dot1x4(&a[i*d], w, d, d, &out4)
			store4(dst[i*k+j:i*k+j+4], out4[:], b[j:j+4], acc)
		}
	}
}

func store4(dst, v, b []float32, acc bool) {
	dst = dst[:4]
	v = v[:4]
	b = b[:4]
	if acc {
		dst[0] += v[0] + b[0]
		dst[1] += v[1] + b[1]
		dst[2] += v[2] + b[2]
		dst[3] += v[3] + b[3]
		return
	}
	dst[0] = v[0] + b[0]
	dst[1] = v[1] + b[1]
	dst[2] = v[2] + b[2]
	dst[3] = v[3] + b[3]
}

// linearGo is the portable kernel: 2 input rows x 2 weight rows per step.
func linearGo(dst, a []float32, n, d int, wT, b []float32, k int, acc bool) {
	put := func(i, j int, v float32) {
		v += b[j]
		if acc {
			dst[i*k+j] += v
		} else {
			dst[i*k+j] = v
		}
	}
	for j := 0; j < k; j += 2 {
		if j+1 == k {
			for i := 0; i < n; i++ {
				put(i, j, dot(a[i*d:(i+1)*d], wT[j*d:(j+1)*d]))
			}
			break
		}
		w0 := wT[j*d : (j+1)*d]
		w1 := wT[(j+1)*d : (j+2)*d]
		i := 0
		for ; i+2 <= n; i += 2 {
			a0 := a[i*d : (i+1)*d]
			a1 := a[(i+1)*d : (i+2)*d]
			var s00, s01, s10, s11 float32
			for c := range a0 {
				x0, x1 := a0[c], a1[c]
				y0, y1 := w0[c], w1[c]
				s00 += x0 * y0
				s01 += x0 * y1
				s10 += x1 * y0
				s11 += x1 * y1
			}
			put(i, j, s00)
			put(i, j+1, s01)
			put(i+1, j, s10)
			put(i+1, j+1, s11)
		}
		for ; i < n; i++ {
			ai := a[i*d : (i+1)*d]
			put(i, j, dot(ai, w0))
			put(i, j+1, dot(ai, w1))
		}
	}
}

// dot returns the inner product of x and y (len(y) >= len(x)).
func dot(x, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}
