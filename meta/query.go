package meta

import (
	"context"
	"sort"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
)

// MaxQueryBytes bounds a query's text; a longer query fails with ErrInvalid
// rather than being cut silently.
const MaxQueryBytes = 16 << 10

func checkQuery(op, text string) error {
	if len(text) > MaxQueryBytes {
		return semfs.PathErr(op, "/", semfs.ErrInvalid, "query longer than 16 KiB; shorten it to the words that matter")
	}
	return nil
}

// tagScore is one file's seed 000 score.
type tagScore struct {
	path   string
	points int
	sim    float64
}

func (s tagScore) score() float64 { return float64(s.points) + s.sim }

// Query implements semfs.QueryFS with seed 000's semantics: one point per
// query word (whitespace-separated, case-insensitive substring) found in a
// file's path, created_by, task or related apps, plus the cosine similarity
// (clamped to 0..1) of the query's embedding with the file's tag-text
// embedding. A file is returned on a keyword hit or a similarity of at least
// the tag model's TagThreshold, ranked by points + similarity (ties by
// path). Keyword candidates come from the trigram index over tag fields and
// semantic candidates from the vector index: the whole index is not
// scanned.
func (f *FS) Query(ctx context.Context, text string, limit int) ([]semfs.QueryResult, error) {
	if err := checkQuery("query", text); err != nil {
		return nil, err
	}
	f.flushCloses(context.WithoutCancel(ctx), nil)
	f.refreshPeers(ctx) // hits are filtered by the restricted set
	scores, err := f.tagScores(ctx, text, index.TagWords(text), limit)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(scores))
	for i, s := range scores {
		paths[i] = s.path
	}
	recs, err := f.store.Files(ctx, paths)
	if err != nil {
		return nil, semfs.RewritePath(err, "query", "/")
	}
	out := make([]semfs.QueryResult, 0, len(scores))
	for _, s := range scores {
		r, ok := recs[s.path]
		if !ok {
			continue // removed meanwhile
		}
		out = append(out, semfs.QueryResult{Path: r.Path, CreatedBy: r.CreatedBy, Task: r.Task,
			RelatedApps: append([]string(nil), r.RelatedApps...), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Score: s.score()})
	}
	return out, nil
}

// tagScores ranks files for a tag query whose keyword words are words;
// limit <= 0 means all matches.
//
// Only what can reach the top limit is scored: keyword hits are taken in
// tiers of equal points, best first, and a tier's similarities are computed
// only while the limit-th score so far could still be beaten or tied by
// that tier (its best possible score is points + 1); the vector index is
// asked for pure semantic matches only while they could reach the top
// limit (their best possible score is 1). The result is exactly the prefix
// of the full ranking (TestTagScoresPrefix).
func (f *FS) tagScores(ctx context.Context, text string, words []string, limit int) ([]tagScore, error) {
	if len(words) == 0 {
		return nil, semfs.PathErr("query", "/", semfs.ErrInvalid, "empty query; give words to look for in paths, creators, tasks and apps")
	}
	tiers, err := f.tagTiers(ctx, words)
	if err != nil {
		return nil, err
	}
	qv, threshold, err := f.embedTagQuery(ctx, text)
	if err != nil {
		return nil, err
	}
	var out []tagScore
	for n := len(words); n > 0; n-- {
		if len(tiers[n]) == 0 {
			continue
		}
		if full(out, limit) && kth(out) > float64(n)+1 {
			break
		}
		var sims []float32
		if qv != nil {
			sims = f.store.Similarities(ctx, embedding.SpaceTags, qv, tiers[n])
		}
		for i, p := range tiers[n] {
			s := tagScore{path: p, points: n}
			if sims != nil {
				s.sim = clamp01(sims[i])
			}
			out = append(out, s)
		}
		out = keepTop(out, limit)
	}
	if qv != nil && !(full(out, limit) && kth(out) > 1) {
		k := limit
		if k <= 0 {
			k = 1 << 30
		}
		hits, err := f.store.Nearest(ctx, embedding.SpaceTags, qv, k, threshold)
		if err != nil {
			return nil, semfs.RewritePath(err, "query", "/")
		}
		keyword := map[string]bool{}
		for _, t := range tiers {
			for _, p := range t {
				keyword[p] = true
			}
		}
		for _, h := range hits {
			if !keyword[h.Key] {
				out = append(out, tagScore{path: h.Key, sim: clamp01(h.Similarity)})
			}
		}
	}
	out = keepTop(out, limit)
	sort.Slice(out, func(i, j int) bool { return better(out[i], out[j]) })
	return out, nil
}

