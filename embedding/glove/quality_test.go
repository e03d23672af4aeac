package glove

import (
	"context"
	"testing"

	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/embedding/embeddingtest"
)

// pairs reads a calibration set (embeddingtest.Pairs).
func pairs(t testing.TB, path string) (a, b []string) {
	t.Helper()
	a, b, err := embeddingtest.Pairs(path)
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

// evaluate ranks every b for each a (embeddingtest.Rank).
func evaluate(t testing.TB, e embedding.Embedder, a, b []string) embeddingtest.Retrieval {
	t.Helper()
	r, err := embeddingtest.Rank(context.Background(), e, a, b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	quantile = embeddingtest.Quantile
	share    = embeddingtest.Share
)

// Calibration targets: the tag threshold admits at most 5% of unrelated
// (query, tag text) pairs, the duplicate threshold at most 1% of unrelated
// sentence pairs. The floors under top-1 and MRR sit a little below what the
// model measured when calibrated (docs/bench/embedding.md), so a regression
// in tokenisation, weighting or weights fails here.
func TestParaphraseRetrieval(t *testing.T) {
	m := load(t)
	a, b := pairs(t, "../testdata/paraphrase.tsv")
	if len(a) < 100 {
		t.Fatalf("paraphrase set has %d pairs, want at least 100", len(a))
	}
	r := evaluate(t, m, a, b)
	info := m.Info()
	t.Logf("paraphrase: %d pairs, top-1 %d (%.2f), MRR %.3f", len(a), r.Top1, float64(r.Top1)/float64(len(a)), r.MRR)
	t.Logf("  related   p10 %.2f p25 %.2f p50 %.2f p90 %.2f", quantile(r.Related, .1), quantile(r.Related, .25), quantile(r.Related, .5), quantile(r.Related, .9))
	t.Logf("  unrelated p50 %.2f p90 %.2f p95 %.2f p99 %.2f max %.2f", quantile(r.Unrelated, .5), quantile(r.Unrelated, .9), quantile(r.Unrelated, .95), quantile(r.Unrelated, .99), quantile(r.Unrelated, 1))
	dupRel, dupUnrel := share(r.Related, info.DuplicateThreshold), share(r.Unrelated, info.DuplicateThreshold)
	t.Logf("  DuplicateThreshold %.2f admits %.2f of related, %.4f of unrelated", info.DuplicateThreshold, dupRel, dupUnrel)
	if float64(r.Top1) < 0.6*float64(len(a)) || r.MRR < 0.70 {
		t.Errorf("top-1 %d/%d, MRR %.3f: want at least 60%% and 0.70", r.Top1, len(a), r.MRR)
	}
	if dupUnrel > 0.01 || dupRel < 0.3 {
		t.Errorf("DuplicateThreshold %.2f admits %.3f of unrelated (want <= 0.01) and %.2f of related (want >= 0.3)", info.DuplicateThreshold, dupUnrel, dupRel)
	}

	ta, tb := pairs(t, "../testdata/tags.tsv")
	rt := evaluate(t, m, ta, tb)
	tagRel, tagUnrel := share(rt.Related, info.TagThreshold), share(rt.Unrelated, info.TagThreshold)
	t.Logf("tags: %d pairs, top-1 %d, MRR %.3f", len(ta), rt.Top1, rt.MRR)
	t.Logf("  related   p10 %.2f p25 %.2f p50 %.2f p90 %.2f", quantile(rt.Related, .1), quantile(rt.Related, .25), quantile(rt.Related, .5), quantile(rt.Related, .9))
	t.Logf("  unrelated p50 %.2f p90 %.2f p95 %.2f p99 %.2f max %.2f", quantile(rt.Unrelated, .5), quantile(rt.Unrelated, .9), quantile(rt.Unrelated, .95), quantile(rt.Unrelated, .99), quantile(rt.Unrelated, 1))
	t.Logf("  TagThreshold %.2f admits %.2f of related, %.3f of unrelated", info.TagThreshold, tagRel, tagUnrel)
	if tagUnrel > 0.05 || tagRel < 0.55 {
		t.Errorf("TagThreshold %.2f admits %.3f of unrelated (want <= 0.05) and %.2f of related (want >= 0.55)", info.TagThreshold, tagUnrel, tagRel)
	}
}
