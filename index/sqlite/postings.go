package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/postings"
)

// Postings kinds in the postings table.
const (
	kindText = 1 // chunks: documents are chunk ids
	kindGrep = 2 // files: documents are file ids
)

// openPostings loads the postings segments into memory, or rebuilds the
// derived data when they are damaged or disagree with the rows.
func (ix *Index) openPostings(ctx context.Context) error {
	ix.wmu.Lock()
	text, grep, problems, err := ix.readPostings(ctx)
	ix.wmu.Unlock()
	if err != nil {
		return storeErr("open index", ix.path, err)
	}
	if len(problems) == 0 {
		ix.text, ix.grep = text, grep
		return nil
	}
	if err := ix.rebuildDerived(ctx); err != nil {
		return err
	}
	ix.Repaired = append(ix.Repaired, problems...)
	return nil
}

// readPostings decodes every segment and its tombstones from the store
// and checks them against the rows they index: a segment that fails its
// checksum, a tombstone of no segment, or live documents that do not
// match the chunks and grep-indexed files are problems. Call it holding
// wmu.
func (ix *Index) readPostings(ctx context.Context) (text, grep *postings.Index, problems []string, err error) {
	tx, err := ix.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, nil, nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT seg, doc FROM postings_dead`)
	if err != nil {
		return nil, nil, nil, err
	}
	dead := map[int64][]uint32{}
	for rows.Next() {
		var seg, doc int64
		if err := rows.Scan(&seg, &doc); err != nil {
			rows.Close()
			return nil, nil, nil, err
		}
		dead[seg] = append(dead[seg], uint32(doc))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, nil, err
	}
	text, grep = postings.New(postings.Text), postings.New(postings.Trigram)
	rows, err = tx.QueryContext(ctx, `SELECT id, kind, data FROM postings ORDER BY id`)
	if err != nil {
		return nil, nil, nil, err
	}
	for rows.Next() {
		var id int64
		var kind int
		var data []byte
		if err := rows.Scan(&id, &kind, &data); err != nil {
			rows.Close()
			return nil, nil, nil, err
		}
		seg, err := postings.Decode(data)
		if err != nil {
			problems = append(problems, fmt.Sprintf("postings segment %d: %v", id, err))
			continue
		}
		x := text
		if kind == kindGrep {
			x = grep
		}
		if want := map[int]postings.Kind{kindText: postings.Text, kindGrep: postings.Trigram}[kind]; seg.Kind != want {
			problems = append(problems, fmt.Sprintf("postings segment %d: kind %d holds %d", id, kind, seg.Kind))
			continue
		}
		d := dead[id]
		delete(dead, id)
		for _, l := range d {
			if int(l) >= seg.Len() {
				problems = append(problems, fmt.Sprintf("postings segment %d: tombstone %d of %d documents", id, l, seg.Len()))
				d = nil
				break
			}
		}
		x.Add(id, seg, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, nil, err
	}
	for seg := range dead {
		problems = append(problems, fmt.Sprintf("tombstones of missing postings segment %d", seg))
	}
	var chunks, grepFiles int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM chunks`).Scan(&chunks); err != nil {
		return nil, nil, nil, err
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM files WHERE grep_ok = 1`).Scan(&grepFiles); err != nil {
		return nil, nil, nil, err
	}
	if n := text.Live(); n != chunks {
		problems = append(problems, fmt.Sprintf("chunks vs full-text postings: %d rows vs %d", chunks, n))
	}
	if n := grep.Live(); n != grepFiles {
		problems = append(problems, fmt.Sprintf("grep-indexed files vs trigram postings: %d rows vs %d", grepFiles, n))
	}
	return text, grep, problems, nil
}

// postingsTx collects the postings changes of one write transaction:
// documents deleted from committed segments (tombstones), and the new
// segments of a Put (built before the transaction; ids assigned in it)
// or of a Rename.
type postingsTx struct {
	text, grep   *postings.Segment // new segments of a Put (nil: none)
	textN, grepN uint32            // local numbers assigned so far
	textNew      map[uint32]uint32 // chunk id → local number in text
	grepNew      map[uint32]uint32 // file id → local number in grep
	textDead     []uint32          // locals of text deleted again in the transaction
	grepDead     []uint32          // locals of grep deleted again
	delText      []uint32          // chunk ids to tombstone in committed segments
	delGrep      []uint32          // file ids to tombstone
	tombs        [][2]int64        // postings_dead rows: segment id, local number
	renamed      *postings.Builder // chunks re-indexed under a new path (Rename)
	renamedIDs   []uint32          // their chunk ids
	textLoc      func(uint32) (int64, uint32, bool)
	grepLoc      func(uint32) (int64, uint32, bool)
}

func (ix *Index) newPostingsTx(text, grep *postings.Segment) *postingsTx {
	return &postingsTx{text: text, grep: grep, textNew: map[uint32]uint32{}, grepNew: map[uint32]uint32{},
		textLoc: ix.text.Locate, grepLoc: ix.grep.Locate}
}

// addChunk gives the next document of the new text segment its chunk id.
func (p *postingsTx) addChunk(id int64) {
	p.text.IDs[p.textN] = uint32(id)
	p.textNew[uint32(id)] = p.textN
	p.textN++
}

// addFile gives the next document of the new grep segment its file id.
func (p *postingsTx) addFile(id int64) {
	p.grep.IDs[p.grepN] = uint32(id)
	p.grepNew[uint32(id)] = p.grepN
	p.grepN++
}

// drop deletes document id: from the new segment when this transaction
// added it, else from the committed segment holding it.
func drop(id uint32, added map[uint32]uint32, newDead *[]uint32, loc func(uint32) (int64, uint32, bool), del *[]uint32, tombs *[][2]int64) {
	if l, ok := added[id]; ok {
		*newDead = append(*newDead, l)
		delete(added, id)
		return
	}
	if seg, l, ok := loc(id); ok {
		*del = append(*del, id)
		*tombs = append(*tombs, [2]int64{seg, int64(l)})
	}
}

func (p *postingsTx) dropChunk(id int64) {
	drop(uint32(id), p.textNew, &p.textDead, p.textLoc, &p.delText, &p.tombs)
}

func (p *postingsTx) dropFile(id int64) {
	drop(uint32(id), p.grepNew, &p.grepDead, p.grepLoc, &p.delGrep, &p.tombs)
}

// rename re-indexes chunk id under its new path.
func (p *postingsTx) rename(id int64, pathTerms []string, text string) {
	if p.renamed == nil {
		p.renamed = postings.NewBuilder(postings.Text)
	}
	p.renamed.AddText(postings.TextDoc(pathTerms, index.IndexText(text)))
	p.renamedIDs = append(p.renamedIDs, uint32(id))
}

// flush writes the new segments and the tombstones and returns the
// in-memory changes to apply after the commit.
func (p *postingsTx) flush(ctx context.Context, ix *Index, tx *sql.Tx) ([]memOp, error) {
	type add struct {
		x    *postings.Index
		id   int64
		seg  *postings.Segment
		dead []uint32
	}
	var adds []add
	write := func(x *postings.Index, kind int, seg *postings.Segment, n uint32, dead []uint32) error {
		if seg == nil || n == 0 {
			return nil
		}
		if int(n) != seg.Len() {
			return errors.New("postings: segment documents and rows disagree")
		}
		data := seg.Encode()
		// Keep the compact form in memory (lists decoded on demand).
		seg, err := postings.Decode(data)
		if err != nil {
			return err
		}
		var id int64
		if err := ix.txQueryRow(ctx, tx, `INSERT INTO postings(kind, data) VALUES (?, ?) RETURNING id`, kind, data).Scan(&id); err != nil {
			return err
		}
		for _, l := range dead {
			p.tombs = append(p.tombs, [2]int64{id, int64(l)})
		}
		adds = append(adds, add{x, id, seg, dead})
		return nil
	}
	if err := write(ix.text, kindText, p.text, p.textN, p.textDead); err != nil {
		return nil, err
	}
	if err := write(ix.grep, kindGrep, p.grep, p.grepN, p.grepDead); err != nil {
		return nil, err
	}
	if p.renamed != nil {
		seg := p.renamed.Segment()
		copy(seg.IDs, p.renamedIDs)
		if err := write(ix.text, kindText, seg, uint32(len(p.renamedIDs)), nil); err != nil {
			return nil, err
		}
	}
	if err := insertTombs(ctx, ix, tx, p.tombs); err != nil {
		return nil, err
	}
	delText, delGrep := p.delText, p.delGrep
	if len(adds) == 0 && len(delText) == 0 && len(delGrep) == 0 {
		return nil, nil
	}
	return []memOp{func() {
		ix.text.Delete(delText...)
		ix.grep.Delete(delGrep...)
		for _, a := range adds {
			a.x.Add(a.id, a.seg, a.dead)
		}
	}}, nil
}

func insertTombs(ctx context.Context, ix *Index, tx *sql.Tx, tombs [][2]int64) error {
	const per = 64
	for len(tombs) > 0 {
		n := min(len(tombs), per)
		args := make([]any, 0, 2*n)
		for _, t := range tombs[:n] {
			args = append(args, t[0], t[1])
		}
		q := `INSERT OR IGNORE INTO postings_dead(seg, doc) VALUES ` + strings.TrimSuffix(strings.Repeat("(?,?),", n), ",")
		if _, err := ix.txExec(ctx, tx, q, args...); err != nil {
			return err
		}
		tombs = tombs[n:]
	}
	return nil
}
