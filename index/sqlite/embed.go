package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"sync"

	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
)

func space(name string) (index.Columns, error) { return index.SpaceColumns(name) }

// byKey is the condition selecting the row of one key in space s: chunks
// are found through their index on (fresh, key), by both values of fresh
// (see derived.sql).
func byKey(s index.Columns) string {
	if s.Table == "chunks" {
		return s.Fresh + ` IN (0, 1) AND ` + s.Key + ` = ?`
	}
	return s.Key + ` = ?`
}

// withVec is the condition selecting the rows of space s that hold a
// vector, ahead of a range of keys: a chunk with a vector is fresh (a
// CHECK of derived.sql), so its keys are a range of the chunks' index.
func withVec(s index.Columns) string {
	if s.Table == "chunks" {
		return s.Fresh + ` = 1 AND ` + s.Vec + ` IS NOT NULL`
	}
	return s.Vec + ` IS NOT NULL`
}

// needingSQL pages through the rows of space s needing a vector, by key
// (arguments: after, limit).
func needingSQL(s index.Columns) string {
	return `SELECT ` + s.Key + `, ` + s.Text + ` FROM ` + s.Table + ` WHERE ` + s.Fresh + ` = 0 AND ` + s.Key + ` > ? ORDER BY ` + s.Key + ` LIMIT ?`
}

// countNeedingSQL counts the rows of space s needing a vector.
func countNeedingSQL(s index.Columns) string {
	return `SELECT count(*) FROM ` + s.Table + ` WHERE ` + s.Fresh + ` = 0`
}

// vectorsSQL pages through the vectors of space s, by key (argument:
// after), 1000 at a time.
func vectorsSQL(s index.Columns) string {
	return `SELECT ` + s.Key + `, ` + s.Vec + ` FROM ` + s.Table + ` WHERE ` + withVec(s) + ` AND ` + s.Key + ` > ? ORDER BY ` + s.Key + ` LIMIT 1000`
}

