package index

import (
	"container/heap"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Vectors is an in-memory vector space: one contiguous float32 matrix and
// an int8 copy of it (see quant.go). Nearest scans the int8 copy (on every
// core from parallelScan rows) and compares in float32 only the rows that
// could enter the answer, which is exactly the float32 scan's;
// NearestApprox scans only the rows of the groups nearest to the query once
// the space holds ApproxMin rows (see ivf.go). Safe for concurrent use.
type Vectors struct {
	mu   sync.RWMutex
	dims int
	keys []string
	pos  map[string]int
	data []float32

	stride int        // quantStride(dims)
	codes  []int8     // row i is codes[i*stride:(i+1)*stride]
	quant  []rowQuant // scale and bounds of each row
	wild   int        // rows the quantized scan cannot bound (see wildRow)

	groups   *ivf        // nil until built by NearestApprox
	gen      uint64      // mutations so far (a group build checks it)
	building atomic.Bool // a group build is running
}

// NewVectors returns an empty space; dims is fixed by the first Set.
func NewVectors() *Vectors { return &Vectors{pos: map[string]int{}} }

// Len reports how many vectors the space holds.
func (v *Vectors) Len() int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return len(v.keys)
}

// Set stores vec under key, replacing any previous vector. A vector of a
// different dimension than the space's replaces the whole space (a model
// change: the old vectors are not comparable).
func (v *Vectors) Set(key string, vec []float32) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.gen++
	if v.dims != len(vec) {
		if len(v.keys) > 0 {
			v.keys, v.data, v.pos = nil, nil, map[string]int{}
			v.codes, v.quant, v.wild = nil, nil, 0
		}
		v.dims = len(vec)
		v.stride = quantStride(len(vec))
		v.groups = nil
	}
	if i, ok := v.pos[key]; ok {
		copy(v.data[i*v.dims:(i+1)*v.dims], vec)
		v.setQuant(i, quantizeRow(v.codes[i*v.stride:(i+1)*v.stride], vec))
		if v.groups != nil {
			v.groups.move(i, vec)
		}
		return
	}
	v.appendLocked(key, vec)
}

// setQuant sets the bounds of row i, counting wild rows.
func (v *Vectors) setQuant(i int, r rowQuant) {
	if wildRow(v.quant[i]) {
		v.wild--
	}
	if wildRow(r) {
		v.wild++
	}
	v.quant[i] = r
}

func (v *Vectors) appendLocked(key string, vec []float32) {
	v.pos[key] = len(v.keys)
	v.keys = append(v.keys, key)
	v.data = append(v.data, vec...)
	v.codes = append(v.codes, make([]int8, v.stride)...)
	v.quant = append(v.quant, rowQuant{})
	v.setQuant(len(v.quant)-1, quantizeRow(v.codes[len(v.codes)-v.stride:], vec))
	if v.groups != nil {
		v.groups.add(len(v.keys)-1, vec)
	}
}

// Get returns a copy of the vector of key.
func (v *Vectors) Get(key string) ([]float32, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	i, ok := v.pos[key]
	if !ok {
		return nil, false
	}
	return append([]float32(nil), v.data[i*v.dims:(i+1)*v.dims]...), true
}

// Similarities returns the dot product of q with the vector of each key (0
// for a key without one).
func (v *Vectors) Similarities(q []float32, keys []string) []float32 {
	v.mu.RLock()
	defer v.mu.RUnlock()
	out := make([]float32, len(keys))
	if len(q) != v.dims {
		return out
	}
	d := v.dims
	for i, k := range keys {
		if j, ok := v.pos[k]; ok {
			out[i] = dot(v.data[j*d:(j+1)*d], q)
		}
	}
	return out
}

// Delete removes key.
func (v *Vectors) Delete(key string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.deleteLocked(key)
}

func (v *Vectors) deleteLocked(key string) {
	i, ok := v.pos[key]
	if !ok {
		return
	}
	v.gen++
	last := len(v.keys) - 1
	v.setQuant(i, rowQuant{})
	if v.groups != nil {
		v.groups.swapDelete(i, last)
	}
	if i != last {
		v.keys[i] = v.keys[last]
		v.pos[v.keys[i]] = i
		copy(v.data[i*v.dims:(i+1)*v.dims], v.data[last*v.dims:(last+1)*v.dims])
		copy(v.codes[i*v.stride:(i+1)*v.stride], v.codes[last*v.stride:(last+1)*v.stride])
		v.quant[i] = v.quant[last] // counted once: row last goes away
	}
	v.keys = v.keys[:last]
	v.data = v.data[:last*v.dims]
	v.codes = v.codes[:last*v.stride]
	v.quant = v.quant[:last]
	delete(v.pos, key)
}

// DeleteFunc removes every key for which drop returns true.
func (v *Vectors) DeleteFunc(drop func(key string) bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var gone []string
	for _, k := range v.keys {
		if drop(k) {
			gone = append(gone, k)
		}
	}
	for _, k := range gone {
		v.deleteLocked(k)
	}
}

