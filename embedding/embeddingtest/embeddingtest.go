// Package embeddingtest provides a small deterministic Embedder for unit tests
// of code that consumes embeddings. It is not a model: similar texts get
// similar vectors only through shared words. Production code uses the real
// compiled-in models (package embedding/models).
package embeddingtest

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"unicode"

	"github.com/semfs/semfs/embedding"
)

// Embedder hashes lower-cased word tokens into Dims buckets (signed feature
// hashing) and normalises the sum. Texts sharing words have positive cosine
// similarity; texts with no words in common are near-orthogonal.
type Embedder struct {
	Dims int
	// Fail, if set, makes Embed fail for any text it returns true for.
	Fail func(text string) bool
}

// New returns a test embedder with 64 dimensions.
func New() *Embedder { return &Embedder{Dims: 64} }

// Info implements embedding.Embedder.
func (e *Embedder) Info() embedding.ModelInfo {
	return embedding.ModelInfo{
		Name: "test-hash", Version: "1", Dims: e.Dims, WeightsSHA256: "none",
		TagThreshold: 0.3, DuplicateThreshold: 0.9,
	}
}

// Embed implements embedding.Embedder.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if e.Fail != nil && e.Fail(t) {
			return nil, errEmbed
		}
		out[i] = e.vector(t)
	}
	return out, nil
}

type embedError struct{}

func (embedError) Error() string { return "embeddingtest: injected inference failure" }

var errEmbed = embedError{}

func (e *Embedder) vector(text string) []float32 {
	v := make([]float32, e.Dims)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, w := range words {
		h := fnv.New64a()
		h.Write([]byte(w))
		s := h.Sum64()
		sign := float32(1)
		if s>>63 == 1 {
			sign = -1
		}
		v[s%uint64(e.Dims)] += sign
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		v[0] = 1
		return v
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
	return v
}
