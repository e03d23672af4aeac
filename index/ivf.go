package index

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
)

// An inverted-file (IVF) index over a Vectors space: rows are grouped by
// their nearest centroid (spherical k-means on a sample), and an
// approximate lookup scans only the groups whose centroids are nearest to
// the query, in order, until it has scanned a share of the rows. Every
// scanned row is compared exactly, so a lookup misses a row only when the
// row sits in a group that was not scanned.
//
// Averaged word vectors are poorly clustered: on the GOROOT and synthetic
// benchmark corpora (docs/bench/search.md) finding 95% of the exact 400
// nearest chunks takes scanning 30% of the rows, which saves at most 2× of
// an exact SIMD scan (3–8 ms of CPU per 100k rows). So spaces of the sizes
// measured are scanned exactly; the groups start at ApproxMin rows, where
// an exact scan costs more than a search's budget.

// IVF tuning. ApproxMin is the space size from which NearestApprox uses the
// groups (below it, and until the groups are built, it scans exactly);
// ApproxScan is the share of rows a lookup scans at least (recall@400 0.964
// on GOROOT, 0.951 on 100k synthetic files at 0.30; 0.88 at 0.15).
var (
	ApproxMin  = 1 << 18
	ApproxScan = 0.30
)

const (
	ivfSample = 16384 // rows k-means trains on
	ivfRounds = 8     // k-means iterations
)

// ivf is the group structure of a Vectors space; it is guarded by the
// space's lock.
type ivf struct {
	dims      int
	centroids []float32 // nlist × dims, unit length
	lists     [][]int32 // row numbers of each group
	at        []int32   // group of each row
	trained   int       // rows when the centroids were trained
}

// ivfLists is the number of groups for n rows: about √n, at least 16.
func ivfLists(n int) int { return max(16, int(math.Sqrt(float64(n)))) }

// nearestCentroid returns the group whose centroid is most similar to vec.
func (x *ivf) nearestCentroid(vec []float32) int32 {
	best, bs := int32(0), float32(math.Inf(-1))
	d := x.dims
	for c := 0; c*d < len(x.centroids); c++ {
		if s := dot(x.centroids[c*d:(c+1)*d], vec); s > bs {
			best, bs = int32(c), s
		}
	}
	return best
}

// add puts row i (just appended) in its group.
func (x *ivf) add(i int, vec []float32) {
	c := x.nearestCentroid(vec)
	x.at = append(x.at, c)
	x.lists[c] = append(x.lists[c], int32(i))
}

// move re-groups row i after its vector changed.
func (x *ivf) move(i int, vec []float32) {
	x.drop(x.at[i], int32(i))
	c := x.nearestCentroid(vec)
	x.at[i] = c
	x.lists[c] = append(x.lists[c], int32(i))
}

// swapDelete mirrors Vectors.deleteLocked: row i goes away and the last
// row takes its number.
func (x *ivf) swapDelete(i, last int) {
	x.drop(x.at[i], int32(i))
	if i != last {
		l := x.lists[x.at[last]]
		l[slices.Index(l, int32(last))] = int32(i)
		x.at[i] = x.at[last]
	}
	x.at = x.at[:last]
}

func (x *ivf) drop(c, row int32) {
	l := x.lists[c]
	j := slices.Index(l, row)
	l[j] = l[len(l)-1]
	x.lists[c] = l[:len(l)-1]
}

// probe returns the groups to scan for q, best first: enough of them to
// cover at least share of the n rows.
func (x *ivf) probe(q []float32, n int, share float64) []int32 {
	d := x.dims
	nl := len(x.lists)
	sims := make([]float32, nl)
	order := make([]int32, nl)
	for c := range nl {
		sims[c] = dot(x.centroids[c*d:(c+1)*d], q)
		order[c] = int32(c)
	}
	slices.SortFunc(order, func(a, b int32) int {
		switch {
		case sims[a] > sims[b]:
			return -1
		case sims[a] < sims[b]:
			return 1
		}
		return int(a - b)
	})
	want := int(math.Ceil(share * float64(n)))
	got := 0
	for i, c := range order {
		got += len(x.lists[c])
		if got >= want {
			return order[:i+1]
		}
	}
	return order
}

// trainIVF clusters rows (n × dims, in data) into groups and assigns every
// row. It reads data only; the caller holds no lock on it because it works
// on a copy.
func trainIVF(data []float32, dims int, seed uint64) *ivf {
	n := len(data) / dims
	nl := min(ivfLists(n), n) // each group starts from a row
	rng := rand.New(rand.NewPCG(seed, 0x1f))
	sample := rng.Perm(n)[:min(n, max(ivfSample, 32*nl))]
	x := &ivf{dims: dims, centroids: make([]float32, nl*dims), trained: n}
	for c := range nl {
		copy(x.centroids[c*dims:(c+1)*dims], data[sample[c]*dims:(sample[c]+1)*dims])
	}
	assign := make([]int32, len(sample))
	for range ivfRounds {
		parallelRange(len(sample), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				r := sample[i]
				assign[i] = x.nearestCentroid(data[r*dims : (r+1)*dims])
			}
		})
		sum := make([]float64, nl*dims)
		count := make([]int, nl)
		for i, r := range sample {
			c := int(assign[i])
			count[c]++
			for j, v := range data[r*dims : (r+1)*dims] {
				sum[c*dims+j] += float64(v)
			}
		}
		for c := range nl {
			if count[c] == 0 {
				// An empty group restarts at a random sample row.
				r := sample[rng.IntN(len(sample))]
				copy(x.centroids[c*dims:(c+1)*dims], data[r*dims:(r+1)*dims])
				continue
			}
			var norm float64
			for _, v := range sum[c*dims : (c+1)*dims] {
				norm += v * v
			}
			if norm == 0 {
				continue
			}
			norm = math.Sqrt(norm)
			for j := range dims {
				x.centroids[c*dims+j] = float32(sum[c*dims+j] / norm)
			}
		}
	}
	x.at = make([]int32, n)
	parallelRange(n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			x.at[r] = x.nearestCentroid(data[r*dims : (r+1)*dims])
		}
	})
	x.lists = make([][]int32, nl)
	for r, c := range x.at {
		x.lists[c] = append(x.lists[c], int32(r))
	}
	return x
}

// parallelRange calls fn on GOMAXPROCS slices of [0, n) at once.
func parallelRange(n int, fn func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for s := range p {
		lo, hi := n*s/p, n*(s+1)/p
		wg.Go(func() { fn(lo, hi) })
	}
	wg.Wait()
}