// tagTiers groups the files with keyword points by their points:
// tiers[n] lists the files with n points (len(words)+1 tiers).
func (f *FS) tagTiers(ctx context.Context, words []string) ([][]string, error) {
	if tt, ok := f.store.(index.TagTierer); ok {
		tiers, err := tt.TagTiers(ctx, words)
		if err != nil {
			return nil, semfs.RewritePath(err, "query", "/")
		}
		return tiers, nil
	}
	points := map[string]int{}
	for _, w := range words {
		paths, err := f.store.TagKeywordCandidates(ctx, w)
		if err != nil {
			return nil, semfs.RewritePath(err, "query", "/")
		}
		for _, p := range paths {
			points[p]++
		}
	}
	tiers := make([][]string, len(words)+1)
	for p, n := range points {
		tiers[n] = append(tiers[n], p)
	}
	return tiers, nil
}

// embedTagQuery embeds a tag query with the tag model; a nil vector (and
// no error) means ranking by keywords only.
func (f *FS) embedTagQuery(ctx context.Context, text string) ([]float32, float32, error) {
	e := f.opts.Spaces.Tags
	if e == nil {
		return nil, 0, nil
	}
	vecs, err := e.Embed(ctx, []string{text})
	if err != nil || len(vecs) != 1 {
		if ctx.Err() != nil {
			return nil, 0, semfs.PathErr("query", "/", ctx.Err(), "")
		}
		f.log.Warn("query embedding failed; ranking by keywords only", "err", err)
		return nil, 0, nil
	}
	return vecs[0], e.Info().TagThreshold, nil
}

// better orders tag scores: higher score first, ties by path.
func better(a, b tagScore) bool {
	if x, y := a.score(), b.score(); x != y {
		return x > y
	}
	return a.path < b.path
}

// full reports whether s holds limit scores (never, for no limit).
func full(s []tagScore, limit int) bool { return limit > 0 && len(s) >= limit }

// kth is the lowest score of s: the limit-th best once keepTop has cut a
// full s to limit.
func kth(s []tagScore) float64 {
	low := s[0].score()
	for _, x := range s[1:] {
		low = min(low, x.score())
	}
	return low
}

// keepTop cuts s to its best limit scores (in no particular order) with a
// min-heap of size limit, so that a large tier costs one pass, not a sort.
func keepTop(s []tagScore, limit int) []tagScore {
	if limit <= 0 || len(s) <= limit {
		return s
	}
	top := s[:0:0]
	for _, x := range s {
		if len(top) < limit {
			top = append(top, x)
			for i := len(top) - 1; i > 0 && better(top[(i-1)/2], top[i]); i = (i - 1) / 2 {
				top[i], top[(i-1)/2] = top[(i-1)/2], top[i]
			}
			continue
		}
		if !better(x, top[0]) {
			continue
		}
		top[0] = x
		for i := 0; ; {
			l, r, m := 2*i+1, 2*i+2, i
			if l < len(top) && better(top[m], top[l]) {
				m = l
			}
			if r < len(top) && better(top[m], top[r]) {
				m = r
			}
			if m == i {
				break
			}
			top[i], top[m] = top[m], top[i]
			i = m
		}
	}
	return top
}

func clamp01(x float32) float64 {
	switch {
	case x < 0:
		return 0
	case x > 1:
		return 1
	}
	return float64(x)
}
