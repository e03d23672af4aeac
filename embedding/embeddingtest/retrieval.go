package embeddingtest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/semfs/semfs/embedding"
)

// Pairs reads a calibration set: a TSV of id, text_a, text_b with a header
// line (embedding/testdata/paraphrase.tsv and tags.tsv).
func Pairs(path string) (a, b []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 3 {
			return nil, nil, fmt.Errorf("%s: line %q has %d columns, want 3", path, sc.Text(), len(cols))
		}
		a, b = append(a, cols[1]), append(b, cols[2])
	}
	return a, b, sc.Err()
}

// Retrieval is the result of ranking every b[j] for each a[i] by cosine
// similarity, where b[i] is a[i]'s true partner.
type Retrieval struct {
	Top1      int       // partners ranked first
	MRR       float64   // mean reciprocal rank of the partner
	Related   []float32 // sorted cos(a_i, b_i)
	Unrelated []float32 // sorted cos(a_i, b_j), i != j
}

// Rank embeds both columns with e and ranks each a's partner among all bs.
func Rank(ctx context.Context, e embedding.Embedder, a, b []string) (Retrieval, error) {
	var r Retrieval
	va, err := e.Embed(ctx, a)
	if err != nil {
		return r, err
	}
	vb, err := e.Embed(ctx, b)
	if err != nil {
		return r, err
	}
	for i := range va {
		own := embedding.Cosine(va[i], vb[i])
		pos := 1
		for j := range vb {
			if j == i {
				continue
			}
			s := embedding.Cosine(va[i], vb[j])
			r.Unrelated = append(r.Unrelated, s)
			if s >= own {
				pos++
			}
		}
		r.Related = append(r.Related, own)
		if pos == 1 {
			r.Top1++
		}
		r.MRR += 1 / float64(pos)
	}
	r.MRR /= float64(len(va))
	slices.Sort(r.Related)
	slices.Sort(r.Unrelated)
	return r, nil
}

// Quantile returns the q-quantile (0..1) of sorted xs.
func Quantile(sorted []float32, q float64) float32 {
	return sorted[int(q*float64(len(sorted)-1))]
}

// Share returns the fraction of sorted xs at or above th.
func Share(sorted []float32, th float32) float64 {
	i, _ := slices.BinarySearch(sorted, th)
	return float64(len(sorted)-i) / float64(len(sorted))
}
