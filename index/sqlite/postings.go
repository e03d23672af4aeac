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
	l, err := ix.readPostingsTx(ctx, true)
	if err == nil && len(l.problems) == 0 {
		ix.text, ix.grep, ix.gen = l.text, l.grep, l.gen
	}
	ix.wmu.Unlock()
	if err != nil {
		return storeErr("open index", ix.path, err)
	}
	if len(l.problems) == 0 {
		return nil
	}
	if err := ix.rebuildDerived(ctx); err != nil {
		return err
	}
	ix.Repaired = append(ix.Repaired, l.problems...)
	return nil
}

// loaded is the postings read from the store at generation gen.
type loaded struct {
	text, grep *postings.Index
	gen        int64
	problems   []string
}

// readPostingsTx is readPostings in a read transaction of its own.
func (ix *Index) readPostingsTx(ctx context.Context, full bool) (loaded, error) {
	tx, err := ix.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return loaded{}, err
	}
	defer tx.Rollback()
	return ix.readPostings(ctx, tx, full)
}

// readPostings decodes every segment and its tombstones from the store,
// with the generation they are at, and checks them: a segment that fails
// its checksum, a tombstone of no segment or out of range, or a document
// live in two segments are problems; with full, so are live documents
// that are not exactly the chunks and the grep-indexed files. Segments
// already in memory or in peer are reused (segment ids are never reused,
// and segments never change) unless full, which checks every stored
// segment. It changes nothing in memory: a lookup calls it without wmu.
func (ix *Index) readPostings(ctx context.Context, tx *sql.Tx, full bool) (loaded, error) {
	var l loaded
	var err error
	if l.gen, err = ix.readGen(ctx, tx); err != nil {
		return l, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT seg, doc FROM postings_dead`)
	if err != nil {
		return l, err
	}
	dead := map[int64][]uint32{}
	for rows.Next() {
		var seg, doc int64
		if err := rows.Scan(&seg, &doc); err != nil {
			rows.Close()
			return l, err
		}
		dead[seg] = append(dead[seg], uint32(doc))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return l, err
	}
	type stored struct {
		id   int64
		kind int
	}
	var segs []stored
	rows, err = tx.QueryContext(ctx, `SELECT id, kind FROM postings ORDER BY id`)
	if err != nil {
		return l, err
	}
	for rows.Next() {
		var s stored
		if err := rows.Scan(&s.id, &s.kind); err != nil {
			rows.Close()
			return l, err
		}
		segs = append(segs, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return l, err
	}
	l.text, l.grep = postings.New(postings.Text), postings.New(postings.Trigram)
	ix.peerMu.Lock()
	p := ix.peer // postings of another process's generation (fresh.go)
	ix.peerMu.Unlock()
	docs := map[*postings.Index]int{} // live documents, counting one live twice
	for _, st := range segs {
		x, cur, want := l.text, ix.text, postings.Text
		var peer *postings.Index
		if p != nil {
			peer = p.text
		}
		if st.kind == kindGrep {
			x, cur, want = l.grep, ix.grep, postings.Trigram
			if p != nil {
				peer = p.grep
			}
		}
		var seg *postings.Segment
		if !full {
			seg = cur.Segment(st.id)
			if seg == nil && peer != nil {
				seg = peer.Segment(st.id)
			}
		}
		if seg == nil {
			var data []byte
			if err := tx.QueryRowContext(ctx, `SELECT data FROM postings WHERE id = ?`, st.id).Scan(&data); err != nil {
				return l, err
			}
			if seg, err = postings.Decode(data); err != nil {
				l.problems = append(l.problems, fmt.Sprintf("postings segment %d: %v", st.id, err))
				continue
			}
		}
		if st.kind != kindText && st.kind != kindGrep || seg.Kind != want {
			l.problems = append(l.problems, fmt.Sprintf("postings segment %d: kind %d holds %d", st.id, st.kind, seg.Kind))
			continue
		}
		d := dead[st.id]
		delete(dead, st.id)
		for _, n := range d {
			if int(n) >= seg.Len() {
				l.problems = append(l.problems, fmt.Sprintf("postings segment %d: tombstone %d of %d documents", st.id, n, seg.Len()))
				d = nil
				break
			}
		}
		x.Add(st.id, seg, d)
		docs[x] += seg.Len() - len(d) // postings_dead's key makes d distinct
	}
	for seg := range dead {
		l.problems = append(l.problems, fmt.Sprintf("tombstones of missing postings segment %d", seg))
	}
	for _, x := range []*postings.Index{l.text, l.grep} {
		if n := docs[x] - x.Live(); n > 0 {
			l.problems = append(l.problems, fmt.Sprintf("%d documents live in two postings segments", n))
		}
	}
	if !full {
		return l, nil
	}
	// The live documents are exactly the rows when each row is live and
	// the counts agree: counts alone miss a tombstone moved to another
	// document of its segment (postings_dead rows carry no checksum).
	for _, c := range []struct {
		what string
		q    string
		x    *postings.Index
	}{
		{"chunks vs full-text postings", `SELECT id FROM chunks`, l.text},
		{"grep-indexed files vs trigram postings", `SELECT id FROM files WHERE grep_ok = 1`, l.grep},
	} {
		n, missing, err := countLive(ctx, tx, c.q, c.x)
		if err != nil {
			return l, err
		}
		if live := c.x.Live(); n != live || missing > 0 {
			l.problems = append(l.problems, fmt.Sprintf("%s: %d rows (%d of them not live) vs %d live documents", c.what, n, missing, live))
		}
	}
	return l, nil
}

// countLive counts the ids q selects and those of them not live in x.
func countLive(ctx context.Context, tx *sql.Tx, q string, x *postings.Index) (n, missing int, err error) {
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return 0, 0, err
		}
		n++
		if _, _, ok := x.Locate(uint32(id)); !ok {
			missing++
		}
	}
	return n, missing, rows.Err()
}

// The generation of the postings: a count of the write transactions
// that changed them, kept in kv and raised inside each such transaction.
// Another process writing the same file raises it too, so a generation
// other than the one the memory was loaded at means reload.
const genKey = "postings_gen" // see also readState

const readGenSQL = `SELECT CAST(value AS INTEGER) FROM kv WHERE key = '` + genKey + `'`

// readGen reads the generation in tx, through genStmt (every lookup runs
// it: parsed once per connection).
func (ix *Index) readGen(ctx context.Context, tx *sql.Tx) (int64, error) {
	var gen int64
	err := tx.StmtContext(ctx, ix.genStmt).QueryRowContext(ctx).Scan(&gen)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return gen, err
}

// bumpGen raises the generation in tx and returns it.
func bumpGen(ctx context.Context, tx *sql.Tx) (int64, error) {
	var gen int64
	err := tx.QueryRowContext(ctx, `INSERT INTO kv(key, value) VALUES (?, 1)
		ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1
		RETURNING CAST(value AS INTEGER)`, genKey).Scan(&gen)
	return gen, err
}

// txState is what a write transaction reads first: the generation of the
// postings and the last chunk and segment ids given. The ids count up in
// kv rather than from max(id), so an id is never given twice even when
// the row holding the highest one is deleted (SQLite would reuse it): a
// process whose memory still holds the old row must not take the new one
// for it. The one exception is renumber, which moves every segment to a
// new id, so no process reuses one decoded under the old chunk ids.
// log is the last fresh_log seq at the transaction's start (fresh.go).
type txState struct{ gen, chunk, seg, log int64 }

const (
	readStateSQL = `SELECT coalesce((SELECT CAST(value AS INTEGER) FROM kv WHERE key = 'postings_gen'), 0),
		coalesce((SELECT CAST(value AS INTEGER) FROM kv WHERE key = 'chunk_seq'), (SELECT coalesce(max(id), 0) FROM chunks)),
		coalesce((SELECT CAST(value AS INTEGER) FROM kv WHERE key = 'postings_seq'), (SELECT coalesce(max(id), 0) FROM postings)),
		(` + logHeadSQL + `)`
	saveStateSQL = `INSERT INTO kv(key, value) VALUES ('postings_gen', ?), ('chunk_seq', ?), ('postings_seq', ?)
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`
)

func (ix *Index) readState(ctx context.Context, tx *sql.Tx) (txState, error) {
	var s txState
	st, err := ix.dbStmt(ctx, tx, readStateSQL)
	if err != nil {
		return s, err
	}
	err = st.QueryRowContext(ctx).Scan(&s.gen, &s.chunk, &s.seg, &s.log)
	return s, err
}

func (ix *Index) saveState(ctx context.Context, tx *sql.Tx, s txState) error {
	// The writer reloaded what another process wrote (reusing peer's
	// segments): peer is of no further use.
	ix.peerMu.Lock()
	if ix.peer != nil && ix.peer.gen < s.gen {
		ix.peer = nil
	}
	ix.peerMu.Unlock()
	st, err := ix.dbStmt(ctx, tx, saveStateSQL)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(ctx, s.gen, s.chunk, s.seg)
	return err
}

// insertSegment stores an encoded segment under a new id.
func (ix *Index) insertSegment(ctx context.Context, tx *sql.Tx, kind int, data []byte) (int64, error) {
	ix.st.seg++
	_, err := ix.txExec(ctx, tx, `INSERT INTO postings(id, kind, data) VALUES (?, ?, ?)`, ix.st.seg, kind, data)
	return ix.st.seg, err
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
	var textAdds, grepAdds []postings.Added
	write := func(x *postings.Index, kind int, seg *postings.Segment, n uint32, dead []uint32) error {
		if seg == nil || n == 0 {
			return nil
		}
		if int(n) != seg.Len() {
			return errors.New("postings: segment documents and rows disagree")
		}
		// Keep the compact form in memory (lists decoded on demand).
		seg = seg.Compact()
		id, err := ix.insertSegment(ctx, tx, kind, seg.Encode())
		if err != nil {
			return err
		}
		for _, l := range dead {
			p.tombs = append(p.tombs, [2]int64{id, int64(l)})
		}
		a := postings.Added{ID: id, Seg: seg, Dead: dead}
		if x == ix.text {
			textAdds = append(textAdds, a)
		} else {
			grepAdds = append(grepAdds, a)
		}
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
	// Put, Remove and Rename end here: their tag and vector changes are
	// logged by then (fresh.go).
	var ops []memOp
	own, err := ix.ownLog(ctx, tx, ix.st.log)
	if err != nil {
		return nil, err
	}
	if own != nil {
		ops = append(ops, own)
	}
	delText, delGrep := p.delText, p.delGrep
	if len(textAdds) == 0 && len(grepAdds) == 0 && len(delText) == 0 && len(delGrep) == 0 {
		return ops, nil
	}
	return append(ops, func() {
		ix.text.Apply(delText, textAdds...)
		ix.grep.Apply(delGrep, grepAdds...)
	}), nil
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
