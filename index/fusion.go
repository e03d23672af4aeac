package index

import "sort"

// RRFK is the k of reciprocal-rank fusion.
const RRFK = 60

// RRF fuses ranked lists of ids: score(id) = Σ w_i / (RRFK + rank_i(id)),
// ranks 1-based. weights may be nil (all 1).
func RRF(lists [][]string, weights []float64) map[string]float64 {
	out := map[string]float64{}
	for i, l := range lists {
		w := 1.0
		if weights != nil {
			w = weights[i]
		}
		for r, id := range l {
			out[id] += w / float64(RRFK+r+1)
		}
	}
	return out
}

// Ranked returns the ids of scores best first, ties broken by id, so that
// the order is stable across calls (cursor pagination relies on it).
func Ranked(scores map[string]float64) []string {
	ids := make([]string, 0, len(scores))
	for id := range scores {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if scores[ids[i]] != scores[ids[j]] {
			return scores[ids[i]] > scores[ids[j]]
		}
		return ids[i] < ids[j]
	})
	return ids
}

// Containment is the share of a's distinct tokens that also occur in b,
// between 0 and 1 (seed 001's bounded lexical similarity).
func Containment(a, b []string) float64 {
	if len(a) == 0 {
		return 0
	}
	in := make(map[string]bool, len(b))
	for _, t := range b {
		in[t] = true
	}
	seen := map[string]bool{}
	hit := 0
	for _, t := range a {
		if seen[t] {
			continue
		}
		seen[t] = true
		if in[t] {
			hit++
		}
	}
	return float64(hit) / float64(len(seen))
}
