package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

const fileCols = `path, created_by, task, related_apps, summary, links, provenance, extra, groups, public,
	created_at, updated_at, size, hash, mtime, state, reason`

func scanFileRow(r pgx.CollectableRow) (index.File, error) { return scanFile(r) }

func scanFile(s interface{ Scan(...any) error }) (index.File, error) {
	var f index.File
	var created, updated, mtime int64
	err := s.Scan(&f.Path, &f.CreatedBy, &f.Task, &f.RelatedApps, &f.Summary, &f.Links, &f.Provenance, &f.Extra,
		&f.Groups, &f.Public, &created, &updated, &f.Size, &f.Hash, &mtime, &f.State, &f.Reason)
	if err != nil {
		return f, err
	}
	if len(f.RelatedApps) == 0 {
		f.RelatedApps = nil
	}
	if len(f.Links) == 0 {
		f.Links = nil
	}
	if len(f.Groups) == 0 {
		f.Groups = nil
	}
	if len(f.Extra) == 0 {
		f.Extra = nil
	}
	f.CreatedAt = time.Unix(0, created).UTC()
	f.UpdatedAt = time.Unix(0, updated).UTC()
	if mtime != 0 {
		f.ModTime = time.Unix(0, mtime).UTC()
	}
	return f, nil
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func timeAfter(ms int) <-chan time.Time { return time.After(time.Duration(ms) * time.Millisecond) }

// below returns the SQL condition selecting col at or below root, with
// placeholders numbered from n.
func below(col, root string, n int) (string, []any) {
	if root == "/" || root == "" {
		return "true", nil
	}
	// '0' is the byte after '/', so [root/, root0) is everything below root
	// (the columns use the "C" collation: byte order).
	return fmt.Sprintf("(%s = $%d OR (%s >= $%d AND %s < $%d))", col, n, col, n+1, col, n+2), []any{root, root + "/", root + "0"}
}

// File implements index.Store.
func (ix *Index) File(ctx context.Context, path string) (index.File, error) {
	f, err := scanFile(ix.pool.QueryRow(ctx, `SELECT `+fileCols+` FROM files WHERE path = $1`, path))
	if err == pgx.ErrNoRows {
		return f, semfs.PathErr("meta", path, semfs.ErrNotExist, "")
	}
	if err != nil {
		return f, ix.storeErr("meta", path, err)
	}
	return f, nil
}

// Files implements index.Store.
func (ix *Index) Files(ctx context.Context, paths []string) (map[string]index.File, error) {
	out := make(map[string]index.File, len(paths))
	if len(paths) == 0 {
		return out, nil
	}
	rows, err := ix.pool.Query(ctx, `SELECT `+fileCols+` FROM files WHERE path = ANY($1)`, paths)
	if err != nil {
		return nil, ix.storeErr("meta", "/", err)
	}
	files, err := pgx.CollectRows(rows, scanFileRow)
	if err != nil {
		return nil, ix.storeErr("meta", "/", err)
	}
	for _, f := range files {
		out[f.Path] = f
	}
	return out, nil
}

// WalkFiles implements index.Store, reading in pages so fn may write.
func (ix *Index) WalkFiles(ctx context.Context, root string, fn func(index.File) error) error {
	cond, args := below("path", root, 2)
	after := ""
	for {
		rows, err := ix.pool.Query(ctx, `SELECT `+fileCols+` FROM files WHERE path > $1 AND `+cond+` ORDER BY path LIMIT 1000`,
			append([]any{after}, args...)...)
		if err != nil {
			return ix.storeErr("walk", root, err)
		}
		page, err := pgx.CollectRows(rows, scanFileRow)
		if err != nil {
			return ix.storeErr("walk", root, err)
		}
		for _, f := range page {
			if err := fn(f); err != nil {
				return err
			}
		}
		if len(page) < 1000 {
			return nil
		}
		after = page[len(page)-1].Path
	}
}

// PendingFiles implements index.Store.
func (ix *Index) PendingFiles(ctx context.Context, limit int) ([]string, error) {
	rows, err := ix.pool.Query(ctx, `SELECT path FROM files WHERE state = 'pending' ORDER BY path LIMIT $1`, limit)
	if err != nil {
		return nil, ix.storeErr("reindex", "/", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, ix.storeErr("reindex", "/", err)
	}
	return out, nil
}

// likeEscape escapes LIKE wildcards in s.
func likeEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// TagKeywordCandidates implements index.Store: words of three or more
// characters through the pg_trgm index on the tag text, shorter ones by a
// scan of the in-memory tag table; every candidate is verified.
func (ix *Index) TagKeywordCandidates(ctx context.Context, word string) ([]string, error) {
	word = strings.ToLower(word)
	if word == "" || strings.ContainsAny(word, "\x00\x1f") || !utf8.ValidString(word) {
		return nil, nil
	}
	if utf8.RuneCountInString(word) < 3 {
		ix.refresh(ctx)
		ix.tmu.RLock()
		defer ix.tmu.RUnlock()
		var out []string
		for p, hay := range ix.tags {
			if strings.Contains(hay, word) {
				out = append(out, p)
			}
		}
		return out, nil
	}
	rows, err := ix.pool.Query(ctx, `SELECT path FROM files WHERE tag_hay LIKE $1`, "%"+likeEscape(word)+"%")
	if err != nil {
		return nil, ix.storeErr("query", "/", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, ix.storeErr("query", "/", err)
	}
	return out, nil
}

// tsToken keeps the letters, digits and underscores of a query token, so no
// tsquery syntax reaches the parser.
func tsToken(t string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
			return unicode.ToLower(r)
		}
		return -1
	}, t)
}

