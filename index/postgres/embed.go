package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
)

var _ embedding.BatchStore = (*Index)(nil)

func spaceOf(name string) (index.Columns, error) { return index.SpaceColumns(name) }

// NeedingEmbedding implements embedding.Store.
func (ix *Index) NeedingEmbedding(ctx context.Context, space, after string, limit int) ([]embedding.Pending, error) {
	s, err := spaceOf(space)
	if err != nil {
		return nil, err
	}
	rows, err := ix.pool.Query(ctx, `SELECT `+s.Key+`, `+s.Text+` FROM `+s.Table+` WHERE NOT `+s.Fresh+` AND `+s.Key+` > $1 ORDER BY `+s.Key+` LIMIT $2`, after, limit)
	if err != nil {
		return nil, ix.storeErr("embed", "/", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (embedding.Pending, error) {
		var p embedding.Pending
		err := r.Scan(&p.Key, &p.Text)
		return p, err
	})
	if err != nil {
		return nil, ix.storeErr("embed", "/", err)
	}
	return out, nil
}

// CountNeedingEmbedding implements embedding.Store.
func (ix *Index) CountNeedingEmbedding(ctx context.Context, space string) (int, error) {
	s, err := spaceOf(space)
	if err != nil {
		return 0, err
	}
	var n int
	if err := ix.pool.QueryRow(ctx, `SELECT count(*) FROM `+s.Table+` WHERE NOT `+s.Fresh).Scan(&n); err != nil {
		return 0, ix.storeErr("embed", "/", err)
	}
	return n, nil
}

// SetEmbedding implements embedding.Store; the vector is ignored when the
// row's text changed since it was read.
func (ix *Index) SetEmbedding(ctx context.Context, space, key, text string, vec []float32) error {
	s, err := spaceOf(space)
	if err != nil {
		return err
	}
	return ix.write(ctx, "embed", "/", func(tx pgx.Tx) (*change, error) {
		tag, err := tx.Exec(ctx, `UPDATE `+s.Table+` SET `+s.Vec+` = $1, `+s.Fresh+` = true WHERE `+s.Key+` = $2 AND `+s.Text+` = $3`, vec, key, text)
		if err != nil {
			return nil, err
		}
		if tag.RowsAffected() == 0 {
			return nil, nil
		}
		return &change{Space: space, Keys: []string{key}}, nil
	})
}

// SetEmbeddings implements embedding.BatchStore: the rows' vectors in one
// transaction and one round trip (a pipelined batch), each ignored when its
// row's text changed since it was read.
func (ix *Index) SetEmbeddings(ctx context.Context, space string, rows []embedding.Pending, vecs [][]float32) error {
	s, err := spaceOf(space)
	if err != nil {
		return err
	}
	if len(rows) != len(vecs) {
		return semfs.PathErr("embed", "/", semfs.ErrInvalid, fmt.Sprintf("%d rows but %d vectors", len(rows), len(vecs)))
	}
	if len(rows) == 0 {
		return nil
	}
	// The rows are updated in key order, as every writer locks them (see
	// pathLocks), whatever order they come in.
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return strings.Compare(rows[i].Key, rows[j].Key) })
	return ix.write(ctx, "embed", "/", func(tx pgx.Tx) (*change, error) {
		b := &pgx.Batch{}
		for _, i := range order {
			b.Queue(`UPDATE `+s.Table+` SET `+s.Vec+` = $1, `+s.Fresh+` = true WHERE `+s.Key+` = $2 AND `+s.Text+` = $3`, vecs[i], rows[i].Key, rows[i].Text)
		}
		res := tx.SendBatch(ctx, b)
		ch := &change{Space: space}
		for _, i := range order {
			tag, err := res.Exec()
			if err != nil {
				res.Close()
				return nil, err
			}
			if tag.RowsAffected() > 0 {
				ch.Keys = append(ch.Keys, rows[i].Key)
			}
		}
		if err := res.Close(); err != nil {
			return nil, err
		}
		if len(ch.Keys) == 0 {
			return nil, nil
		}
		return ch, nil
	})
}

// WipeVectors implements embedding.Store. It updates every row of the
// space's table holding the table's EXCLUSIVE lock, which waits for every
// writer of its rows and lets none start, rather than locking the rows one
// by one in the order of the table's scan, in which another writer, which
// locks them in path or key order (see pathLocks), may hold one the wipe
// waits for while waiting for one the wipe holds. The lock is taken in a
// round trip of its own: the UPDATE, prepared in the same batch, would
// hold the table's ROW EXCLUSIVE lock while waiting for the EXCLUSIVE one,
// as another daemon's wipe could.
func (ix *Index) WipeVectors(ctx context.Context, space string) error {
	s, err := spaceOf(space)
	if err != nil {
		return err
	}
	return ix.write(ctx, "embed", "/", func(tx pgx.Tx) (*change, error) {
		if _, err := tx.Exec(ctx, `LOCK TABLE `+s.Table+` IN EXCLUSIVE MODE`); err != nil {
			return nil, err
		}
		if _, err := tx.Exec(ctx, `UPDATE `+s.Table+` SET `+s.Vec+` = NULL, `+s.Fresh+` = false`); err != nil {
			return nil, err
		}
		return &change{Reload: true}, nil
	})
}

// Vectors implements embedding.Store.
func (ix *Index) Vectors(ctx context.Context, space string, fn func(key string, vec []float32) error) error {
	s, err := spaceOf(space)
	if err != nil {
		return err
	}
	after := ""
	for {
		rows, err := ix.pool.Query(ctx, `SELECT `+s.Key+`, `+s.Vec+` FROM `+s.Table+` WHERE `+s.Vec+` IS NOT NULL AND `+s.Key+` > $1 ORDER BY `+s.Key+` LIMIT 1000`, after)
		if err != nil {
			return ix.storeErr("embed", "/", err)
		}
		type kv struct {
			k string
			v []float32
		}
		page, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (kv, error) {
			var x kv
			err := r.Scan(&x.k, &x.v)
			return x, err
		})
		if err != nil {
			return ix.storeErr("embed", "/", err)
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
