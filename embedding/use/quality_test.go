package use

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/semfs/semfs/embedding/embeddingtest"
)

// readPairs reads a shared calibration set from embedding/testdata
// (maintained with the glove model); a missing file skips the test.
func readPairs(t *testing.T, path string) (a, b []string) {
	t.Helper()
	a, b, err := embeddingtest.Pairs(path)
	if os.IsNotExist(err) {
		t.Skipf("%s not present", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

// rank embeds both columns and ranks every b for each a.
func rank(t *testing.T, m *Model, a, b []string) embeddingtest.Retrieval {
	t.Helper()
	r, err := embeddingtest.Rank(context.Background(), m, a, b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	pct   = embeddingtest.Quantile
	above = embeddingtest.Share
)

func logDist(t *testing.T, name string, xs []float32) {
	t.Logf("%-9s n=%5d  p01 %.3f  p10 %.3f  p50 %.3f  p90 %.3f  p99 %.3f  max %.3f", name, len(xs),
		pct(xs, 0.01), pct(xs, 0.10), pct(xs, 0.5), pct(xs, 0.9), pct(xs, 0.99), xs[len(xs)-1])
}

// TestParaphraseCalibration measures retrieval on the paraphrase set and
// checks DuplicateThreshold against it: paraphrases (rewordings of one
// intent, the near-duplicates seed 001 wants reported) should mostly reach
// it, and unrelated pairs essentially never.
func TestParaphraseCalibration(t *testing.T) {
	m := mustLoad(t)
	a, b := readPairs(t, "../testdata/paraphrase.tsv")
	if len(a) < 100 {
		t.Fatalf("only %d paraphrase pairs", len(a))
	}
	r := rank(t, m, a, b)
	t.Logf("paraphrase pairs %d: top-1 %d/%d (%.3f), MRR %.3f", len(a), r.Top1, len(a), float64(r.Top1)/float64(len(a)), r.MRR)
	logDist(t, "related", r.Related)
	logDist(t, "unrelated", r.Unrelated)
	sweep(t, r)
	t.Logf("DuplicateThreshold %.2f: related pass %.3f, unrelated pass %.4f", DuplicateThreshold,
		above(r.Related, DuplicateThreshold), above(r.Unrelated, DuplicateThreshold))
	// Regression guards below the measured top-1 0.727, MRR 0.801, with
	// room for the shared set to grow harder pairs.
	if float64(r.Top1)/float64(len(a)) < 0.6 || r.MRR < 0.7 {
		t.Errorf("retrieval quality too low: top-1 %d/%d, MRR %.3f", r.Top1, len(a), r.MRR)
	}
	if p := above(r.Unrelated, DuplicateThreshold); p > 0.005 {
		t.Errorf("%.4f of unrelated pairs reach DuplicateThreshold %.2f", p, DuplicateThreshold)
	}
	if p := above(r.Related, DuplicateThreshold); p < 0.2 {
		t.Errorf("only %.3f of paraphrase pairs reach DuplicateThreshold %.2f", p, DuplicateThreshold)
	}
}

// TestTagCalibration checks TagThreshold on (query, tag text) pairs: the
// matching tag text should pass, tag texts of other files should not.
func TestTagCalibration(t *testing.T) {
	m := mustLoad(t)
	a, b := readPairs(t, "../testdata/tags.tsv")
	r := rank(t, m, a, b)
	t.Logf("tag pairs %d: top-1 %d/%d, MRR %.3f", len(a), r.Top1, len(a), r.MRR)
	logDist(t, "related", r.Related)
	logDist(t, "unrelated", r.Unrelated)
	sweep(t, r)
	rel, unrel := above(r.Related, TagThreshold), above(r.Unrelated, TagThreshold)
	t.Logf("TagThreshold %.2f: related pass %.3f, unrelated pass %.4f", TagThreshold, rel, unrel)
	if rel < 0.6 || unrel > 0.12 {
		t.Errorf("TagThreshold %.2f separates poorly: related pass %.3f, unrelated pass %.4f", TagThreshold, rel, unrel)
	}
}

// sweep logs, for thresholds 0.30..0.90, the share of related and unrelated
// pairs that reach it, and returns the threshold maximising
// related-pass minus unrelated-pass (Youden's J).
func sweep(t *testing.T, r embeddingtest.Retrieval) (best float32) {
	bestJ := -1.0
	var line strings.Builder
	for i := 30; i <= 90; i += 2 {
		th := float32(i) / 100
		rel, un := above(r.Related, th), above(r.Unrelated, th)
		if j := rel - un; j > bestJ {
			bestJ, best = j, th
		}
		if i%4 == 2 {
			continue
		}
		line.WriteString(strings.TrimSpace(strings.Join([]string{
			"", ftoa(th), ":", ftoa(float32(rel)), "/", ftoa(float32(un))}, " ")))
		line.WriteString("  ")
	}
	t.Logf("threshold: related pass / unrelated pass\n%s", line.String())
	t.Logf("Youden-optimal threshold %.2f (J %.3f)", best, bestJ)
	return best
}

func ftoa(f float32) string { return strings.TrimRight(strings.TrimRight(fmtf(f), "0"), ".") }

func fmtf(f float32) string { return fmt.Sprintf("%.3f", f) }