// SearchChunks implements index.Store with tsvector + GIN: chunks holding
// every token first, chunks holding any token only when fewer than
// index.AllTokensEnough(limit) of those pass f.
func (ix *Index) SearchChunks(ctx context.Context, tokens []string, f index.Filter, limit int) ([]index.ChunkHit, error) {
	var terms []string
	for _, t := range tokens {
		if s := tsToken(t); s != "" && !slices.Contains(terms, s) {
			terms = append(terms, s)
		}
	}
	if len(terms) == 0 || limit <= 0 {
		return nil, nil
	}
	if len(terms) > 1 && !f.AnyToken {
		hits, err := ix.searchChunks(ctx, terms, " && ", f, limit)
		if err != nil || len(hits) >= index.AllTokensEnough(limit) {
			return hits, err
		}
	}
	return ix.searchChunks(ctx, terms, " || ", f, limit)
}

// rankNorm is ts_rank's normalization: divide by 1 + log(chunk length), so
// that of two chunks holding a word as often, the shorter ranks first (the
// length normalisation BM25 does in the SQLite store).
const rankNorm = 1

// The candidates: of the chunks matching the query (and the filter), only
// the Options.RankCandidates shortest are ranked. The GIN index finds the
// matches and the heap gives each one's length (the generated column len)
// without reading its tsvector, which is stored out of line; only the
// candidates' tsvectors are read and ranked. Ranking every match cost time
// linear in the number of matches: seconds for common words at 1M files.
// Short chunks are the ones length normalisation favours, so the bound
// mostly drops chunks that would not reach the top (docs/bench/scale.md
// measures the share of the exact top results it keeps).

