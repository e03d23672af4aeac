package sqlite

import (
	"context"
	"database/sql"
	"strings"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/postings"
)

// BM25 field weights (path, body), chosen on the GOROOT eval
// (docs/bench/index.md).
var (
	WeightPath = 16.0
	WeightBody = 1.0
)

// SearchChunks implements index.Store: an all-tokens lookup first, then
// any token when it finds too few chunks. Both rank in memory over the
// postings (index/postings: FTS5's bm25() over the same terms), then read
// the rows of the best limit chunks.
func (ix *Index) SearchChunks(ctx context.Context, tokens []string, f index.Filter, limit int) ([]index.ChunkHit, error) {
	if len(tokens) == 0 || limit <= 0 {
		return nil, nil
	}
	terms := queryTerms(tokens)
	if len(terms) == 0 {
		return nil, nil
	}
	// The filter, the ranking and the rows read all see one state of the
	// index (freshView), so no hit is outside the filter or of another
	// chunk than the one ranked.
	var hits []index.ChunkHit
	err := ix.freshView(ctx, func(tx *sql.Tx, text, _ *postings.Index) error {
		allow, err := ix.allowed(ctx, tx, f)
		if err != nil {
			return err
		}
		if len(tokens) > 1 && !f.AnyToken {
			hits, err = ix.searchChunks(ctx, tx, text, terms, true, allow, limit)
			if err != nil || len(hits) >= index.AllTokensEnough(limit) {
				return err
			}
		}
		hits, err = ix.searchChunks(ctx, tx, text, terms, false, allow, limit)
		return err
	})
	if err != nil {
		return nil, storeErr("search", "/", err)
	}
	return hits, nil
}

// queryTerms analyses query tokens as the chunk texts were. (A token
// FTS5 split into several terms was a phrase; here its terms count
// separately. Only letters SQLite's Unicode tables lack split a token.)
func queryTerms(tokens []string) []string {
	var terms []string
	for _, t := range tokens {
		postings.Analyze(t, func(b []byte) { terms = append(terms, string(b)) })
	}
	return terms
}

// filesChunks selects the ids of the chunks of files f (to which a
// WHERE adds conditions on f): a file finds its chunks by the range of
// their keys (see chunksOf). CROSS JOIN keeps files the outer loop (the
// filters select files through their indexes): left to itself, the
// planner took chunks' (fresh, key) index for selective and scanned
// every chunk.
const filesChunks = `SELECT fc.id FROM files f CROSS JOIN chunks fc ON fc.fresh IN (0, 1) AND fc.key >= f.path || '#' AND fc.key < f.path || '$' AND octet_length(fc.key) = octet_length(f.path) + 6`

// allowed returns the chunk ids whose files pass f (nil: every chunk).
func (ix *Index) allowed(ctx context.Context, tx *sql.Tx, f index.Filter) (func(uint32) bool, error) {
	if f.Empty() {
		return nil, nil
	}
	q := filesChunks
	var where []string
	var args []any
	if f.Task != "" {
		where = append(where, `f.task = ? AND f.task != ''`) // != '': files_task is partial
		args = append(args, f.Task)
	}
	if f.CreatedBy != "" {
		where = append(where, `f.created_by = ? AND f.created_by != ''`) // != '': files_created_by is partial
		args = append(args, f.CreatedBy)
	}
	if f.PathPrefix != "" && f.PathPrefix != "/" {
		c, a := below("f.path", f.PathPrefix)
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
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, storeErr("search", "/", err)
	}
	defer rows.Close()
	set := map[uint32]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, storeErr("search", "/", err)
		}
		set[uint32(id)] = true
	}
	if err := rows.Err(); err != nil {
		return nil, storeErr("search", "/", err)
	}
	return func(id uint32) bool { return set[id] }, nil
}

// searchChunks ranks the chunks holding all (or any) of terms in text and
// reads the rows of the best limit.
func (ix *Index) searchChunks(ctx context.Context, tx *sql.Tx, text *postings.Index, terms []string, all bool, allow func(uint32) bool, limit int) ([]index.ChunkHit, error) {
	ranked := text.Search(terms, all, limit, postings.Weights{Path: WeightPath, Body: WeightBody}, allow)
	if len(ranked) == 0 {
		return nil, nil
	}
	args := make([]any, len(ranked))
	for i, h := range ranked {
		args[i] = int64(h.ID)
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, `+chunkPathNo+`, start_line, end_line, text FROM chunks WHERE id IN (`+placeholders(len(args))+`)`, args...)
	if err != nil {
		return nil, storeErr("search", "/", err)
	}
	defer rows.Close()
	byID := make(map[uint32]index.ChunkHit, len(ranked))
	for rows.Next() {
		var id int64
		var h index.ChunkHit
		if err := rows.Scan(&id, &h.Path, &h.No, &h.StartLine, &h.EndLine, &h.Text); err != nil {
			return nil, storeErr("search", "/", err)
		}
		byID[uint32(id)] = h
	}
	if err := rows.Err(); err != nil {
		return nil, storeErr("search", "/", err)
	}
	out := make([]index.ChunkHit, 0, len(ranked))
	for _, r := range ranked {
		h, ok := byID[r.ID]
		if !ok {
			continue // not expected: the rows and the ranking are of one view
		}
		h.Score = r.Score
		out = append(out, h)
	}
	return out, nil
}

// Chunk implements index.Store.
func (ix *Index) Chunk(ctx context.Context, key string) (index.ChunkHit, error) {
	var h index.ChunkHit
	err := ix.db.QueryRowContext(ctx, `SELECT `+chunkPathNo+`, start_line, end_line, text FROM chunks WHERE fresh IN (0, 1) AND key = ?`, key).
		Scan(&h.Path, &h.No, &h.StartLine, &h.EndLine, &h.Text)
	if err == sql.ErrNoRows {
		return h, semfs.PathErr("search", "/", semfs.ErrNotExist, "no chunk "+key)
	}
	if err != nil {
		return h, storeErr("search", "/", err)
	}
	return h, nil
}

// Nearest implements index.Store from memory (the query path's one SQL
// statement asks whether other processes changed vectors: see fresh.go).
// The content space goes through Vectors.NearestApprox, which scans
// exactly below index.ApproxMin rows (every corpus measured so far) and
// approximately above; the tag space is always scanned exactly, since seed
// 000 returns every file above the threshold.
func (ix *Index) Nearest(ctx context.Context, space string, q []float32, k int, min float32) ([]index.VecHit, error) {
	v, ok := ix.vecs[space]
	if !ok {
		return nil, errSpace(space)
	}
	if err := ix.refresh(ctx); err != nil {
		return nil, err
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
