package use

import "sync"

// linear computes dst[i] = a[i]·W + b for the n rows of a (width m.in,
// dst width m.out), or adds that to dst when acc is set. workers > 1 splits
// the output columns among that many goroutines (for small batches, where
// the time goes to streaming the weights).
//
// With AVX2+FMA+F16C the weights are float16 panels of 16 output columns and
// an assembly kernel computes 6 rows x 16 columns per call in 12 vector
// accumulators, broadcasting one input value per row and step: every weight
// loaded is used 6 times and no horizontal sums are needed. A panel stays in
// cache while all row blocks pass over it. When a and dst have capacity for
// the rows up to the next multiple of 6, linear zeroes those extra rows of a
// and lets the kernel write junk into those of dst, so even a short text
// runs in full 6-row blocks.
func linear(dst, a []float32, n int, m *matrix, b []float32, acc bool, workers int) {
	if n == 0 {
		return
	}
	d, k := m.in, m.out
	_ = a[n*d-1]
	_ = dst[n*k-1]
	_ = b[k-1]
	if m.panels == nil {
		linearGo(dst, a, n, d, m.rows, b, k, acc)
		return
	}
	for i := 0; i < n; i++ {
		row := dst[i*k : (i+1)*k]
		if acc {
			for j, v := range b[:k] {
				row[j] += v
			}
		} else {
			copy(row, b[:k])
		}
	}
	full := n / 6 * 6
	if n6 := full + 6; n%6 != 0 && cap(a) >= n6*d && cap(dst) >= n6*k {
		a = a[:n6*d]
		clear(a[n*d:])
		dst = dst[:n6*k]
		full = n6
	}
	// Work is handed out in steps of one panel, or two with AVX-512 (whose
	// kernel covers 32 columns).
	step := 1
	if useAVX512 && (k/16)%2 == 0 {
		step = 2
	}
	steps := k / 16 / step
	run := func(s0, s1 int) {
		for p := s0 * step; p < s1*step; p += step {
			wp := &m.panels[p*d*16]
			i := 0
			if step == 2 && use12Rows {
				for ; i+12 <= full; i += 12 {
					gemm12x32z(&a[i*d], d, wp, d, &dst[i*k+p*16], k)
				}
			}
			for ; i < full; i += 6 {
				if step == 2 {
					gemm6x32z(&a[i*d], d, wp, d, &dst[i*k+p*16], k)
				} else {
					gemm6x16(&a[i*d], d, wp, d, &dst[i*k+p*16], k)
				}
			}
			for ; i < n; i++ {
				for q := p; q < p+step; q++ {
					gemm1x16(&a[i*d], &m.panels[q*d*16], d, &dst[i*k+q*16])
				}
			}
		}
	}
	if workers <= 1 || steps < 2*workers {
		run(0, steps)
		return
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(w*steps/workers, (w+1)*steps/workers)
		}()
	}
	run(0, steps/workers)
	wg.Wait()
}

// useAVX512 selects the AVX-512 kernel where the CPU has it (a variable so
// tests and benchmarks can compare both kernels).
var useAVX512 = hasAVX512

// use12Rows lets the AVX-512 path take 12-row blocks (gemm12x32z).
var use12Rows = true

// linearGo is the portable kernel over transposed weights wT [k][d]:
// 2 input rows x 2 weight rows per step.
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