// searchChunks ranks the chunks matching the terms joined by op (" && ":
// every term, " || ": any term). A term matches its English stem or its
// exact form: chunk bodies are analysed as 'english', paths as 'simple'.
func (ix *Index) searchChunks(ctx context.Context, terms []string, op string, f index.Filter, limit int) ([]index.ChunkHit, error) {
	var args []any
	var tq []string
	for _, t := range terms {
		args = append(args, t)
		n := strconv.Itoa(len(args))
		tq = append(tq, `(to_tsquery('english', $`+n+`) || to_tsquery('simple', $`+n+`))`)
	}
	// Pick the candidates reading no tsvector, rank them reading no chunk
	// text, then fetch the text of the top rows only.
	sql := `WITH q AS (SELECT ` + strings.Join(tq, op) + ` AS q),
		cand AS (SELECT c.id FROM chunks c CROSS JOIN q`
	var where []string
	if !f.Empty() {
		sql += ` JOIN files f ON f.path = c.path`
		if f.Task != "" {
			args = append(args, f.Task)
			where = append(where, `f.task = $`+strconv.Itoa(len(args)))
		}
		if f.CreatedBy != "" {
			args = append(args, f.CreatedBy)
			where = append(where, `f.created_by = $`+strconv.Itoa(len(args)))
		}
		if f.PathPrefix != "" && f.PathPrefix != "/" {
			c, a := below("c.path", f.PathPrefix, len(args)+1)
			where = append(where, c)
			args = append(args, a...)
		}
		if f.Type != "" {
			args = append(args, strings.ToLower(f.Type))
			where = append(where, `f.ext = $`+strconv.Itoa(len(args)))
		}
		for k, v := range f.Tags {
			args = append(args, k, v)
			where = append(where, fmt.Sprintf(`f.extra ->> $%d = $%d`, len(args)-1, len(args)))
		}
	}
	sql += ` WHERE c.tsv @@ q.q`
	for _, w := range where {
		sql += ` AND ` + w
	}
	if ix.rankCandidates > 0 {
		args = append(args, ix.rankCandidates)
		sql += ` ORDER BY c.len, c.id LIMIT $` + strconv.Itoa(len(args))
	}
	args = append(args, limit)
	sql += `),
		top AS (SELECT c.id, c.key, ts_rank(c.tsv, q.q, ` + strconv.Itoa(rankNorm) + `) AS r
		FROM cand JOIN chunks c ON c.id = cand.id CROSS JOIN q ORDER BY r DESC, c.key LIMIT $` + strconv.Itoa(len(args)) + `)
		SELECT c.path, c.no, c.start_line, c.end_line, c.text, top.r
		FROM top JOIN chunks c ON c.id = top.id ORDER BY top.r DESC, top.key`
	rows, err := ix.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, ix.storeErr("search", "/", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (index.ChunkHit, error) {
		var h index.ChunkHit
		var rank float32
		err := r.Scan(&h.Path, &h.No, &h.StartLine, &h.EndLine, &h.Text, &rank)
		h.Score = float64(rank)
		return h, err
	})
	if err != nil {
		return nil, ix.storeErr("search", "/", err)
	}
	return out, nil
}

// Chunk implements index.Store.
func (ix *Index) Chunk(ctx context.Context, key string) (index.ChunkHit, error) {
	var h index.ChunkHit
	err := ix.pool.QueryRow(ctx, `SELECT path, no, start_line, end_line, text FROM chunks WHERE key = $1`, key).
		Scan(&h.Path, &h.No, &h.StartLine, &h.EndLine, &h.Text)
	if err == pgx.ErrNoRows {
		return h, semfs.PathErr("search", "/", semfs.ErrNotExist, "no chunk "+key)
	}
	if err != nil {
		return h, ix.storeErr("search", "/", err)
	}
	return h, nil
}

// Nearest implements index.Store from the in-process vector index, once
// it shows every committed write (fresh.go).
func (ix *Index) Nearest(ctx context.Context, space string, q []float32, k int, min float32) ([]index.VecHit, error) {
	v, ok := ix.vecs[space]
	if !ok {
		return nil, errSpace(space)
	}
	ix.refresh(ctx)
	return v.Nearest(q, k, min), nil
}

// Vector implements index.Store from memory, once it shows every
// committed write (fresh.go).
func (ix *Index) Vector(ctx context.Context, space, key string) ([]float32, bool) {
	v, ok := ix.vecs[space]
	if !ok {
		return nil, false
	}
	ix.refresh(ctx)
	return v.Get(key)
}

func errSpace(space string) error { return index.ErrUnknownSpace(space) }

