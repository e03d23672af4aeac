package sqlite

import (
	"context"
	"database/sql"
	"log/slog"

	"github.com/semfs/semfs/index/postings"
)

// startMerge runs the postings merge policy on a goroutine unless one is
// running. A merge builds and encodes its segment without the write lock
// (writers go on meanwhile) and takes it only to swap the segments in one
// transaction, carrying over tombstones placed while it built.
func (ix *Index) startMerge() {
	ix.mergeMu.Lock()
	defer ix.mergeMu.Unlock()
	if ix.mergeBusy || ix.closed {
		return
	}
	ix.mergeBusy = true
	ix.merging.Add(1)
	go func() {
		defer ix.merging.Done()
		for {
			ix.mergeMu.Lock()
			stop := ix.closed
			ix.mergeMu.Unlock()
			if stop || !ix.mergeOnce(context.Background()) {
				break
			}
		}
		ix.mergeMu.Lock()
		ix.mergeBusy = false
		ix.mergeMu.Unlock()
	}()
}

// waitMerges waits until no merge runs.
func (ix *Index) waitMerges() { ix.merging.Wait() }

// mergeOnce carries out one planned merge and reports whether it did.
func (ix *Index) mergeOnce(ctx context.Context) bool {
	for _, k := range []struct {
		x    *postings.Index
		kind int
	}{{ix.text, kindText}, {ix.grep, kindGrep}} {
		m := k.x.PlanMerge()
		if m == nil {
			continue
		}
		m.Build()
		m.Seg = m.Seg.Compact() // as loaded: lists decoded on demand
		data := m.Seg.Encode()
		err := ix.writeMerge(ctx, func(tx *sql.Tx) ([]memOp, error) {
			dead, ok := k.x.Dead(m)
			if !ok {
				return nil, nil // the index was rebuilt meanwhile
			}
			for _, old := range m.Old {
				if _, err := ix.txExec(ctx, tx, `DELETE FROM postings WHERE id = ?`, old); err != nil {
					return nil, err
				}
				if _, err := ix.txExec(ctx, tx, `DELETE FROM postings_dead WHERE seg = ?`, old); err != nil {
					return nil, err
				}
			}
			id, err := ix.insertSegment(ctx, tx, k.kind, data)
			if err != nil {
				return nil, err
			}
			tombs := make([][2]int64, len(dead))
			for i, l := range dead {
				tombs[i] = [2]int64{id, int64(l)}
			}
			if err := insertTombs(ctx, ix, tx, tombs); err != nil {
				return nil, err
			}
			return []memOp{func() { k.x.Replace(m, id, dead) }}, nil
		})
		if err != nil {
			slog.Error("index: postings merge", "err", err)
			return false
		}
		return true
	}
	return false
}
