package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/postings"
)

// GrepCandidates implements index.Store: the files whose trigram postings
// satisfy q (evaluated in memory, index/postings), plus the files without
// trigram data or pending re-indexing, at or below root.
func (ix *Index) GrepCandidates(ctx context.Context, root string, q *index.Query) ([]string, int, error) {
	var out []string
	var pending int
	err := ix.freshView(ctx, func(tx *sql.Tx, _, grep *postings.Index) error {
		var err error
		out, pending, err = ix.grepCandidates(ctx, tx, grep, root, q)
		return err
	})
	if err != nil {
		return nil, 0, storeErr("grep", root, err)
	}
	return out, pending, nil
}

// grepCandidates is GrepCandidates in tx, a freshView with postings grep.
func (ix *Index) grepCandidates(ctx context.Context, tx *sql.Tx, grep *postings.Index, root string, q *index.Query) ([]string, int, error) {
	cond, args := below("path", root)
	var pending int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM files WHERE state = 'pending' AND `+cond, args...).Scan(&pending); err != nil {
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
		ids, err := json.Marshal(grep.Grep(q))
		if err != nil {
			return nil, 0, storeErr("grep", root, err)
		}
		sqlq = `SELECT path FROM files WHERE id IN (SELECT value FROM json_each(?)) AND ` + cond +
			` UNION SELECT path FROM files WHERE (grep_ok = 0 OR state = 'pending') AND ` + cond
		qargs = append(append([]any{string(ids)}, args...), args...)
	}
	rows, err := tx.QueryContext(ctx, sqlq+` ORDER BY 1`, qargs...)
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