// Rekey renames keys: for each key where rename returns (new, true), the
// vector moves to new.
func (v *Vectors) Rekey(rename func(key string) (string, bool)) {
	v.mu.Lock()
	defer v.mu.Unlock()
	type mv struct {
		old, new string
		vec      []float32
	}
	var moves []mv
	for i, k := range v.keys {
		if n, ok := rename(k); ok && n != k {
			moves = append(moves, mv{k, n, append([]float32(nil), v.data[i*v.dims:(i+1)*v.dims]...)})
		}
	}
	for _, m := range moves {
		v.deleteLocked(m.old)
	}
	for _, m := range moves {
		v.deleteLocked(m.new)
		v.appendLocked(m.new, m.vec)
	}
}

// Reset drops every vector.
func (v *Vectors) Reset() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.keys, v.data, v.pos, v.dims = nil, nil, map[string]int{}, 0
	v.codes, v.quant, v.stride, v.wild = nil, nil, 0, 0
	v.groups = nil
	v.gen++
}

// Nearest returns up to k keys with similarity ≥ min to q, best first
// (ties by key). Vectors are unit length, so the dot product is the cosine.
func (v *Vectors) Nearest(q []float32, k int, min float32) []VecHit {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if k <= 0 || len(q) != v.dims || v.dims == 0 {
		return nil
	}
	n := len(v.keys)
	shards := 1
	if n >= parallelScan {
		shards = runtime.GOMAXPROCS(0)
	}
	heaps := make([]hitHeap, shards)
	var wg sync.WaitGroup
	qq, quant := v.prepareQuery(q)
	for s := range shards {
		lo, hi := n*s/shards, n*(s+1)/shards
		if quant {
			wg.Go(func() { heaps[s] = v.scanQuant(&qq, q, k, min, lo, hi) })
		} else {
			wg.Go(func() { heaps[s] = v.scan(q, k, min, lo, hi) })
		}
	}
	wg.Wait()
	h := &heaps[0]
	for _, o := range heaps[1:] {
		for _, x := range o {
			if h.Len() < k {
				heap.Push(h, x)
			} else if worse((*h)[0], x) {
				(*h)[0] = x
				heap.Fix(h, 0)
			}
		}
	}
	return sorted(h)
}

// sorted empties h into a slice, best first.
func sorted(h *hitHeap) []VecHit {
	out := make([]VecHit, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(VecHit)
	}
	return out
}

// NearestApprox is Nearest for spaces where a near-exact answer is enough
// (the candidates of a content search): from ApproxMin rows it scans the
// groups whose centroids are nearest to q, at least ApproxScan of the rows,
// instead of every row. The first call on a large space starts building the
// groups in the background and scans exactly until they are ready; they
// are rebuilt when the space has doubled or halved since.
func (v *Vectors) NearestApprox(q []float32, k int, min float32) []VecHit {
	v.mu.RLock()
	n, g := len(v.keys), v.groups
	if n < ApproxMin || g == nil || len(q) != v.dims || k <= 0 {
		usable := len(q) == v.dims && k > 0
		v.mu.RUnlock()
		// A query that could not use groups (wrong dimension, k ≤ 0) must
		// not start training them again.
		if n >= ApproxMin && g == nil && usable {
			v.startBuild()
		}
		return v.Nearest(q, k, min)
	}
	defer v.mu.RUnlock()
	if n > 2*g.trained || 2*n < g.trained {
		v.startBuild()
	}
	probed := g.probe(q, n, ApproxScan)
	if qq, ok := v.prepareQuery(q); ok {
		t := newQuantTop(&qq, k, min, n)
		var buf [quantBlock]int32
		for _, c := range probed {
			rows := g.lists[c]
			for len(rows) > 0 {
				b := rows
				if len(b) > quantBlock {
					b = b[:quantBlock]
				}
				rows = rows[len(b):]
				dotsI8Idx(qq.codes, v.codes, v.stride, b, buf[:len(b)])
				t.addRows(b, buf[:len(b)], v.quant)
			}
		}
		h := v.rerank(t, q)
		return sorted(&h)
	}
	h := hitHeap{}
	d := v.dims
	for _, c := range probed {
		for _, r := range g.lists[c] {
			i := int(r)
			s := dot(v.data[i*d:(i+1)*d], q)
			h.offer(VecHit{v.keys[i], s}, k, min)
		}
	}
	return sorted(&h)
}

// BuildApprox builds the groups of NearestApprox now and waits for them
// (NearestApprox otherwise builds them in the background on first use).
// A space below ApproxMin rows gets none.
func (v *Vectors) BuildApprox() {
	if v.Len() < ApproxMin {
		return
	}
	for !v.building.CompareAndSwap(false, true) {
		runtime.Gosched() // a background build is running; build again after it
	}
	v.build()
}

// startBuild builds the groups in the background unless a build runs.
func (v *Vectors) startBuild() {
	if !v.building.CompareAndSwap(false, true) {
		return
	}
	go v.build()
}

