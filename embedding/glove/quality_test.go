package glove

import (
	"bufio"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/semfs/semfs/embedding"
)

// pairs reads a TSV of id, text_a, text_b with a header line.
func pairs(t testing.TB, path string) (a, b []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		if first {
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 3 {
			t.Fatalf("%s: line %q has %d columns, want 3", path, sc.Text(), len(cols))
		}
		a, b = append(a, cols[1]), append(b, cols[2])
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// retrieval is the result of ranking every b for each a by cosine.
type retrieval struct {
	top1      int
	mrr       float64
	related   []float32 // cos(a_i, b_i)
	unrelated []float32 // cos(a_i, b_j), i != j
}

func evaluate(t testing.TB, e embedding.Embedder, a, b []string) retrieval {
	t.Helper()
	ctx := context.Background()
	va, err := e.Embed(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	vb, err := e.Embed(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	var r retrieval
	for i := range va {
		own := embedding.Cosine(va[i], vb[i])
		rank := 1
		for j := range vb {
			if j == i {
				continue
			}
			s := embedding.Cosine(va[i], vb[j])
			r.unrelated = append(r.unrelated, s)
			if s >= own {
				rank++
			}
		}
		r.related = append(r.related, own)
		if rank == 1 {
			r.top1++
		}
		r.mrr += 1 / float64(rank)
	}
	r.mrr /= float64(len(va))
	slices.Sort(r.related)
	slices.Sort(r.unrelated)
	return r
}

// quantile of sorted xs.
func quantile(xs []float32, q float64) float32 {
	return xs[int(q*float64(len(xs)-1))]
}

// share returns the fraction of sorted xs at or above th.
func share(xs []float32, th float32) float64 {
	i, _ := slices.BinarySearch(xs, th)
	return float64(len(xs)-i) / float64(len(xs))
}
