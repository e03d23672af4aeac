package index

// The AVX2 kernels of quant_amd64.s, chosen with the float32 dot product's
// useAVX2 (dot_amd64.go): each row's int8 codes are sign-extended to int16
// (VPMOVSXBW) and multiplied with the int16 query codes in pairs into int32
// lanes (VPMADDWD), 32 codes a step. stride must be a positive multiple of
// 16 and n > 0.

//go:noescape
func dotsI8AVX2(q *int16, codes *int8, stride int, out *int32, n int)

//go:noescape
func dotsI8IdxAVX2(q *int16, codes *int8, stride int, idx *int32, out *int32, n int)

// dotsI8 sets out[r] to the dot product of the query codes q with row r of
// codes (rows of stride codes), for the len(out) rows codes holds.
func dotsI8(q []int16, codes []int8, stride int, out []int32) {
	if useAVX2 && len(out) > 0 {
		_ = codes[len(out)*stride-1]
		_ = q[stride-1]
		dotsI8AVX2(&q[0], &codes[0], stride, &out[0], len(out))
		return
	}
	dotsI8Go(q, codes, stride, out)
}

// dotsI8Idx is dotsI8 over the rows numbered idx (out[r] for row idx[r]);
// every idx must be a row of codes.
func dotsI8Idx(q []int16, codes []int8, stride int, idx []int32, out []int32) {
	if useAVX2 && len(idx) > 0 {
		_ = out[len(idx)-1]
		_ = q[stride-1]
		dotsI8IdxAVX2(&q[0], &codes[0], stride, &idx[0], &out[0], len(idx))
		return
	}
	dotsI8IdxGo(q, codes, stride, idx, out)
}
