package sqlite

import (
	"context"
	"strings"

	"github.com/semfs/semfs/index"
)

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
		qargs = append(append([]any{grepMatch(q)}, fargs...), args...)
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

// grepTokens is the grep_fts text of a file: one token per distinct
// trigram of index.GrepTrigrams, written by trigramToken.
func grepTokens(text string) string {
	var b strings.Builder
	var tok [5]byte
	index.GrepTrigrams(text, func(t uint32) {
		b.Write(trigramToken(&tok, t))
		b.WriteByte(' ')
	})
	return b.String()
}

// trigramToken writes a packed trigram (21 bits) as five base-32 digits,
// a word the FTS5 ascii tokenizer keeps whole.
func trigramToken(buf *[5]byte, t uint32) []byte {
	const digits = "0123456789abcdefghijklmnopqrstuv"
	for i := 4; i >= 0; i-- {
		buf[i] = digits[t&31]
		t >>= 5
	}
	return buf[:]
}

// grepMatch renders a trigram query (QAnd or QOr) as an FTS5 MATCH
// expression over grep_fts tokens.
func grepMatch(q *index.Query) string {
	sep := " AND "
	if q.Op == index.QOr {
		sep = " OR "
	}
	var parts []string
	var tok [5]byte
	for _, t := range q.Trigrams {
		parts = append(parts, string(trigramToken(&tok, index.PackTrigram(t))))
	}
	for _, s := range q.Sub {
		if s.Op == index.QAnd || s.Op == index.QOr {
			parts = append(parts, "("+grepMatch(s)+")")
		}
	}
	return strings.Join(parts, sep)
}
