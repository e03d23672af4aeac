package meta

import (
	"context"
	"sort"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
)

// Save-time candidate bounds (seed 001).
const (
	// CandidatesMax caps the candidates of one save (CANDIDATES_PER_SAVE_MAX).
	CandidatesMax = 10
	// lexicalPool is how many BM25 chunks the lexical pass admits by rank.
	lexicalPool = 20
	// relatedChunks is how many of a file's chunks the vector pass queries.
	relatedChunks = 8
)

// Related implements semfs.RelatedFS (seed 001's save-time candidates):
// a vector pass (content chunks of the file against every other file's
// chunks, cosine ≥ the content model's DuplicateThreshold) and a lexical
// pass (the top of a BM25 pool queried with the file's own words; the
// reported similarity is the bounded token containment of the file's words
// in the candidate chunk), deduplicated by target with the higher
// similarity winning, capped at limit (CandidatesMax when limit <= 0).
// Chunk vectors the drain has not filled yet are embedded inline, as the
// save path does, so that a brand-new file finds its duplicates.
func (f *FS) Related(ctx context.Context, name string, limit int) ([]semfs.Candidate, error) {
	p, err := semfs.Clean("related", name)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > CandidatesMax {
		limit = CandidatesMax
	}
	info, err := f.base.Stat(ctx, p)
	if err != nil {
		return nil, err
	}
	// The file and its relatives may have been closed a moment ago.
	f.flushCloses(context.WithoutCancel(ctx), nil)
	f.refreshPeers(ctx) // candidates are filtered by the restricted set
	if info.IsDir() {
		return nil, semfs.PathErr("related", p, semfs.ErrIsDir, "related needs a file")
	}
	best := map[string]semfs.Candidate{}
	add := func(c semfs.Candidate) {
		if c.Path == p {
			return
		}
		if old, ok := best[c.Path]; !ok || c.Similarity > old.Similarity {
			best[c.Path] = c
		}
	}
	var texts []string
	for no := 0; no < relatedChunks; no++ {
		c, err := f.store.Chunk(ctx, index.ChunkKey(p, no))
		if err != nil {
			break
		}
		texts = append(texts, c.Text)
	}
	// Vector pass.
	if e := f.opts.Spaces.Content; e != nil && len(texts) > 0 {
		threshold := e.Info().DuplicateThreshold
		for no, text := range texts {
			key := index.ChunkKey(p, no)
			v, ok := f.store.Vector(ctx, embedding.SpaceContent, key)
			if !ok {
				vecs, err := e.Embed(ctx, []string{text})
				if err != nil || len(vecs) != 1 {
					f.log.Warn("inline embedding failed; related uses the lexical pass only", "path", p, "err", err)
					break
				}
				v = vecs[0]
				if err := f.store.SetEmbedding(ctx, embedding.SpaceContent, key, text, v); err != nil {
					f.log.Warn("storing an inline embedding failed", "path", p, "err", err)
				}
			}
			hits, err := f.store.Nearest(ctx, embedding.SpaceContent, v, limit*4+relatedChunks, threshold)
			if err != nil {
				return nil, semfs.RewritePath(err, "related", p)
			}
			for _, h := range hits {
				add(semfs.Candidate{Path: chunkPath(h.Key), Similarity: clamp01(h.Similarity), Via: "vector"})
			}
		}
	}
	// Lexical pass.
	var all []string
	for _, t := range texts {
		all = append(all, t)
	}
	var own []string
	seen := map[string]bool{}
	for _, t := range all {
		index.Words(t, func(w string) {
			if !seen[w] {
				seen[w] = true
				own = append(own, w)
			}
		})
	}
	query := own
	if len(query) > index.MaxQueryTokens {
		query = query[:index.MaxQueryTokens]
	}
	if len(query) > 0 {
		hits, err := f.store.SearchChunks(ctx, query, index.Filter{AnyToken: true}, lexicalPool)
		if err != nil {
			return nil, semfs.RewritePath(err, "related", p)
		}
		for _, h := range hits {
			var theirs []string
			index.Words(h.Text, func(w string) { theirs = append(theirs, w) })
			add(semfs.Candidate{Path: h.Path, Similarity: index.Containment(own, theirs), Via: "lexical"})
		}
	}
	out := make([]semfs.Candidate, 0, len(best))
	for _, c := range best {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Similarity != out[j].Similarity {
			return out[i].Similarity > out[j].Similarity
		}
		return out[i].Path < out[j].Path
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func chunkPath(key string) string {
	for i := len(key) - 1; i >= 0; i-- {
		if key[i] == '#' {
			return key[:i]
		}
	}
	return key
}
