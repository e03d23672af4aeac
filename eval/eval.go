// Package eval measures retrieval quality and speed of the semfs index on a
// real corpus: natural-language questions about the Go standard library
// (GOROOT/src), each with the files that answer it. It reports Recall@10 and
// MRR for BM25 alone, the content vectors alone, seed 000's tag query, and
// the fused search (weighted sum and reciprocal-rank fusion), plus index and
// query latencies. scripts/eval.sh runs it; results live in
// docs/bench/index.md.
package eval

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/meta"
)

// Question is one eval question and the tree paths that answer it.
type Question struct {
	Text    string
	Answers []string // canonical tree paths ("/net/url/url.go")
}

// LoadQuestions reads a TSV of question<TAB>comma-separated answers
// (relative to srcRoot), keeping only answers that exist under srcRoot. A
// question none of whose answers exists is an error: the file is stale.
func LoadQuestions(path, srcRoot string) ([]Question, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Question
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		q, ans, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want question<TAB>answers", path, n)
		}
		var keep []string
		for _, a := range strings.Split(ans, ",") {
			a = strings.TrimSpace(a)
			if _, err := os.Stat(filepath.Join(srcRoot, filepath.FromSlash(a))); err == nil {
				keep = append(keep, "/"+a)
			}
		}
		if len(keep) == 0 {
			return nil, fmt.Errorf("%s:%d: no answer of %q exists under %s", path, n, q, srcRoot)
		}
		out = append(out, Question{Text: q, Answers: keep})
	}
	return out, sc.Err()
}

// Score is Recall@10 and MRR of one method, averaged over questions.
type Score struct {
	Recall10 float64 `json:"recall@10"`
	MRR      float64 `json:"mrr"`
}

// Rankings are the ranked file lists of every method for one question.
type Rankings map[string][]string

// Methods evaluated, in report order.
// "tag" is seed 000's query (every whitespace-separated word counts);
// "tag-signal" is the tag signal the fused search uses (the query's content
// words only, limit 200). "search" is meta.FS.Search itself, with the
// fusion and weights it ships with (the methods above it are its signals;
// fused-sum and fused-rrf are the two fusions with the weights in force,
// which a sweep may change).
var Methods = []string{"bm25", "vector", "tag", "tag-signal", "fused-sum", "fused-rrf", "search"}

// Rank computes every method's ranking for q.
func Rank(ctx context.Context, f *meta.FS, q string) (Rankings, error) {
	sig, err := f.SearchSignals(ctx, q)
	if err != nil {
		return nil, err
	}
	r := Rankings{}
	for _, c := range sig.BM25 {
		r["bm25"] = append(r["bm25"], c.Path)
	}
	for _, c := range sig.Vector {
		r["vector"] = append(r["vector"], c.Path)
	}
	// "tag" is seed 000's query exactly (every whitespace word counts);
	// the fused methods use the search's tag signal (content words only).
	res, err := f.Query(ctx, q, 200)
	if err != nil {
		return nil, err
	}
	for _, t := range res {
		r["tag"] = append(r["tag"], t.Path)
	}
	r["tag-signal"] = sig.TagRanking()
	r["fused-sum"] = index.Ranked(meta.Fuse(sig, meta.FusionSum))
	r["fused-rrf"] = index.Ranked(meta.Fuse(sig, meta.FusionRRF))
	if _, err := f.Search(ctx, semfs.SearchRequest{Query: q, Limit: 200}, func(h semfs.SearchHit) error {
		r["search"] = append(r["search"], h.Path)
		return nil
	}); err != nil {
		return nil, err
	}
	return r, nil
}

// Judge scores one ranking against the answers.
func Judge(ranking, answers []string) (recall10, rr float64) {
	// Answers are alternatives (any one answers the question), so
	// Recall@10 is 1 when one of them is in the top ten.
	for i, p := range ranking {
		if slices.Contains(answers, p) {
			rr = 1 / float64(i+1)
			if i < 10 {
				recall10 = 1
			}
			return recall10, rr
		}
	}
	return 0, 0
}

// Average scores a method over questions (their rankings in rs).
func Average(method string, qs []Question, rs []Rankings) Score {
	var s Score
	for i, q := range qs {
		r, m := Judge(rs[i][method], q.Answers)
		s.Recall10 += r
		s.MRR += m
	}
	n := float64(len(qs))
	return Score{s.Recall10 / n, s.MRR / n}
}

// Percentiles returns the p50 and p99 of durations.
func Percentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	s := slices.Clone(d)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)]
}
