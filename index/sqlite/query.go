package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// BM25 column weights of chunks_fts (path, body), chosen on the GOROOT eval
// (docs/bench/index.md).
var (
	WeightPath = 16.0
	WeightBody = 1.0
)

// TagKeywordCandidates implements index.Store. Words of three or more
// characters are looked up in the trigram index over tag fields (a
// substring of ≥ 3 characters contains one of its trigrams); shorter words
// have no trigram, so they are matched by a scan of the in-memory tag table
// (see docs/bench/index.md for its cost). Either way every candidate is
// verified against the lower-cased fields.
func (ix *Index) TagKeywordCandidates(ctx context.Context, word string) ([]string, error) {
	word = strings.ToLower(word)
	if word == "" || strings.ContainsRune(word, 0) {
		return nil, nil
	}
	if utf8.RuneCountInString(word) < 3 || word != strings.ToValidUTF8(word, "") {
		return ix.scanTags(word), nil
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT f.path FROM tags_fts JOIN files f ON f.id = tags_fts.rowid WHERE tags_fts MATCH ?`,
		index.QuoteFTS(word))
	if err != nil {
		return nil, storeErr("query", "/", err)
	}
	defer rows.Close()
	var out []string
	ix.tmu.RLock()
	defer ix.tmu.RUnlock()
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, storeErr("query", "/", err)
		}
		if strings.Contains(ix.tags[p], word) {
			out = append(out, p)
		}
	}
	return out, rows.Err()
}

func (ix *Index) scanTags(word string) []string {
	ix.tmu.RLock()
	defer ix.tmu.RUnlock()
	var out []string
	for p, hay := range ix.tags {
		if strings.Contains(hay, word) {
			out = append(out, p)
		}
	}
	return out
}

// ANDFirst makes SearchChunks try chunks holding every token first, and
// fall back to any token when that finds fewer than limit/4 chunks. On the
// GOROOT eval BM25 Recall@10 and MRR were unchanged (0.899 / 0.569) and the
// median lookup took a third of the time (docs/bench/index.md): an OR of
// common tokens makes FTS5 score every chunk holding any of them. It is off
// because the Store contract (and the shared suite, index/indextest) says a
// lookup returns chunks holding any token up to limit; turning it on needs
// an all-tokens lookup in the contract, agreed with the PostgreSQL store.
var ANDFirst = false

// SearchChunks implements index.Store.
func (ix *Index) SearchChunks(ctx context.Context, tokens []string, f index.Filter, limit int) ([]index.ChunkHit, error) {
	if len(tokens) == 0 || limit <= 0 {
		return nil, nil
	}
	if ANDFirst && len(tokens) > 1 {
		hits, err := ix.searchChunks(ctx, index.MatchAll(tokens), f, limit)
		if err != nil || len(hits) >= limit/4 {
			return hits, err
		}
	}
	return ix.searchChunks(ctx, index.MatchAny(tokens), f, limit)
}

func (ix *Index) searchChunks(ctx context.Context, match string, f index.Filter, limit int) ([]index.ChunkHit, error) {
	q := fmt.Sprintf(`SELECT c.path, c.no, c.start_line, c.end_line, c.text, bm25(chunks_fts, %g, %g) AS r
		FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid`, WeightPath, WeightBody)
	var where []string
	args := []any{match}
	if !f.Empty() {
		q += ` JOIN files f ON f.path = c.path`
		if f.Task != "" {
			where = append(where, `f.task = ?`)
			args = append(args, f.Task)
		}
		if f.CreatedBy != "" {
			where = append(where, `f.created_by = ?`)
			args = append(args, f.CreatedBy)
		}
		if f.PathPrefix != "" && f.PathPrefix != "/" {
			c, a := below("c.path", f.PathPrefix)
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
	q += ` WHERE chunks_fts MATCH ?`
	for _, w := range where {
		q += ` AND ` + w
	}
	q += ` ORDER BY r LIMIT ?`
	args = append(args, limit)
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

// Nearest implements index.Store.
func (ix *Index) Nearest(ctx context.Context, space string, q []float32, k int, min float32) ([]index.VecHit, error) {
	v, ok := ix.vecs[space]
	if !ok {
		return nil, errSpace(space)
	}
	return v.Nearest(q, k, min), nil
}

func errSpace(space string) error { return index.ErrUnknownSpace(space) }

// GrepCandidates implements index.Store.
func (ix *Index) GrepCandidates(ctx context.Context, root string, q *index.Query) ([]string, int, error) {
	cond, args := below("path", root)
	var pending int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM files WHERE state = 'pending' AND `+cond, args...).Scan(&pending); err != nil {
		return nil, 0, storeErr("grep", root, err)
	}
	var sqlq string
	var qargs []any
	switch {
	case q == nil || q.Op == index.QAll:
		sqlq, qargs = `SELECT path FROM files WHERE `+cond, args
	case q.Op == index.QNone:
		sqlq, qargs = `SELECT path FROM files WHERE (grep_ok = 0 OR state = 'pending') AND `+cond, args
	default:
		fcond, fargs := below("f.path", root)
		sqlq = `SELECT f.path FROM grep_fts JOIN files f ON f.id = grep_fts.rowid WHERE grep_fts MATCH ? AND ` + fcond +
			` UNION SELECT path FROM files WHERE (grep_ok = 0 OR state = 'pending') AND ` + cond
		qargs = append(append([]any{q.FTS()}, fargs...), args...)
	}
	rows, err := ix.db.QueryContext(ctx, sqlq+` ORDER BY 1`, qargs...)
	if err != nil {
		return nil, 0, storeErr("grep", root, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, 0, storeErr("grep", root, err)
		}
		out = append(out, p)
	}
	return out, pending, rows.Err()
}
