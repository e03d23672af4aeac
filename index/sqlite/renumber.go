package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"

	"github.com/semfs/semfs/index/postings"
)

// maxDocID is the largest chunk or file id the postings can hold: a
// segment maps its documents to store ids as uint32.
const maxDocID = math.MaxUint32

// errIDsFull aborts a write transaction that would give a chunk or file
// an id above maxDocID. Chunk ids only count up (see txState) and a new
// file gets max(id)+1 (see batch.fileID; an atomic save renames a new row
// over the old one), so over an index's life either can get there; Put then
// renumbers (see renumber) and writes again.
var errIDsFull = errors.New("chunk or file id past the postings' uint32 range")

// renumber gives the chunks and the files the ids 1..n in the order of
// their current ids, in one write transaction, and rewrites every
// postings segment with the new ids under a new segment id (tombstones
// carried over), so no id exceeds maxDocID. Vectors, keyed by chunk key
// and path, stay. The transaction raises the generation like any write
// of the postings, so other processes reload them; since every segment
// id is new, none of them reuses a segment decoded under the old ids.
func (ix *Index) renumber(ctx context.Context) error {
	return ix.write(ctx, "renumber index ids", "/", func(tx *sql.Tx) ([]memOp, error) {
		chunks, err := renumberRows(ctx, tx, "chunks")
		if err != nil {
			return nil, err
		}
		files, err := renumberRows(ctx, tx, "files")
		if err != nil {
			return nil, err
		}
		if err := ix.renumberSegments(ctx, tx, chunks, files); err != nil {
			return nil, err
		}
		ix.st.chunk = int64(len(chunks))
		// Check the result as Open does, and load it.
		l, err := ix.readPostings(ctx, tx, true)
		if err != nil {
			return nil, err
		}
		if len(l.problems) > 0 {
			return nil, errors.New("renumbered postings: " + strings.Join(l.problems, "; "))
		}
		slog.Warn("index: chunk or file ids reached the postings' uint32 range; renumbered them",
			"index", ix.path, "chunks", len(chunks), "files", len(files))
		return []memOp{func() {
			ix.text.Load(l.text)
			ix.grep.Load(l.grep)
		}}, nil
	})
}

// renumberRows gives the rows of table the ids 1..n in the order of their
// ids and returns the old ids in that order (old id ids[i] is now i+1).
func renumberRows(ctx context.Context, tx *sql.Tx, table string) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM `+table+` ORDER BY id`)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(ids) > maxDocID {
		return nil, fmt.Errorf("%d %s rows: more than the postings can hold", len(ids), table)
	}
	// Negate first: a row's new id may be another row's old one.
	if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET id = -id`); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET id = r.n
		FROM (SELECT id, row_number() OVER (ORDER BY id DESC) AS n FROM `+table+`) AS r
		WHERE `+table+`.id = r.id`); err != nil {
		return nil, err
	}
	return ids, nil
}

// renumberSegments rewrites each stored segment with the new ids of its
// documents (chunks or files: old ids in ascending order, see
// renumberRows) under a new segment id. A dead document gets id 0; a
// live one whose row is gone is tombstoned.
func (ix *Index) renumberSegments(ctx context.Context, tx *sql.Tx, chunks, files []int64) error {
	type stored struct {
		id   int64
		kind int
	}
	var segs []stored
	rows, err := tx.QueryContext(ctx, `SELECT id, kind FROM postings ORDER BY id`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var s stored
		if err := rows.Scan(&s.id, &s.kind); err != nil {
			rows.Close()
			return err
		}
		segs = append(segs, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, st := range segs {
		old := chunks
		if st.kind == kindGrep {
			old = files
		}
		var data []byte
		if err := tx.QueryRowContext(ctx, `SELECT data FROM postings WHERE id = ?`, st.id).Scan(&data); err != nil {
			return err
		}
		seg, err := postings.Decode(data)
		if err != nil {
			return fmt.Errorf("postings segment %d: %w", st.id, err)
		}
		dead := map[uint32]bool{}
		drows, err := tx.QueryContext(ctx, `SELECT doc FROM postings_dead WHERE seg = ?`, st.id)
		if err != nil {
			return err
		}
		for drows.Next() {
			var d int64
			if err := drows.Scan(&d); err != nil {
				drows.Close()
				return err
			}
			dead[uint32(d)] = true
		}
		drows.Close()
		if err := drows.Err(); err != nil {
			return err
		}
		ids := make([]uint32, seg.Len())
		var tombs []uint32
		for l, id := range seg.IDs {
			if dead[uint32(l)] {
				continue
			}
			if i, ok := slices.BinarySearch(old, int64(id)); ok {
				ids[l] = uint32(i + 1)
			} else {
				tombs = append(tombs, uint32(l))
			}
		}
		seg.IDs = ids
		// A decoded segment encodes as the bytes it came from; Concat of
		// it alone builds it again, local numbers unchanged, with ids.
		data = postings.Concat([]*postings.Segment{seg}).Encode()
		ix.st.seg++
		if _, err := tx.ExecContext(ctx, `UPDATE postings SET id = ?, data = ? WHERE id = ?`, ix.st.seg, data, st.id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE postings_dead SET seg = ? WHERE seg = ?`, ix.st.seg, st.id); err != nil {
			return err
		}
		t := make([][2]int64, len(tombs))
		for i, l := range tombs {
			t[i] = [2]int64{ix.st.seg, int64(l)}
		}
		if err := insertTombs(ctx, ix, tx, t); err != nil {
			return err
		}
	}
	return nil
}
