package meta

import (
	"context"

	"github.com/semfs/semfs/index"
)

// Fusion methods for Options.Fusion.
const (
	FusionSum = "sum" // calibrated weighted sum of normalised signal scores
	FusionRRF = "rrf" // reciprocal-rank fusion
)

// Weights of FusionSum per signal. Exported as variables so the eval can
// sweep them; the defaults are the eval's choice.
var (
	WeightBM25   = 1.0
	WeightVector = 0.5
	WeightTag    = 0.2
)

// FusionRRF's parameters: a file at 0-based rank r of a signal adds
// weight/(RRFK+r+1); BM25's weight is 1. Chosen on the even questions of
// the GOROOT eval (docs/bench/eval.md): an offset of 20 rather than the
// customary 60 lets the top of each list count more, which ranked better
// at every weight tried.
var (
	RRFK            = 20.0
	RRFWeightVector = 0.5
	RRFWeightTag    = 0.5
)

// Signals are the rankings Search fuses, exposed for the eval.
type Signals struct {
	BM25   []index.ChunkHit // best chunk per file, best first
	Vector []index.ChunkHit // best chunk per file, best first (Score = cosine)
	Tag    []tagScore
}

// Fuse combines the signals into one score per file.
func Fuse(sig Signals, method string) map[string]float64 {
	if method == FusionRRF {
		lists := make([][]string, 3)
		for _, c := range sig.BM25 {
			lists[0] = append(lists[0], c.Path)
		}
		for _, c := range sig.Vector {
			lists[1] = append(lists[1], c.Path)
		}
		for _, t := range sig.Tag {
			lists[2] = append(lists[2], t.path)
		}
		out := map[string]float64{}
		for i, w := range []float64{1, RRFWeightVector, RRFWeightTag} {
			for r, p := range lists[i] {
				out[p] += w / (RRFK + float64(r) + 1)
			}
		}
		return out
	}
	out := map[string]float64{}
	if len(sig.BM25) > 0 {
		top := sig.BM25[0].Score
		for _, c := range sig.BM25 {
			if top > 0 {
				out[c.Path] += WeightBM25 * c.Score / top
			}
		}
	}
	for _, c := range sig.Vector {
		out[c.Path] += WeightVector * max(c.Score, 0)
	}
	for _, t := range sig.Tag {
		// Keyword points are unbounded; squash to 0..1 keeping order.
		s := t.score()
		out[t.path] += WeightTag * s / (1 + s)
	}
	return out
}

// SearchSignals returns the separate rankings of a query (for the eval).
func (f *FS) SearchSignals(ctx context.Context, text string) (Signals, error) {
	tokens := index.QueryTokens(text)
	return f.signals(ctx, text, tokens, index.Filter{})
}

// TagRanking returns the tag-query ranking of paths for the eval.
func (s Signals) TagRanking() []string {
	out := make([]string, len(s.Tag))
	for i, t := range s.Tag {
		out[i] = t.path
	}
	return out
}

// TagScores returns the tag signal's paths and seed 000 scores (points +
// similarity), best first, for the eval.
func (s Signals) TagScores() ([]string, []float64) {
	paths := make([]string, len(s.Tag))
	scores := make([]float64, len(s.Tag))
	for i, t := range s.Tag {
		paths[i], scores[i] = t.path, t.score()
	}
	return paths, scores
}