// trigramSQL turns a trigram query into a condition over grep.body (which
// the pg_trgm GIN index answers), appending its arguments.
func trigramSQL(q *index.Query, args *[]any) string {
	var parts []string
	for _, t := range q.Trigrams {
		*args = append(*args, "%"+likeEscape(t)+"%")
		parts = append(parts, "g.body LIKE $"+strconv.Itoa(len(*args)))
	}
	for _, s := range q.Sub {
		switch s.Op {
		case index.QAll:
			if q.Op == index.QOr {
				return "true"
			}
			continue
		case index.QNone:
			if q.Op == index.QAnd {
				return "false"
			}
			continue
		}
		parts = append(parts, "("+trigramSQL(s, args)+")")
	}
	if len(parts) == 0 {
		if q.Op == index.QOr {
			return "false"
		}
		return "true"
	}
	sep := " AND "
	if q.Op == index.QOr {
		sep = " OR "
	}
	return strings.Join(parts, sep)
}

// GrepCandidates implements index.Store.
func (ix *Index) GrepCandidates(ctx context.Context, root string, q *index.Query) ([]string, int, error) {
	cond, args := below("path", root, 1)
	var pending int
	if err := ix.pool.QueryRow(ctx, `SELECT count(*) FROM files WHERE state = 'pending' AND `+cond, args...).Scan(&pending); err != nil {
		return nil, 0, ix.storeErr("grep", root, err)
	}
	var sql string
	qargs := append([]any{}, args...)
	switch {
	case q == nil || q.Op == index.QAll:
		sql = `SELECT path FROM files WHERE ` + cond
	case q.Op == index.QNone:
		sql = `SELECT path FROM files WHERE (NOT grep_ok OR state = 'pending') AND ` + cond
	default:
		fcond, _ := below("f.path", root, 1)
		tcond := trigramSQL(q, &qargs)
		sql = `SELECT f.path FROM grep g JOIN files f ON f.id = g.file_id WHERE ` + fcond + ` AND (` + tcond + `)
			UNION SELECT path FROM files WHERE (NOT grep_ok OR state = 'pending') AND ` + cond
	}
	rows, err := ix.pool.Query(ctx, sql+` ORDER BY 1`, qargs...)
	if err != nil {
		return nil, 0, ix.storeErr("grep", root, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, 0, ix.storeErr("grep", root, err)
	}
	return out, pending, nil
}

// Check implements index.Store.
func (ix *Index) Check(ctx context.Context, repair bool) (index.CheckReport, error) {
	var r index.CheckReport
	var err error
	r.Problems, err = ix.derivedProblems(ctx)
	if err != nil {
		return r, ix.storeErr("check", "/", err)
	}
	if len(r.Problems) > 0 && repair {
		if err := ix.rebuildDerived(ctx); err != nil {
			return r, err
		}
		r.Repaired = true
	}
	for _, c := range []struct {
		q   string
		dst *int
	}{
		{`SELECT count(*) FROM files`, &r.Files},
		{`SELECT count(*) FROM chunks`, &r.Chunks},
		{`SELECT count(*) FROM files WHERE state = 'pending'`, &r.Pending},
		{`SELECT count(*) FROM files WHERE state = 'skipped'`, &r.Skipped},
		{`SELECT count(*) FROM files WHERE tag_vec IS NOT NULL`, &r.TagVectors},
		{`SELECT count(*) FROM chunks WHERE vec IS NOT NULL`, &r.ChunkVectors},
	} {
		if err := ix.pool.QueryRow(ctx, c.q).Scan(c.dst); err != nil {
			return r, ix.storeErr("check", "/", err)
		}
	}
	return r, nil
}

// MarkAllPending implements index.Store.
func (ix *Index) MarkAllPending(ctx context.Context) error { return ix.rebuildDerived(ctx) }

// Similarities implements index.Store from the in-process vector index,
// once it shows every committed write (fresh.go).
func (ix *Index) Similarities(ctx context.Context, space string, q []float32, keys []string) []float32 {
	v, ok := ix.vecs[space]
	if !ok {
		return make([]float32, len(keys))
	}
	ix.refresh(ctx)
	return v.Similarities(q, keys)
}