// build trains groups on a copy of the space (so that writers and lookups
// go on meanwhile) and installs them.
func (v *Vectors) build() {
	defer v.building.Store(false)
	v.mu.RLock()
	dims, gen := v.dims, v.gen
	data := slices.Clone(v.data)
	v.mu.RUnlock()
	// The space may have shrunk (a subtree removed) since the build was
	// asked for: groups need rows to start from.
	if dims == 0 || len(data)/dims < max(ApproxMin, ivfLists(len(data)/dims)) {
		return
	}
	v.install(trainIVF(data, dims, uint64(len(data))), data, gen)
}

// install makes x, trained on data (a copy of the space at mutation count
// gen), the space's groups, re-grouping the rows that changed since.
func (v *Vectors) install(x *ivf, data []float32, gen uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	d := x.dims
	if v.dims != d {
		return
	}
	if v.gen != gen {
		n := len(v.keys)
		at := make([]int32, n)
		for r := range n {
			row := v.data[r*d : (r+1)*d]
			if r < len(x.at) && slices.Equal(row, data[r*d:(r+1)*d]) {
				at[r] = x.at[r]
			} else {
				at[r] = x.nearestCentroid(row)
			}
		}
		x.at = at
		x.lists = make([][]int32, len(x.lists))
		for r, c := range at {
			x.lists[c] = append(x.lists[c], int32(r))
		}
	}
	v.groups = x
}

// parallelScan is the space size from which Nearest scans on every core.
const parallelScan = 16384

// scan returns the best k rows of [lo, hi) as a heap.
func (v *Vectors) scan(q []float32, k int, min float32, lo, hi int) hitHeap {
	h := hitHeap{}
	d := v.dims
	for i := lo; i < hi; i++ {
		s := dot(v.data[i*d:(i+1)*d], q)
		h.offer(VecHit{v.keys[i], s}, k, min)
	}
	return h
}

// quantScan selects the quantized scan (benchmarks turn it off to compare).
// It is used where the CPU has a SIMD kernel for it: with the pure-Go
// kernels the int8 scan of 100k × 100 rows took 1.45× the float32 one
// (the Go loops are compute-bound either way), so without SIMD the float32
// scan stays; tests set quantGo to run the quantized scan on the Go kernels.
var quantScan, quantGo = true, false

// quantBlock is how many rows a quantized scan scores per kernel call.
const quantBlock = 256

// prepareQuery prepares q for a quantized scan of the space; it reports
// false when the space must be scanned in float32: q is not finite or too
// large, or the space holds a wild row (see quantNormMax).
func (v *Vectors) prepareQuery(q []float32) (quantQuery, bool) {
	if !quantScan || !(useAVX2 || quantGo) || v.wild > 0 {
		return quantQuery{}, false
	}
	qq, ok := prepareQuery(q, v.stride)
	return qq, ok && qq.norm <= quantQueryMax
}

// scanQuant is scan by the int8 rows: it returns a heap of the same hits.
func (v *Vectors) scanQuant(qq *quantQuery, q []float32, k int, min float32, lo, hi int) hitHeap {
	t := newQuantTop(qq, k, min, hi-lo)
	var buf [quantBlock]int32
	for b := lo; b < hi; b += quantBlock {
		e := b + quantBlock
		if e > hi {
			e = hi
		}
		dotsI8(qq.codes, v.codes[b*v.stride:e*v.stride], v.stride, buf[:e-b])
		t.addRange(b, buf[:e-b], v.quant)
	}
	return v.rerank(t, q)
}

// rerank computes the float32 score of t's candidates that reach its final
// floor and returns the best k of them with at least t's min as a heap.
// It holds the same hits as scan's over the same rows: every row left out
// is below min or ranks below k rows that reach min, and the order (by
// similarity, then key) is total since no score is NaN.
func (v *Vectors) rerank(t *quantTop, q []float32) hitHeap {
	h := hitHeap{}
	d := v.dims
	for _, c := range t.cands {
		if c.upper < t.floor {
			continue
		}
		i := int(c.row)
		h.offer(VecHit{v.keys[i], dot(v.data[i*d:(i+1)*d], q)}, t.k, t.min)
	}
	return h
}

// offer keeps x in h (a heap of at most k) if it reaches min and ranks
// above h's worst.
func (h *hitHeap) offer(x VecHit, k int, min float32) {
	switch {
	case x.Similarity < min:
	case len(*h) < k:
		heap.Push(h, x)
	case worse((*h)[0], x):
		(*h)[0] = x
		heap.Fix(h, 0)
	}
}

// worse reports whether a ranks below b.
func worse(a, b VecHit) bool {
	if a.Similarity != b.Similarity {
		return a.Similarity < b.Similarity
	}
	return a.Key > b.Key
}

type hitHeap []VecHit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return worse(h[i], h[j]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(VecHit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// dotGo is the dot product of equal-length a and b, unrolled by four (see
// dot_amd64.go for the SIMD one).
func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// Cosine returns the dot product of two unit vectors (0 if their lengths
// differ).
func Cosine(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	return dot(a, b)
}
