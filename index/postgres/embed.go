package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
)

var _ embedding.BatchStore = (*Index)(nil)

// spaceSQL names the table and columns holding a space's rows.
type spaceSQL struct{ table, key, text, vec, fresh string }

func spaceOf(name string) (spaceSQL, error) {
	switch name {
	case embedding.SpaceTags:
		return spaceSQL{"files", "path", "tag_text", "tag_vec", "tag_fresh"}, nil
	case embedding.SpaceContent:
		return spaceSQL{"chunks", "key", "text", "vec", "fresh"}, nil
	}
	return spaceSQL{}, errSpace(name)
}

// NeedingEmbedding implements embedding.Store.
func (ix *Index) NeedingEmbedding(ctx context.Context, space, after string, limit int) ([]embedding.Pending, error) {
	s, err := spaceOf(space)
	if err != nil {
		return nil, err
	}
	rows, err := ix.pool.Query(ctx, `SELECT `+s.key+`, `+s.text+` FROM `+s.table+` WHERE NOT `+s.fresh+` AND `+s.key+` > $1 ORDER BY `+s.key+` LIMIT $2`, after, limit)
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
	if err := ix.pool.QueryRow(ctx, `SELECT count(*) FROM `+s.table+` WHERE NOT `+s.fresh).Scan(&n); err != nil {
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
		tag, err := tx.Exec(ctx, `UPDATE `+s.table+` SET `+s.vec+` = $1, `+s.fresh+` = true WHERE `+s.key+` = $2 AND `+s.text+` = $3`, vec, key, text)
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
	return ix.write(ctx, "embed", "/", func(tx pgx.Tx) (*change, error) {
		b := &pgx.Batch{}
		for i, r := range rows {
			b.Queue(`UPDATE `+s.table+` SET `+s.vec+` = $1, `+s.fresh+` = true WHERE `+s.key+` = $2 AND `+s.text+` = $3`, vecs[i], r.Key, r.Text)
		}
		res := tx.SendBatch(ctx, b)
		ch := &change{Space: space}
		for _, r := range rows {
			tag, err := res.Exec()
			if err != nil {
				res.Close()
				return nil, err
			}
			if tag.RowsAffected() > 0 {
				ch.Keys = append(ch.Keys, r.Key)
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

// WipeVectors implements embedding.Store.
func (ix *Index) WipeVectors(ctx context.Context, space string) error {
	s, err := spaceOf(space)
	if err != nil {
		return err
	}
	return ix.write(ctx, "embed", "/", func(tx pgx.Tx) (*change, error) {
		if _, err := tx.Exec(ctx, `UPDATE `+s.table+` SET `+s.vec+` = NULL, `+s.fresh+` = false`); err != nil {
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
		rows, err := ix.pool.Query(ctx, `SELECT `+s.key+`, `+s.vec+` FROM `+s.table+` WHERE `+s.vec+` IS NOT NULL AND `+s.key+` > $1 ORDER BY `+s.key+` LIMIT 1000`, after)
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
