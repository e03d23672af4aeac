package index

import (
	"math"
)

// Quantized scans.
//
// Next to its float32 matrix a Vectors space keeps every row as int8 codes
// with one float32 scale (v ≈ scale·codes), padded with zero codes to a
// multiple of 16 dims, plus two float32 bounds per row: err ≥ ‖v − scale·codes‖
// and norm ≥ ‖v‖. A lookup turns the query into int16 codes the same way,
// scans the int8 rows with an integer dot product (quant_amd64.s), and
// computes the exact float32 dot product only for the rows whose score
// could still enter the answer. The answer is exactly the float32 scan's:
//
//	q·v − q̂·v̂ = (q − q̂)·v + q̂·(v − v̂), so |q·v − q̂·v̂| ≤ ‖q − q̂‖‖v‖ + ‖q̂‖‖v − v̂‖,
//
// and the float32 dot product that scores the rows differs from q·v by at
// most γ‖q‖‖v‖ plus an underflow term (any summation order; Higham,
// Accuracy and Stability of Numerical Algorithms, §3.1). A row is skipped
// only when q̂·v̂ plus all of that is below min and below the k-th best
// q̂·v̂ minus all of that, i.e. only when it cannot be among the best k
// rows reaching min (see quantTop and Vectors.rerank). That argument needs
// every score to be a number, so a space holding a row with a non-finite
// component or a norm above quantNormMax, and a query that is not finite or
// above quantQueryMax, are scanned in float32 as before.

// quantAlign is the padding of a quantized row: the kernels step 16 codes.
const quantAlign = 16

// quantStride is the length of a quantized row of dims dims.
func quantStride(dims int) int { return (dims + quantAlign - 1) &^ (quantAlign - 1) }

// rowQuant is what a lookup needs besides a row's codes.
type rowQuant struct {
	scale float32 // v ≈ scale·codes
	err   float32 // ≥ ‖v − scale·codes‖; +Inf for a row with a non-finite component
	norm  float32 // ≥ ‖v‖
}

