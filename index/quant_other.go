//go:build !amd64

package index

// dotsI8 sets out[r] to the dot product of the query codes q with row r of
// codes (rows of stride codes), for the len(out) rows codes holds.
func dotsI8(q []int16, codes []int8, stride int, out []int32) { dotsI8Go(q, codes, stride, out) }

// dotsI8Idx is dotsI8 over the rows numbered idx (out[r] for row idx[r]).
func dotsI8Idx(q []int16, codes []int8, stride int, idx []int32, out []int32) {
	dotsI8IdxGo(q, codes, stride, idx, out)
}