// NeedingEmbedding implements embedding.Store.
func (ix *Index) NeedingEmbedding(ctx context.Context, spaceName, after string, limit int) ([]embedding.Pending, error) {
	s, err := space(spaceName)
	if err != nil {
		return nil, err
	}
	rows, err := ix.db.QueryContext(ctx, needingSQL(s), after, limit)
	if err != nil {
		return nil, storeErr("embed", "/", err)
	}
	defer rows.Close()
	var out []embedding.Pending
	for rows.Next() {
		var p embedding.Pending
		if err := rows.Scan(&p.Key, &p.Text); err != nil {
			return nil, storeErr("embed", "/", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// CountNeedingEmbedding implements embedding.Store.
func (ix *Index) CountNeedingEmbedding(ctx context.Context, spaceName string) (int, error) {
	s, err := space(spaceName)
	if err != nil {
		return 0, err
	}
	var n int
	if err := ix.db.QueryRowContext(ctx, countNeedingSQL(s)).Scan(&n); err != nil {
		return 0, storeErr("embed", "/", err)
	}
	return n, nil
}

// SetEmbedding implements embedding.Store. The vector is ignored when the
// row's text has changed since it was read (or the row is gone).
func (ix *Index) SetEmbedding(ctx context.Context, spaceName, key, text string, vec []float32) error {
	s, err := space(spaceName)
	if err != nil {
		return err
	}
	cp := append([]float32(nil), vec...)
	return ix.writeDerived(ctx, "embed", "/", func(tx *sql.Tx) ([]memOp, error) {
		res, err := tx.ExecContext(ctx, `UPDATE `+s.Table+` SET `+s.Vec+` = ?, `+s.Fresh+` = 1 WHERE `+byKey(s)+` AND `+s.Text+` = ?`,
			encodeVec(cp), key, text)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil, nil
		}
		return ix.withLoggedPaths(ctx, tx, []string{keyPath(spaceName, key)}, []memOp{func() { ix.vecs[spaceName].Set(key, cp) }})
	})
}

// withLoggedPaths logs paths, the paths of the vectors a transaction set,
// and appends the memOp of those entries (see ownLogSpan) to ops.
func (ix *Index) withLoggedPaths(ctx context.Context, tx *sql.Tx, paths []string, ops []memOp) ([]memOp, error) {
	start, end, err := logPaths(ctx, tx, paths)
	if err != nil {
		return nil, err
	}
	own, err := ix.ownLogSpan(ctx, tx, start, end)
	if err != nil {
		return nil, err
	}
	return append(ops, own), nil
}

// SetEmbeddings stores several vectors of one space in one transaction (the
// bulk form of SetEmbedding, used by imports).
func (ix *Index) SetEmbeddings(ctx context.Context, spaceName string, rows []embedding.Pending, vecs [][]float32) error {
	s, err := space(spaceName)
	if err != nil {
		return err
	}
	return ix.writeDerived(ctx, "embed", "/", func(tx *sql.Tx) ([]memOp, error) {
		stmt, err := tx.PrepareContext(ctx, `UPDATE `+s.Table+` SET `+s.Vec+` = ?, `+s.Fresh+` = 1 WHERE `+byKey(s)+` AND `+s.Text+` = ?`)
		if err != nil {
			return nil, err
		}
		defer stmt.Close()
		var ops []memOp
		var paths []string
		logged := map[string]bool{}
		for i, r := range rows {
			cp := append([]float32(nil), vecs[i]...)
			res, err := stmt.ExecContext(ctx, encodeVec(cp), r.Key, r.Text)
			if err != nil {
				return nil, err
			}
			if n, _ := res.RowsAffected(); n > 0 {
				key := r.Key
				ops = append(ops, func() { ix.vecs[spaceName].Set(key, cp) })
				if p := keyPath(spaceName, key); !logged[p] {
					logged[p] = true
					paths = append(paths, p)
				}
			}
		}
		if len(ops) == 0 {
			return nil, nil
		}
		return ix.withLoggedPaths(ctx, tx, paths, ops)
	})
}

// WipeVectors implements embedding.Store.
func (ix *Index) WipeVectors(ctx context.Context, spaceName string) error {
	s, err := space(spaceName)
	if err != nil {
		return err
	}
	return ix.write(ctx, "embed", "/", func(tx *sql.Tx) ([]memOp, error) {
		if _, err := tx.ExecContext(ctx, `UPDATE `+s.Table+` SET `+s.Vec+` = NULL, `+s.Fresh+` = 0`); err != nil {
			return nil, err
		}
		// Other processes reload everything.
		if _, err := tx.ExecContext(ctx, logReset); err != nil {
			return nil, err
		}
		ops := []memOp{ix.vecs[spaceName].Reset}
		own, err := ix.ownLog(ctx, tx, ix.st.log)
		if err != nil || own == nil {
			return ops, err
		}
		return append(ops, own), nil
	})
}

// Vectors implements embedding.Store.
func (ix *Index) Vectors(ctx context.Context, spaceName string, fn func(key string, vec []float32) error) error {
	s, err := space(spaceName)
	if err != nil {
		return err
	}
	after := ""
	for {
		rows, err := ix.db.QueryContext(ctx, vectorsSQL(s), after)
		if err != nil {
			return storeErr("embed", "/", err)
		}
		type kv struct {
			k string
			v []float32
		}
		var page []kv
		for rows.Next() {
			var k string
			var b []byte
			if err := rows.Scan(&k, &b); err != nil {
				rows.Close()
				return storeErr("embed", "/", err)
			}
			page = append(page, kv{k, decodeVec(b)})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return storeErr("embed", "/", err)
		}
		for _, p := range page {
			if err := fn(p.k, p.v); err != nil {
				return err
			}
		}
		if len(page) < 1000 {
			return nil
		}
		after = page[len(page)-1].k
	}
}

// Similarities implements index.Store from memory, as the tag query's
// TagTiers call just before brought it up to date with other processes'
// writes (a tag query calls Similarities once per tier: the check, one
// SELECT, is done once per query, and tiers and similarities are of one
// state). Many keys (a tag query's tier of files sharing a short word)
// are split over the cores.
func (ix *Index) Similarities(_ context.Context, spaceName string, q []float32, keys []string) []float32 {
	v, ok := ix.vecs[spaceName]
	if !ok {
		return make([]float32, len(keys))
	}
	parts := min(runtime.GOMAXPROCS(0), len(keys)/parallelSimilarities)
	if parts < 2 {
		return v.Similarities(q, keys)
	}
	out := make([]float32, len(keys))
	var wg sync.WaitGroup
	for i := range parts {
		lo, hi := len(keys)*i/parts, len(keys)*(i+1)/parts
		wg.Go(func() { copy(out[lo:hi], v.Similarities(q, keys[lo:hi])) })
	}
	wg.Wait()
	return out
}

// parallelSimilarities is how many keys each core must get before
// Similarities splits the work (a 512-dimension dot product is ~0.3 µs,
// a goroutine a few µs).
const parallelSimilarities = 4096

// Vector implements index.Store (from memory, brought up to date with
// other processes' writes first).
func (ix *Index) Vector(ctx context.Context, spaceName, key string) ([]float32, bool) {
	v, ok := ix.vecs[spaceName]
	if !ok {
		return nil, false
	}
	ix.refreshQuiet(ctx)
	return v.Get(key)
}

// Check implements index.Store.
func (ix *Index) Check(ctx context.Context, repair bool) (index.CheckReport, error) {
	var r index.CheckReport
	var err error
	r.Problems, err = ix.derivedProblems(ctx)
	if err != nil {
		return r, storeErr("check", ix.path, err)
	}
	if len(r.Problems) == 0 {
		// The stored segments must decode and agree with the rows and with
		// the postings in memory.
		ix.wmu.Lock()
		l, err := ix.readPostingsTx(ctx, true)
		problems := l.problems
		if err == nil && len(problems) == 0 && l.gen == ix.gen { // else memory reloads at the next use
			if a, b := l.text.Live(), ix.text.Live(); a != b {
				problems = append(problems, fmt.Sprintf("full-text postings: %d stored documents, %d in memory", a, b))
			}
			if a, b := l.grep.Live(), ix.grep.Live(); a != b {
				problems = append(problems, fmt.Sprintf("trigram postings: %d stored documents, %d in memory", a, b))
			}
		}
		ix.wmu.Unlock()
		if err != nil {
			return r, storeErr("check", ix.path, err)
		}
		r.Problems = append(r.Problems, problems...)
	}
	var ic string
	if err := ix.db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&ic); err != nil {
		r.Problems = append(r.Problems, "quick_check: "+err.Error())
	} else if ic != "ok" {
		r.Problems = append(r.Problems, "quick_check: "+ic)
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
		if err := ix.db.QueryRowContext(ctx, c.q).Scan(c.dst); err != nil {
			return r, storeErr("check", ix.path, err)
		}
	}
	return r, nil
}

// MarkAllPending implements index.Store.
func (ix *Index) MarkAllPending(ctx context.Context) error {
	return ix.rebuildDerived(ctx)
}
