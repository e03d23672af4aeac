package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
)

// BM25 column weights of chunks_fts (path, body), chosen on the GOROOT eval
// (docs/bench/index.md).
var (
	WeightPath = 16.0
	WeightBody = 1.0
)

// SearchChunks implements index.Store: an all-tokens lookup first, then
// any token when it finds too few chunks.
func (ix *Index) SearchChunks(ctx context.Context, tokens []string, f index.Filter, limit int) ([]index.ChunkHit, error) {
	if len(tokens) == 0 || limit <= 0 {
		return nil, nil
	}
	if len(tokens) > 1 && !f.AnyToken {
		hits, err := ix.searchChunks(ctx, index.MatchAll(tokens), f, limit)
		if err != nil || len(hits) >= index.AllTokensEnough(limit) {
			return hits, err
		}
	}
	return ix.searchChunks(ctx, index.MatchAny(tokens), f, limit)
}

// searchChunks ranks the chunks matching match and reads the rows of the
// best limit only: joining chunks before the sort read the text (and
// vector) of every matching chunk, most of which the limit then dropped.
func (ix *Index) searchChunks(ctx context.Context, match string, f index.Filter, limit int) ([]index.ChunkHit, error) {
	rank := fmt.Sprintf(`SELECT chunks_fts.rowid AS id, bm25(chunks_fts, %g, %g) AS r FROM chunks_fts`, WeightPath, WeightBody)
	var where []string
	args := []any{match}
	if !f.Empty() {
		rank += ` JOIN chunks fc ON fc.id = chunks_fts.rowid JOIN files f ON f.path = fc.path`
		if f.Task != "" {
			where = append(where, `f.task = ?`)
			args = append(args, f.Task)
		}
		if f.CreatedBy != "" {
			where = append(where, `f.created_by = ?`)
			args = append(args, f.CreatedBy)
		}
		if f.PathPrefix != "" && f.PathPrefix != "/" {
			c, a := below("fc.path", f.PathPrefix)
			where = append(where, c)
			args = append(args, a...)
		}
		if f.Type != "" {
			where = append(where, `f.ext = ?`)
			args = append(args, strings.ToLower(f.Type))
		}
		for k, v := range f.Tags {
			where = append(where, `EXISTS (SELECT 1 FROM json_each(f.extra) j WHERE j.key = ? AND j.value = ?)`)
			args = append(args, k, v)
		}
	}
	rank += ` WHERE chunks_fts MATCH ?`
	for _, w := range where {
		rank += ` AND ` + w
	}
	rank += ` ORDER BY r LIMIT ?`
	args = append(args, limit)
	q := `SELECT c.path, c.no, c.start_line, c.end_line, c.text, t.r FROM (` + rank + `) t JOIN chunks c ON c.id = t.id ORDER BY t.r`
	rows, err := ix.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, storeErr("search", "/", err)
	}
	defer rows.Close()
	var out []index.ChunkHit
	for rows.Next() {
		var h index.ChunkHit
		var r float64
		if err := rows.Scan(&h.Path, &h.No, &h.StartLine, &h.EndLine, &h.Text, &r); err != nil {
			return nil, storeErr("search", "/", err)
		}
		h.Score = -r
		out = append(out, h)
	}
	return out, rows.Err()
}

// Chunk implements index.Store.
func (ix *Index) Chunk(ctx context.Context, key string) (index.ChunkHit, error) {
	var h index.ChunkHit
	err := ix.db.QueryRowContext(ctx, `SELECT path, no, start_line, end_line, text FROM chunks WHERE key = ?`, key).
		Scan(&h.Path, &h.No, &h.StartLine, &h.EndLine, &h.Text)
	if err == sql.ErrNoRows {
		return h, semfs.PathErr("search", "/", semfs.ErrNotExist, "no chunk "+key)
	}
	if err != nil {
		return h, storeErr("search", "/", err)
	}
	return h, nil
}

// Nearest implements index.Store from memory (no SQL on the query path).
// The content space goes through Vectors.NearestApprox, which scans
// exactly below index.ApproxMin rows (every corpus measured so far) and
// approximately above; the tag space is always scanned exactly, since seed
// 000 returns every file above the threshold.
func (ix *Index) Nearest(ctx context.Context, space string, q []float32, k int, min float32) ([]index.VecHit, error) {
	v, ok := ix.vecs[space]
	if !ok {
		return nil, errSpace(space)
	}
	if space == embedding.SpaceContent {
		return v.NearestApprox(q, k, min), nil
	}
	return v.Nearest(q, k, min), nil
}

// BuildApprox builds the groups of the content space's approximate lookup
// now (they are otherwise built in the background by the first search on
// a large space, which meanwhile scans exactly).
func (ix *Index) BuildApprox() { ix.vecs[embedding.SpaceContent].BuildApprox() }

func errSpace(space string) error { return index.ErrUnknownSpace(space) }
