package sqlite

import (
	"context"

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
