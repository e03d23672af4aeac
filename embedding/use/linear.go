package use

// linear computes dst[i][j] = a[i]·wT[j] + b[j] for n rows of a (width d) and
// k outputs, or adds that to dst when acc is set. wT is [k][d] row-major.
func linear(dst, a []float32, n, d int, wT, b []float32, k int, acc bool) {
	for i := 0; i < n; i++ {
		ai := a[i*d : (i+1)*d]
		di := dst[i*k : (i+1)*k]
		for j := 0; j < k; j++ {
			v := dot(ai, wT[j*d:(j+1)*d]) + b[j]
			if acc {
				di[j] += v
			} else {
				di[j] = v
			}
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