// roundUp32 returns the least float32 ≥ x (x ≥ 0, NaN-free).
func roundUp32(x float64) float32 {
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// quantizeRow writes vec's int8 codes to codes (len ≥ len(vec); the rest
// is zeroed) and returns its scale and bounds. The codes only need to be
// close for the scan to skip rows; the bounds are computed from the codes
// as written, so they hold whatever the rounding.
func quantizeRow(codes []int8, vec []float32) rowQuant {
	clear(codes)
	var maxAbs, sum float64
	for _, x := range vec {
		a := float64(x)
		sum += a * a // float64 cannot overflow on float32 squares
		if a < 0 {
			a = -a
		}
		if a > maxAbs {
			maxAbs = a
		}
	}
	if math.IsNaN(sum) || math.IsInf(sum, 0) {
		return rowQuant{err: float32(math.Inf(1)), norm: float32(math.Inf(1))}
	}
	norm := roundUp32(math.Sqrt(sum) * (1 + 1e-12))
	scale := float32(maxAbs / 127)
	if scale == 0 || math.IsInf(float64(scale), 0) {
		// A zero (or subnormal-tiny) row: codes stay 0, the whole row is error.
		return rowQuant{err: norm, norm: norm}
	}
	s := float64(scale)
	inv := 1 / s
	var e float64
	for i, x := range vec {
		c := math.RoundToEven(float64(x) * inv)
		if c > 127 {
			c = 127
		} else if c < -127 {
			c = -127
		}
		codes[i] = int8(c)
		d := float64(x) - c*s // c·s is exact in float64 (7 × 24 bits)
		e += d * d
	}
	return rowQuant{scale: scale, err: roundUp32(math.Sqrt(e) * (1 + 1e-12)), norm: norm}
}

// quantQuery is a query prepared for quantized scans.
type quantQuery struct {
	codes   []int16 // q̂ = scale·codes, padded to the row stride
	scale   float64
	perNorm float64 // bound per unit of ‖v‖: ‖q − q̂‖ + γ‖q‖
	perErr  float64 // bound per unit of a row's err: ‖q̂‖
	abs     float64 // underflow slack
	norm    float64 // ‖q‖
	huge    float64 // rows with norm above this could overflow float32: bounds says so
}

// quantMaxCode is the largest query code for rows of stride codes: the
// int32 sums of the kernels then cannot overflow (127·stride·code < 2^31).
func quantMaxCode(stride int) int {
	return min(32767, math.MaxInt32/(127*stride))
}

// prepareQuery quantizes q for rows of stride codes. It reports false when
// the quantized scan cannot bound q's scores (a non-finite component, or
// dims so large that query codes would be too coarse).
func prepareQuery(q []float32, stride int) (quantQuery, bool) {
	top := quantMaxCode(stride)
	if top < 127 {
		return quantQuery{}, false
	}
	var maxAbs, sum float64
	for _, x := range q {
		a := math.Abs(float64(x))
		if math.IsNaN(a) || math.IsInf(a, 0) {
			return quantQuery{}, false
		}
		maxAbs = max(maxAbs, a)
		sum += a * a
	}
	qq := quantQuery{codes: make([]int16, stride)}
	qn := math.Sqrt(sum)
	qq.norm = qn
	var e, hat float64
	if maxAbs > 0 {
		// The scale is a power of two, so x/scale and code·scale are exact
		// scalings and ‖q − q̂‖ is computed from exact differences.
		_, exp := math.Frexp(maxAbs / float64(top))
		qq.scale = math.Ldexp(1, exp)
		for i, x := range q {
			c := math.Round(float64(x) / qq.scale)
			qq.codes[i] = int16(c)
			d := float64(x) - c*qq.scale
			e += d * d
			hat += c * c
		}
		hat = math.Sqrt(hat) * qq.scale
	}
	// γ_n for float32 (u = 2^-24) with room for the final rounding of each
	// partial sum; float64 rounding in these bounds is absorbed by the
	// 2^-20 inflation applied in bound.
	n := float64(len(q) + 4)
	u := 0x1p-24
	gamma := n * u / (1 - n*u)
	qq.perNorm = math.Sqrt(e) + gamma*qn
	qq.perErr = hat
	// Every rounding of a product or sum in the subnormal range errs by at
	// most 2^-150; there are at most 2n of them.
	qq.abs = 2 * n * 0x1p-149
	qq.huge = math.MaxFloat32 / 4 / max(qn, math.SmallestNonzeroFloat64)
	return qq, true
}

// dotsI8Go is the portable kernel: out[r] = Σ q[j]·codes[r·stride+j] for
// the len(out) rows from codes.
func dotsI8Go(q []int16, codes []int8, stride int, out []int32) {
	q = q[:stride]
	for r := range out {
		row := codes[r*stride : (r+1)*stride]
		var s0, s1, s2, s3 int32
		for j := 0; j+4 <= stride; j += 4 {
			s0 += int32(q[j]) * int32(row[j])
			s1 += int32(q[j+1]) * int32(row[j+1])
			s2 += int32(q[j+2]) * int32(row[j+2])
			s3 += int32(q[j+3]) * int32(row[j+3])
		}
		out[r] = s0 + s1 + s2 + s3
	}
}

// dotsI8IdxGo is dotsI8Go over the rows numbered idx.
func dotsI8IdxGo(q []int16, codes []int8, stride int, idx []int32, out []int32) {
	q = q[:stride]
	out = out[:len(idx)]
	for r, i := range idx {
		row := codes[int(i)*stride : (int(i)+1)*stride]
		var s0, s1, s2, s3 int32
		for j := 0; j+4 <= stride; j += 4 {
			s0 += int32(q[j]) * int32(row[j])
			s1 += int32(q[j+1]) * int32(row[j+1])
			s2 += int32(q[j+2]) * int32(row[j+2])
			s3 += int32(q[j+3]) * int32(row[j+3])
		}
		out[r] = s0 + s1 + s2 + s3
	}
}

// quantNormMax is the largest row norm the quantized scan bounds: with
// rows up to it and a query norm up to quantQueryMax, no float32 dot
// product overflows, so every score is finite. A space with a larger (or
// non-finite) row, or a larger query, is scanned in float32, where its NaN
// and infinite scores rank exactly as they always have.
const (
	quantNormMax  = 1e18
	quantQueryMax = math.MaxFloat32 / 4 / quantNormMax
)

// wildRow reports whether a row with bounds r is outside what the
// quantized scan bounds.
func wildRow(r rowQuant) bool { return !(float64(r.norm) <= quantNormMax) }

// bounds returns a lower and an upper bound of the float32 dot product of
// the query with a row whose integer dot product with the query codes is
// dot; they are infinite when the float32 dot product could overflow.
func (qq *quantQuery) bounds(dot int32, r rowQuant) (lower, upper float64) {
	if float64(r.norm) > qq.huge {
		return math.Inf(-1), math.Inf(1)
	}
	a := float64(dot) * qq.scale * float64(r.scale)
	b := float64(r.norm)*qq.perNorm + float64(r.err)*qq.perErr + math.Abs(a)*0x1p-50
	b = b*(1+0x1p-20) + qq.abs
	return a - b, a + b
}

// quantTop is the first pass of a quantized lookup: it takes the rows'
// integer dot products, keeps as candidates the rows whose upper bound
// reaches the floor so far, and raises the floor to the k-th best lower
// bound: k rows score at least that, so a row whose upper bound is below it
// cannot be among the best k. Candidates are kept in the order they came.
// It needs every row's score finite (no wild rows, a query norm up to
// quantQueryMax).
type quantTop struct {
	qq    *quantQuery
	k     int
	min   float32
	floor float64     // a row with upper bound below it is not in the answer
	lows  []float64   // min-heap of the best k lower bounds ≥ min
	track bool        // k rows can be seen: keep lows
	cands []quantCand // rows whose upper bound reached the floor when seen
}

type quantCand struct {
	row   int32
	upper float64
}

// newQuantTop starts a lookup of the best k rows reaching min among rows
// rows.
func newQuantTop(qq *quantQuery, k int, min float32, rows int) *quantTop {
	t := &quantTop{qq: qq, k: k, min: min, floor: float64(min), track: k <= rows}
	if t.track {
		t.lows = make([]float64, 0, k)
	}
	return t
}

// addRange takes rows base, base+1, … whose integer dot products with the
// query codes are dots and whose bounds are quant[base:].
func (t *quantTop) addRange(base int, dots []int32, quant []rowQuant) {
	quant = quant[base : base+len(dots)]
	// Most rows stop at the first test, so it works on locals: bounds'
	// upper bound without the overflow test (quantTop's rows cannot
	// overflow). A row whose upper bound is below the floor has a lower
	// bound below it too, which cannot change lows: the floor is min until
	// lows holds k, then at least lows[0].
	scale, perNorm, perErr, abs := t.qq.scale, t.qq.perNorm, t.qq.perErr, t.qq.abs
	floor := t.floor
	for j, s := range dots {
		r := &quant[j]
		a := float64(s) * scale * float64(r.scale)
		b := float64(r.norm)*perNorm + float64(r.err)*perErr + math.Abs(a)*0x1p-50
		if a+(b*(1+0x1p-20)+abs) < floor {
			continue
		}
		t.add(int32(base+j), s, *r)
		floor = t.floor
	}
}

// addRows is addRange for the rows numbered rows.
func (t *quantTop) addRows(rows []int32, dots []int32, quant []rowQuant) {
	scale, perNorm, perErr, abs := t.qq.scale, t.qq.perNorm, t.qq.perErr, t.qq.abs
	floor := t.floor
	for j, row := range rows[:len(dots)] {
		r := &quant[row]
		a := float64(dots[j]) * scale * float64(r.scale)
		b := float64(r.norm)*perNorm + float64(r.err)*perErr + math.Abs(a)*0x1p-50
		if a+(b*(1+0x1p-20)+abs) < floor {
			continue
		}
		t.add(row, dots[j], *r)
		floor = t.floor
	}
}

// add takes row, whose integer dot product with the query codes is dot.
func (t *quantTop) add(row int32, dot int32, r rowQuant) {
	lo, up := t.qq.bounds(dot, r)
	if up < t.floor {
		return
	}
	t.cands = append(t.cands, quantCand{row, up})
	if !t.track || !(lo >= float64(t.min)) {
		return
	}
	switch {
	case len(t.lows) < t.k:
		t.lows = append(t.lows, lo)
		// Sift up.
		h := t.lows
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if h[p] <= h[i] {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
	case lo > t.lows[0]:
		h := t.lows
		h[0] = lo
		// Sift down.
		for i := 0; ; {
			c := 2*i + 1
			if c >= len(h) {
				break
			}
			if c+1 < len(h) && h[c+1] < h[c] {
				c++
			}
			if h[i] <= h[c] {
				break
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	default:
		return
	}
	if len(t.lows) == t.k && t.lows[0] > t.floor {
		t.floor = t.lows[0]
	}
}
