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
func (f *FS) tagScores(ctx context.Context, text string, words []string, limit int) ([]tagScore, error) {
	if len(words) == 0 {
		return nil, semfs.PathErr("query", "/", semfs.ErrInvalid, "empty query; give words to look for in paths, creators, tasks and apps")
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
	var qv []float32
	var threshold float32
	if e := f.opts.Spaces.Tags; e != nil {
		vecs, err := e.Embed(ctx, []string{text})
		if err != nil || len(vecs) != 1 {
			if ctx.Err() != nil {
				return nil, semfs.PathErr("query", "/", ctx.Err(), "")
			}
			f.log.Warn("query embedding failed; ranking by keywords only", "err", err)
		} else {
			qv, threshold = vecs[0], e.Info().TagThreshold
		}
	}
	keys := make([]string, 0, len(points))
	for p := range points {
		keys = append(keys, p)
	}
	var sims []float32
	if qv != nil {
		sims = f.store.Similarities(ctx, embedding.SpaceTags, qv, keys)
	}
	out := make([]tagScore, len(keys), len(keys)+max(limit, 0))
	for i, p := range keys {
		out[i] = tagScore{path: p, points: points[p]}
		if sims != nil {
			out[i].sim = clamp01(sims[i])
		}
	}
	if qv != nil {
		k := limit
		if k <= 0 {
			k = 1 << 30
		}
		hits, err := f.store.Nearest(ctx, embedding.SpaceTags, qv, k, threshold)
		if err != nil {
			return nil, semfs.RewritePath(err, "query", "/")
		}
		for _, h := range hits {
			if _, ok := points[h.Key]; !ok {
				out = append(out, tagScore{path: h.Key, sim: clamp01(h.Similarity)})
			}
		}
	}
	better := func(a, b tagScore) bool {
		if x, y := a.score(), b.score(); x != y {
			return x > y
		}
		return a.path < b.path
	}
	if limit > 0 && len(out) > 4*limit {
		// Keep the best limit with one partial pass (a min-heap of size
		// limit) instead of sorting every keyword candidate.
		top := out[:0:0]
		for _, s := range out {
			if len(top) < limit {
				top = append(top, s)
				for i := len(top) - 1; i > 0 && better(top[(i-1)/2], top[i]); i = (i - 1) / 2 {
					top[i], top[(i-1)/2] = top[(i-1)/2], top[i]
				}
				continue
			}
			if !better(s, top[0]) {
				continue
			}
			top[0] = s
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
		out = top
	}
	sort.Slice(out, func(i, j int) bool { return better(out[i], out[j]) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
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
