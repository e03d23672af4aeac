package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"strings"
	"sync"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/postings"
)

// memOp is an in-memory change applied after a transaction commits.
type memOp func()

func (ix *Index) write(ctx context.Context, op, path string, fn func(tx *sql.Tx) ([]memOp, error)) error {
	return ix.writeOn(ctx, ix.db, true, op, path, fn)
}

// writeDerived is write for vectors only (see Index.vdb).
func (ix *Index) writeDerived(ctx context.Context, op, path string, fn func(tx *sql.Tx) ([]memOp, error)) error {
	return ix.writeOn(ctx, ix.vdb, false, op, path, fn)
}

// writeMerge is write for a postings merge, which changes derived data
// only: on vdb, so its commit is not synced on its own (a crash may lose
// it, leaving the segments it replaced; the next commit of db syncs it).
func (ix *Index) writeMerge(ctx context.Context, fn func(tx *sql.Tx) ([]memOp, error)) error {
	return ix.writeOn(ctx, ix.vdb, true, "merge", "/", fn)
}

// writeOn runs fn in a write transaction on db; post says whether fn
// may change the postings (see genKey).
func (ix *Index) writeOn(ctx context.Context, db *sql.DB, post bool, op, path string, fn func(tx *sql.Tx) ([]memOp, error)) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock): writers of every process serialise
	if err != nil {
		return storeErr(op, path, err)
	}
	ix.txDB = db
	defer func() { ix.txDB = nil }()
	// When another process changed the postings since the memory was
	// loaded, reload before computing tombstones from the memory.
	if post {
		st, err := ix.readState(ctx, tx)
		if err == nil && st.gen != ix.gen {
			err = ix.reloadTx(ctx, tx)
		}
		if err != nil {
			ix.curTx, ix.txStmts = nil, nil
			tx.Rollback()
			return storeErr(op, path, err)
		}
		ix.st = st
	}
	ops, err := fn(tx)
	if err == nil && post && len(ops) > 0 {
		ix.st.gen++
		err = ix.saveState(ctx, tx, ix.st)
	}
	ix.curTx, ix.txStmts = nil, nil // statements end with the transaction
	if err != nil {
		tx.Rollback()
		return storeErr(op, path, err)
	}
	// Readers see the memory and the rows change together.
	ix.view.Lock()
	defer ix.view.Unlock()
	if err := tx.Commit(); err != nil {
		return storeErr(op, path, err)
	}
	ix.kickCheckpoint()
	for _, o := range ops {
		o()
	}
	if post {
		ix.gen = ix.st.gen
	}
	return nil
}

// reloadTx loads the postings in memory again from tx, after another
// process changed them. Call it holding wmu.
func (ix *Index) reloadTx(ctx context.Context, tx *sql.Tx) error {
	l, err := ix.readPostings(ctx, tx, false)
	if err != nil {
		return err
	}
	if len(l.problems) > 0 {
		return errors.New("postings written by another process: " + strings.Join(l.problems, "; "))
	}
	ix.view.Lock()
	defer ix.view.Unlock()
	ix.text.Load(l.text)
	ix.grep.Load(l.grep)
	ix.gen = l.gen
	return nil
}

// Put implements index.Store.
func (ix *Index) Put(ctx context.Context, items ...index.Item) error {
	if len(items) == 0 {
		return nil
	}
	return ix.putPrepared(ctx, items, prepare(items))
}

var _ index.PreparingStore = (*Index)(nil)

// PreparePut analyses items as Put would, ahead of the write; put writes
// final with that analysis when final names the same paths with the same
// *Content values in the same order, and as Put otherwise. (Reconcile
// builds its items from rows read in the write: see PrepareUpdate.)
func (ix *Index) PreparePut(items []index.Item) (put func(ctx context.Context, final []index.Item) error) {
	pre := prepare(items)
	return func(ctx context.Context, final []index.Item) error {
		if !samePrepared(items, final) {
			return ix.Put(ctx, final...)
		}
		if len(final) == 0 {
			return nil
		}
		return ix.putPrepared(ctx, final, pre)
	}
}

// PrepareUpdate implements index.PreparingStore.
func (ix *Index) PrepareUpdate(items []index.Item) func(context.Context, []string, func(map[string]index.File) ([]index.Item, error)) error {
	pre := prepare(items)
	return func(ctx context.Context, paths []string, build func(map[string]index.File) ([]index.Item, error)) error {
		return ix.update(ctx, paths, build, func(final []index.Item) prepared {
			if samePrepared(items, final) {
				return pre
			}
			return prepare(final)
		})
	}
}

// checkChunkNos refuses items whose chunk numbers do not increase or
// need more than the five digits of a chunk key (index.ChunkKey): keys
// must be unique, and the chunks' index does not check it (derived.sql).
func checkChunkNos(items []index.Item) error {
	for _, it := range items {
		if it.Content == nil {
			continue
		}
		last := -1
		for _, c := range it.Content.Chunks {
			if c.No <= last || c.No > 99999 {
				return semfs.PathErr("index", it.File.Path, semfs.ErrInvalid,
					fmt.Sprintf("chunk number %d after %d: chunk numbers must increase and stay below 100000", c.No, last))
			}
			last = c.No
		}
	}
	return nil
}

// samePrepared reports whether final has the paths and contents prepare
// analysed in prepared, in the same order (prepare reads nothing else).
func samePrepared(prepared, final []index.Item) bool {
	if len(prepared) != len(final) {
		return false
	}
	for i := range final {
		if prepared[i].File.Path != final[i].File.Path || prepared[i].Content != final[i].Content {
			return false
		}
	}
	return true
}

var _ index.UpdatingStore = (*Index)(nil)

// Update implements index.UpdatingStore. The rows of paths are read in
// the write transaction (BEGIN IMMEDIATE, which the writers of every
// process take in turn), so the items build makes of them cannot write
// back a row another process changed after the read; the analysis of
// their contents runs there too, holding the lock (PrepareUpdate runs it
// before).
func (ix *Index) Update(ctx context.Context, paths []string, build func(stored map[string]index.File) ([]index.Item, error)) error {
	return ix.update(ctx, paths, build, prepare)
}

// update is Update, analysing build's items with analyse.
func (ix *Index) update(ctx context.Context, paths []string, build func(map[string]index.File) ([]index.Item, error), analyse func([]index.Item) prepared) error {
	if len(paths) == 0 {
		return nil
	}
	for try := 0; ; try++ {
		full := false
		err := ix.write(ctx, "index", paths[0], func(tx *sql.Tx) ([]memOp, error) {
			stored, rows, err := readRows(ctx, tx, paths)
			if err != nil {
				return nil, err
			}
			items, err := build(stored)
			if err != nil || len(items) == 0 {
				return nil, err
			}
			if err := checkChunkNos(items); err != nil {
				return nil, err
			}
			// putItems takes the rows just read instead of reading them
			// again (unless build named a path not among paths).
			known, _ := rowsOf(rows, items)
			ops, err := ix.putItems(ctx, tx, items, analyse(items), known)
			full = errors.Is(err, errIDsFull)
			return ops, err
		})
		if full && try < 2 { // as in putPrepared: another process gave ids meanwhile
			if err = ix.renumber(ctx); err == nil {
				continue
			}
		}
		if err == nil {
			ix.startMerge()
		}
		return err
	}
}

// putPrepared writes items whose postings and tag hays prepare built.
func (ix *Index) putPrepared(ctx context.Context, items []index.Item, pre prepared) error {
	if err := checkChunkNos(items); err != nil {
		return err
	}
	for try := 0; ; try++ {
		full := false
		err := ix.write(ctx, "index", items[0].File.Path, func(tx *sql.Tx) ([]memOp, error) {
			ops, err := ix.putItems(ctx, tx, items, pre, nil)
			full = errors.Is(err, errIDsFull)
			return ops, err
		})
		if full && try < 2 { // a second try races another process giving ids
			if err = ix.renumber(ctx); err == nil {
				continue
			}
		}
		if err == nil {
			ix.startMerge()
		}
		return err
	}
}

// putItems writes items in tx; pre is their analysis, from prepare.
// known holds the existing rows of the items' paths if the caller read
// them in tx (nil: putItems finds them).
func (ix *Index) putItems(ctx context.Context, tx *sql.Tx, items []index.Item, pre prepared, known map[string]fileRow) ([]memOp, error) {
	var ops []memOp
	w := &batch{filePaths: map[string]bool{}, chunkPaths: map[string]bool{}, post: ix.newPostingsTx(pre.text, pre.grep), rows: known}
	// Else the rows as the meta layer's Files just read them, if no
	// write came between; else read them here.
	if w.rows == nil {
		var err error
		var ok bool
		if w.rows, ok = ix.takeSeen(ix.st.gen, items); !ok {
			if w.rows, err = ix.fileRows(ctx, tx, items); err != nil {
				return nil, err
			}
		}
	}
	// The tag index takes the hays prepare grouped by gram unless an
	// item's tags differ from the ones it was prepared with (then the
	// batch is grouped again here).
	tags := pre.tags
	var hays []string
	for i, it := range items {
		f := it.File
		hay := index.TagHay(f.Path, f.CreatedBy, f.Task, f.RelatedApps)
		if hays == nil && hay != tags.Hay(i) {
			hays = make([]string, i, len(items))
			for j := range i {
				hays[j] = tags.Hay(j)
			}
		}
		if hays != nil {
			hays = append(hays, hay)
		}
		o, err := ix.putTx(ctx, tx, it, w)
		if err != nil {
			return nil, err
		}
		ops = append(ops, o...)
	}
	if hays != nil {
		paths := make([]string, len(items))
		for i, it := range items {
			paths[i] = it.File.Path
		}
		tags = index.NewTagBatch(paths, hays)
	}
	ops = append(ops, func() { ix.tags.SetBatch(tags) })
	if err := w.insertFiles(ctx, ix, tx); err != nil {
		return nil, err
	}
	if len(w.newPaths) > 0 {
		if _, _, err := logPaths(ctx, tx, w.newPaths); err != nil {
			return nil, err
		}
	}
	if err := w.insertChunks(ctx, ix, tx); err != nil {
		return nil, err
	}
	po, err := w.post.flush(ctx, ix, tx)
	return append(ops, po...), err
}

// batch collects the writes of a Put that go in bulk: rows of the files
// and chunks tables, inserted rowsPerInsert per statement as they come
// (the rest at the end), with ids never given before (new files: see
// fileID; chunks: see txState), and the postings, written at the end.
type batch struct {
	fileArgs   []any           // columns of new files rows to insert (newFileCols each)
	filePaths  map[string]bool // paths with rows in fileArgs
	newPaths   []string        // paths of the rows inserted from fileArgs
	lastFile   int64           // the largest file id given so far (0: not read yet)
	chunkArgs  []any           // columns of chunks rows to insert (chunkCols each)
	chunkPaths map[string]bool // paths with rows in chunkArgs
	post       *postingsTx
	rows       map[string]fileRow // files rows of the batch's paths, as written so far
	vals       []any              // the values bound by insertRows (scratch)
}

// fileRow is what a Put needs to know of a file's existing row.
type fileRow struct {
	id   int64
	grep int // grep_ok
}

// fileRows reads the existing rows of the items' paths, 500 per query
// (one query per file was a fifth of a small-file ingest).
func (ix *Index) fileRows(ctx context.Context, tx *sql.Tx, items []index.Item) (map[string]fileRow, error) {
	out := make(map[string]fileRow, len(items))
	for len(items) > 0 {
		n := min(len(items), 500)
		args := make([]any, n)
		for i, it := range items[:n] {
			args[i] = it.File.Path
		}
		items = items[n:]
		rows, err := ix.txQuery(ctx, tx, `SELECT path, id, grep_ok FROM files WHERE path IN (`+placeholders(n)+`)`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var p string
			var r fileRow
			if err := rows.Scan(&p, &r.id, &r.grep); err != nil {
				rows.Close()
				return nil, err
			}
			out[p] = r
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// chunkID gives a new chunk id (see txState), or errIDsFull.
func (ix *Index) chunkID() (int64, error) {
	if ix.st.chunk >= maxDocID {
		return 0, errIDsFull
	}
	ix.st.chunk++
	return ix.st.chunk, nil
}

// fileID gives a new file the id SQLite would give it, max(id)+1 (read
// once per batch), or errIDsFull.
func (w *batch) fileID(ctx context.Context, ix *Index, tx *sql.Tx) (int64, error) {
	if w.lastFile == 0 {
		if err := ix.txQueryRow(ctx, tx, `SELECT coalesce(max(id), 0) FROM files`).Scan(&w.lastFile); err != nil {
			return 0, err
		}
	}
	if w.lastFile >= maxDocID {
		return 0, errIDsFull
	}
	w.lastFile++
	return w.lastFile, nil
}

// Columns of the rows a batch inserts in bulk, and their numbers.
const (
	newFileCols = `id, path, created_by, task, related_apps, summary, links, provenance, extra,
		groups_json, public, created_at, updated_at, size, hash, mtime, state, reason, ext, grep_ok, tag_text, tag_fresh`
	chunkCols    = `id, key, start_line, end_line, text, vec, fresh`
	fileColumns  = 22
	chunkColumns = 7
)

// bulkTable is a table a batch inserts rows into, rowsPerInsert per
// statement: its columns in the order of a row's values and, for a column
// with a DEFAULT, a test that a value equals it. A statement whose rows
// all hold a column's default leaves the column out: binding a value
// costs more than SQLite filling in the default, and most files rows
// carry no tags (9 of their 22 values are defaults).
type bulkTable struct {
	name      string
	cols      []string
	isDefault []func(any) bool // nil: always bound
}

func isText(def string) func(any) bool {
	return func(v any) bool { s, ok := v.(string); return ok && s == def }
}

func isZero(v any) bool { n, ok := v.(int); return ok && n == 0 }

func isNullBlob(v any) bool { b, ok := v.([]byte); return v == nil || ok && b == nil }

// The DEFAULTs of the files columns (migrations/0001_init.sql) and of the
// chunks columns (derived.sql); TestBulkDefaultsAsBound checks them.
var (
	filesTable = bulkTable{
		name: "files",
		cols: strings.Fields(strings.ReplaceAll(newFileCols, ",", " ")),
		isDefault: []func(any) bool{
			2: isText(""), 3: isText(""), 4: isText("[]"), 5: isText(""), 6: isText("[]"), 7: isText(""),
			8: isText("{}"), 9: isText("[]"), 10: isZero, 17: isText(""), 21: isZero,
		},
	}
	chunksTable = bulkTable{
		name:      "chunks",
		cols:      strings.Fields(strings.ReplaceAll(chunkCols, ",", " ")),
		isDefault: []func(any) bool{5: isNullBlob, 6: isZero},
	}
)

func init() {
	for _, t := range []*bulkTable{&filesTable, &chunksTable} {
		t.isDefault = append(t.isDefault, make([]func(any) bool, len(t.cols)-len(t.isDefault))...)
	}
}

// insertFiles inserts the waiting new files rows and adds their paths
// to newPaths, which putItems logs in fresh_log (see freshSQL). It is the
// one statement that inserts files rows: putTx's upsert is only run for
// a path that has a row (read in this transaction, or by Files at the
// generation still current), and the fresh_files_access trigger logs its
// update.
func (w *batch) insertFiles(ctx context.Context, ix *Index, tx *sql.Tx) error {
	err := w.insertRows(ctx, ix, tx, &filesTable, w.fileArgs)
	for r := 0; r < len(w.fileArgs); r += fileColumns {
		w.newPaths = append(w.newPaths, w.fileArgs[r+1].(string))
	}
	w.fileArgs = w.fileArgs[:0]
	clear(w.filePaths)
	return err
}

// insertChunks inserts the waiting chunks rows.
func (w *batch) insertChunks(ctx context.Context, ix *Index, tx *sql.Tx) error {
	err := w.insertRows(ctx, ix, tx, &chunksTable, w.chunkArgs)
	w.chunkArgs = w.chunkArgs[:0]
	clear(w.chunkPaths)
	return err
}

// insertRows inserts the rows in args (len(t.cols) values each) into t,
// stmtRows rows per statement, leaving out the columns whose values are
// all defaults in that statement.
func (w *batch) insertRows(ctx context.Context, ix *Index, tx *sql.Tx, t *bulkTable, args []any) error {
	cols := len(t.cols)
	keep := make([]bool, cols)
	for len(args) > 0 {
		n := stmtRows(len(args) / cols)
		rows := args[:n*cols]
		args = args[n*cols:]
		kept := 0
		for c := range cols {
			keep[c] = t.isDefault[c] == nil
			for r := 0; !keep[c] && r < n; r++ {
				keep[c] = !t.isDefault[c](rows[r*cols+c])
			}
			if keep[c] {
				kept++
			}
		}
		vals := rows
		if kept < cols {
			w.vals = w.vals[:0]
			for r := range n {
				for c, v := range rows[r*cols : (r+1)*cols] {
					if keep[c] {
						w.vals = append(w.vals, v)
					}
				}
			}
			vals = w.vals
		}
		if _, err := ix.txExec(ctx, tx, insertSQL(t, keep, kept, n), vals...); err != nil {
			return err
		}
	}
	return nil
}

// insertSQL is the statement inserting n rows of the kept columns of t.
func insertSQL(t *bulkTable, keep []bool, kept, n int) string {
	var b strings.Builder
	b.Grow(len(t.name) + 16 + 12*kept + n*(2*kept+2))
	b.WriteString("INSERT INTO ")
	b.WriteString(t.name)
	b.WriteByte('(')
	sep := ""
	for c, name := range t.cols {
		if keep[c] {
			b.WriteString(sep)
			b.WriteString(name)
			sep = ","
		}
	}
	b.WriteString(") VALUES ")
	row := "(" + placeholders(kept) + ")"
	for r := range n {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row)
	}
	return b.String()
}

// rowsPerInsert is how many rows one bulk INSERT carries at most: a
// statement costs about as much as a few rows (and saves the pages it
// changes to its statement journal), and most Puts are bulk. 256 rather
// than 32 took 2 % off BenchmarkWriteBatch's instructions.
const rowsPerInsert = 256

// stmtRows is how many of left rows (> 0) the next bulk statement
// inserts: rowsPerInsert, or the largest power of two not above left,
// so that a transaction prepares at most a few shapes of statement.
func stmtRows(left int) int {
	if left >= rowsPerInsert {
		return rowsPerInsert
	}
	return 1 << (bits.Len(uint(left)) - 1)
}

// prepare analyses items and builds the postings segments of their chunks
// (full text) and files (grep trigrams) before Put takes the write lock:
// analysis is most of a write's CPU, and the single writer holding the
// lock should only insert. Each of GOMAXPROCS goroutines builds segments
// of a run of consecutive items (runs of about equal bytes), which are
// then concatenated. Documents are numbered in item order (chunk order
// within an item); Put assigns their ids in the same order.
func prepare(items []index.Item) prepared {
	workers := max(1, min(runtime.GOMAXPROCS(0), len(items)))
	total := 0
	for _, it := range items {
		total += contentSize(it)
	}
	// Item bounds of each worker's run.
	bounds := []int{0}
	acc := 0
	for i, it := range items {
		acc += contentSize(it)
		if len(bounds) < workers && acc*workers >= total*len(bounds) {
			bounds = append(bounds, i+1)
		}
	}
	for len(bounds) <= workers {
		bounds = append(bounds, len(items))
	}
	texts := make([]*postings.Segment, workers)
	greps := make([]*postings.Segment, workers)
	var wg sync.WaitGroup
	var tags *index.TagBatch
	wg.Go(func() {
		paths, hays := make([]string, len(items)), make([]string, len(items))
		for i, it := range items {
			f := it.File
			paths[i], hays[i] = f.Path, index.TagHay(f.Path, f.CreatedBy, f.Task, f.RelatedApps)
		}
		tags = index.NewTagBatch(paths, hays)
	})
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var tb postings.TextBuilder
			gb := postings.NewBuilder(postings.Trigram)
			var tris []uint32
			for _, it := range items[bounds[w]:bounds[w+1]] {
				c := it.Content
				if c == nil {
					continue
				}
				pathTerms := postings.Terms(index.IndexText(it.File.Path))
				for _, ch := range c.Chunks {
					tb.AddRaw(pathTerms, ch.Text)
				}
				if c.GrepOK {
					tris = index.AppendGrepTrigrams(tris[:0], c.Grep)
					gb.AddTrigrams(tris)
				}
			}
			texts[w], greps[w] = tb.Segment(), gb.Segment()
		}()
	}
	wg.Wait()
	text, grep := texts[0], greps[0]
	if workers > 1 {
		text, grep = postings.Concat(texts), postings.Concat(greps)
	}
	// The encoding but for the ids, also off the write lock.
	text.EncodeTerms()
	grep.EncodeTerms()
	return prepared{text: text, grep: grep, tags: tags}
}

// prepared is what prepare computes of a batch before the write lock.
type prepared struct {
	text, grep *postings.Segment // postings of the chunks and the files' grep trigrams
	tags       *index.TagBatch   // the files' tag hays (as the items were when prepared)
}

// contentSize is the bytes prepare analyses for an item.
func contentSize(it index.Item) int {
	if it.Content == nil {
		return 0
	}
	n := len(it.Content.Grep)
	for _, c := range it.Content.Chunks {
		n += len(c.Text)
	}
	return n
}

func (ix *Index) putTx(ctx context.Context, tx *sql.Tx, it index.Item, w *batch) ([]memOp, error) {
	f := it.File
	public := 0
	if f.Public {
		public = 1
	}
	state := f.State
	if state == "" {
		state = index.StatePending
	}
	grepOK := -1 // keep
	if it.Content != nil {
		grepOK = 0
		if it.Content.GrepOK {
			grepOK = 1
		}
	}
	// Postings to delete exist only for a file already indexed.
	prev, exists := w.rows[f.Path]
	var id int64
	if exists {
		if w.filePaths[f.Path] { // put earlier in this batch
			if err := w.insertFiles(ctx, ix, tx); err != nil {
				return nil, err
			}
		}
		err := ix.txQueryRow(ctx, tx, `INSERT INTO files (path, created_by, task, related_apps, summary, links, provenance, extra,
		groups_json, public, created_at, updated_at, size, hash, mtime, state, reason, ext, grep_ok, tag_text, tag_fresh)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,max(?,0),?,0)
		ON CONFLICT(path) DO UPDATE SET created_by=excluded.created_by, task=excluded.task,
		related_apps=excluded.related_apps, summary=excluded.summary, links=excluded.links,
		provenance=excluded.provenance, extra=excluded.extra, groups_json=excluded.groups_json,
		public=excluded.public, created_at=excluded.created_at, updated_at=excluded.updated_at,
		size=excluded.size, hash=excluded.hash, mtime=excluded.mtime, state=excluded.state,
		reason=excluded.reason, ext=excluded.ext,
		grep_ok=CASE WHEN ? < 0 THEN files.grep_ok ELSE excluded.grep_ok END,
		tag_fresh=CASE WHEN files.tag_text = excluded.tag_text THEN files.tag_fresh ELSE 0 END,
		tag_text=excluded.tag_text
		RETURNING id`,
			f.Path, f.CreatedBy, f.Task, encodeList(f.RelatedApps), f.Summary, encodeList(f.Links), f.Provenance,
			encodeMap(f.Extra), encodeList(f.Groups), public, nanos(f.CreatedAt), nanos(f.UpdatedAt), f.Size, f.Hash,
			nanos(f.ModTime), state, f.Reason, index.Ext(f.Path), grepOK, it.TagText, grepOK).Scan(&id)
		if err != nil {
			return nil, err
		}
		if id > maxDocID {
			return nil, errIDsFull
		}
	} else {
		// A new row: inserted in bulk at the end of the batch (or before
		// the path is put again).
		var err error
		if id, err = w.fileID(ctx, ix, tx); err != nil {
			return nil, err
		}
		w.fileArgs = append(w.fileArgs, id, f.Path, f.CreatedBy, f.Task, encodeList(f.RelatedApps), f.Summary,
			encodeList(f.Links), f.Provenance, encodeMap(f.Extra), encodeList(f.Groups), public, nanos(f.CreatedAt),
			nanos(f.UpdatedAt), f.Size, f.Hash, nanos(f.ModTime), state, f.Reason, index.Ext(f.Path), max(grepOK, 0),
			it.TagText, 0)
		w.filePaths[f.Path] = true
		if len(w.fileArgs) == rowsPerInsert*fileColumns {
			if err := w.insertFiles(ctx, ix, tx); err != nil {
				return nil, err
			}
		}
	}
	now := fileRow{id: id, grep: max(grepOK, 0)}
	if grepOK < 0 && exists {
		now.grep = prev.grep
	}
	w.rows[f.Path] = now
	if exists {
		if _, err := ix.txExec(ctx, tx, `DELETE FROM links WHERE src = ?`, f.Path); err != nil {
			return nil, err
		}
	}
	for _, l := range f.Links {
		if _, err := ix.txExec(ctx, tx, `INSERT OR IGNORE INTO links(dst, src) VALUES (?, ?)`, l, f.Path); err != nil {
			return nil, err
		}
	}
	if it.Content == nil {
		return nil, nil
	}
	// Replace derived data, keeping vectors of unchanged chunk texts.
	var old map[string]oldChunk
	if exists {
		if w.chunkPaths[f.Path] { // put earlier in this batch
			if err := w.insertChunks(ctx, ix, tx); err != nil {
				return nil, err
			}
		}
		var err error
		if old, err = ix.dropChunksTx(ctx, tx, f.Path, w.post); err != nil {
			return nil, err
		}
	}
	content := ix.vecs[embedding.SpaceContent]
	var oldKeys []string
	var byText map[string][]byte
	for k, o := range old {
		oldKeys = append(oldKeys, k)
		if o.fresh && o.vec != nil {
			if byText == nil {
				byText = map[string][]byte{}
			}
			byText[o.text] = o.vec
		}
	}
	type kept struct {
		key string
		vec []byte
	}
	var keep []kept
	for _, c := range it.Content.Chunks {
		key := index.ChunkKey(f.Path, c.No)
		vec := byText[c.Text]
		fresh := 0
		if vec != nil {
			fresh = 1
			keep = append(keep, kept{key, vec})
		}
		cid, err := ix.chunkID()
		if err != nil {
			return nil, err
		}
		w.chunkArgs = append(w.chunkArgs, cid, key, c.StartLine, c.EndLine, c.Text, vec, fresh)
		w.chunkPaths[f.Path] = true
		if len(w.chunkArgs) == rowsPerInsert*chunkColumns {
			if err := w.insertChunks(ctx, ix, tx); err != nil {
				return nil, err
			}
		}
		w.post.addChunk(cid)
	}
	if exists && prev.grep == 1 {
		w.post.dropFile(id)
	}
	if it.Content.GrepOK {
		w.post.addFile(id)
	}
	if len(oldKeys) == 0 && len(keep) == 0 {
		return nil, nil
	}
	return []memOp{func() {
		for _, k := range oldKeys {
			content.Delete(k)
		}
		for _, k := range keep {
			content.Set(k.key, decodeVec(k.vec))
		}
	}}, nil
}

// chunksOf selects the chunks of one path through the index of their
// keys (a chunk's key is its path, '#' and five digits: see
// index.ChunkKey), with the arguments chunksOfArgs gives: chunks have no
// index of their own on path (derived version 6), and their index is on
// (fresh, key), so the condition names both values of fresh (derived
// version 7). The length test drops keys of a longer path that starts
// with path and '#' (chunks have no path column: derived version 8).
const chunksOf = `fresh IN (0, 1) AND key >= ? AND key < ? AND octet_length(key) = ?`

func chunksOfArgs(path string) []any { return []any{path + "#", path + "$", len(path) + 6} }

// chunkPathNo reads a chunks row's path and number from its key.
const chunkPathNo = `substr(key, 1, length(key) - 6), CAST(substr(key, -5) AS INTEGER)`

type oldChunk struct {
	text  string
	vec   []byte
	fresh bool
}

// dropChunksTx deletes the chunks of path, tombstoning their postings
// through p, and returns them by key.
func (ix *Index) dropChunksTx(ctx context.Context, tx *sql.Tx, path string, p *postingsTx) (map[string]oldChunk, error) {
	rows, err := ix.txQuery(ctx, tx, `SELECT id, key, text, vec, fresh FROM chunks WHERE `+chunksOf, chunksOfArgs(path)...)
	if err != nil {
		return nil, err
	}
	out := map[string]oldChunk{}
	var ids []int64
	for rows.Next() {
		var id int64
		var k string
		var o oldChunk
		var fresh int
		if err := rows.Scan(&id, &k, &o.text, &o.vec, &fresh); err != nil {
			rows.Close()
			return nil, err
		}
		o.fresh = fresh == 1
		out[k] = o
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, id := range ids {
		p.dropChunk(id)
	}
	if _, err := ix.txExec(ctx, tx, `DELETE FROM chunks WHERE `+chunksOf, chunksOfArgs(path)...); err != nil {
		return nil, err
	}
	return out, nil
}

// Remove implements index.Store.
func (ix *Index) Remove(ctx context.Context, path string, subtree bool) error {
	return ix.writePostings(ctx, "remove", path, func(tx *sql.Tx, p *postingsTx) ([]memOp, error) {
		return ix.removeTx(ctx, tx, path, subtree, nil, p)
	})
}

// writePostings runs fn in a write transaction with a postings change set,
// writes the change set in the same transaction, and starts a merge once
// it committed.
func (ix *Index) writePostings(ctx context.Context, op, path string, fn func(tx *sql.Tx, p *postingsTx) ([]memOp, error)) error {
	err := ix.write(ctx, op, path, func(tx *sql.Tx) ([]memOp, error) {
		p := ix.newPostingsTx(nil, nil)
		ops, err := fn(tx, p)
		if err != nil {
			return nil, err
		}
		po, err := p.flush(ctx, ix, tx)
		return append(ops, po...), err
	})
	if err == nil {
		ix.startMerge()
	}
	return err
}

// removeTx drops rows at path (and below it with subtree), except those in
// keep.
func (ix *Index) removeTx(ctx context.Context, tx *sql.Tx, path string, subtree bool, keep map[string]bool, p *postingsTx) ([]memOp, error) {
	cond, args := "path = ?", []any{path}
	if subtree {
		cond, args = below("path", path)
	}
	rows, err := ix.txQuery(ctx, tx, `SELECT id, path FROM files WHERE `+cond, args...)
	if err != nil {
		return nil, err
	}
	var gone []pathRow
	for rows.Next() {
		var r pathRow
		if err := rows.Scan(&r.id, &r.path); err != nil {
			rows.Close()
			return nil, err
		}
		if !keep[r.path] {
			gone = append(gone, r)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return ix.dropRowsTx(ctx, tx, gone, p)
}

// pathRow names a files row.
type pathRow struct {
	id   int64
	path string
}

// dropRowsTx deletes the rows gone with their chunks and links,
// tombstoning their postings through p; the memOp it returns drops them
// from the tag index and the vectors.
func (ix *Index) dropRowsTx(ctx context.Context, tx *sql.Tx, gone []pathRow, p *postingsTx) ([]memOp, error) {
	var paths []string
	for _, r := range gone {
		if _, err := ix.dropChunksTx(ctx, tx, r.path, p); err != nil {
			return nil, err
		}
		p.dropFile(r.id)
		if _, err := ix.txExec(ctx, tx, `DELETE FROM files WHERE id = ?`, r.id); err != nil {
			return nil, err
		}
		if _, err := ix.txExec(ctx, tx, `DELETE FROM links WHERE src = ?`, r.path); err != nil {
			return nil, err
		}
		paths = append(paths, r.path)
	}
	if len(paths) == 0 {
		return nil, nil
	}
	return []memOp{func() {
		set := map[string]bool{}
		for _, p := range paths {
			set[p] = true
		}
		ix.tags.Apply(paths, nil)
		tags := ix.vecs[embedding.SpaceTags]
		for _, p := range paths {
			tags.Delete(p)
		}
		ix.vecs[embedding.SpaceContent].DeleteFunc(func(k string) bool {
			i := strings.LastIndexByte(k, '#')
			return i >= 0 && set[k[:i]]
		})
	}}, nil
}

var _ index.RemovingStore = (*Index)(nil)

// RemoveIf implements index.RemovingStore. The rows of paths are read in
// the write transaction (BEGIN IMMEDIATE, which the writers of every
// process take in turn, as Update's), so gone decides on them as every
// process's committed writes left them, and the rows it returns are
// removed in that transaction, as Remove removes a path without its
// subtree. gone is called once. A path gone returns that is not among
// paths is an error (gone decided on a row it was not shown); one among
// them without a row is skipped.
func (ix *Index) RemoveIf(ctx context.Context, paths []string, gone func(stored map[string]index.File) ([]string, error)) error {
	if len(paths) == 0 {
		return nil
	}
	var goneErr error // returned as it is: storeErr would hide it from errors.Is
	err := ix.writePostings(ctx, "remove", paths[0], func(tx *sql.Tx, p *postingsTx) ([]memOp, error) {
		stored, rows, err := readRows(ctx, tx, paths)
		if err != nil {
			return nil, err
		}
		drop, err := gone(stored)
		if err != nil {
			goneErr = err
			return nil, err
		}
		var rm []pathRow
		done := make(map[string]bool, len(drop))
		for _, q := range drop {
			r, ok := rows[q]
			if !ok {
				goneErr = semfs.PathErr("remove", q, semfs.ErrInvalid, "RemoveIf: gone named a path whose row it was not given")
				return nil, goneErr
			}
			if r.id != 0 && !done[q] {
				done[q] = true
				rm = append(rm, pathRow{id: r.id, path: q})
			}
		}
		return ix.dropRowsTx(ctx, tx, rm, p)
	})
	if goneErr != nil {
		return goneErr
	}
	return err
}

// Rename implements index.Store.
func (ix *Index) Rename(ctx context.Context, oldpath, newpath string) error {
	if oldpath == newpath {
		return nil
	}
	return ix.writePostings(ctx, "rename", oldpath, func(tx *sql.Tx, p *postingsTx) ([]memOp, error) {
		return ix.renameTx(ctx, tx, oldpath, newpath, p)
	})
}

func moved(p, oldpath, newpath string) (string, bool) {
	if !semfs.HasPrefix(p, oldpath) {
		return p, false
	}
	return newpath + p[len(oldpath):], true
}

func (ix *Index) renameTx(ctx context.Context, tx *sql.Tx, oldpath, newpath string, p *postingsTx) ([]memOp, error) {
	// Rows at the destination are replaced.
	ops, err := ix.removeTx(ctx, tx, newpath, true, nil, p)
	if err != nil {
		return nil, err
	}
	cond, args := below("path", oldpath)
	rows, err := ix.txQuery(ctx, tx, `SELECT id, `+fileCols+` FROM files WHERE `+cond, args...)
	if err != nil {
		return nil, err
	}
	type row struct {
		id int64
		f  index.File
	}
	var mv []row
	for rows.Next() {
		var id int64
		f, err := scanFile(rowScanner{rows, &id})
		if err != nil {
			rows.Close()
			return nil, err
		}
		mv = append(mv, row{id, f})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var hays []struct{ old, new, hay string }
	for _, r := range mv {
		np, _ := moved(r.f.Path, oldpath, newpath)
		m := r.f.Meta
		m.Path = np
		tagText := index.TagText(m)
		if _, err := ix.txExec(ctx, tx, `UPDATE files SET path = ?, ext = ?, tag_text = ?, tag_fresh = 0 WHERE id = ?`,
			np, index.Ext(np), tagText, r.id); err != nil {
			return nil, err
		}
		if _, err := ix.txExec(ctx, tx, `UPDATE links SET src = ? WHERE src = ?`, np, r.f.Path); err != nil {
			return nil, err
		}
		// Chunks move with the file; their full-text rows carry the path.
		crows, err := ix.txQuery(ctx, tx, `SELECT id, CAST(substr(key, -5) AS INTEGER), text FROM chunks WHERE `+chunksOf, chunksOfArgs(r.f.Path)...)
		if err != nil {
			return nil, err
		}
		type ch struct {
			id   int64
			no   int
			text string
		}
		var chs []ch
		for crows.Next() {
			var c ch
			if err := crows.Scan(&c.id, &c.no, &c.text); err != nil {
				crows.Close()
				return nil, err
			}
			chs = append(chs, c)
		}
		crows.Close()
		pathTerms := postings.Terms(index.IndexText(np))
		for _, c := range chs {
			if _, err := ix.txExec(ctx, tx, `UPDATE chunks SET key = ? WHERE id = ?`, index.ChunkKey(np, c.no), c.id); err != nil {
				return nil, err
			}
			p.dropChunk(c.id)
			p.rename(c.id, pathTerms, c.text)
		}
		hays = append(hays, struct{ old, new, hay string }{r.f.Path, np, index.TagHay(np, r.f.CreatedBy, r.f.Task, r.f.RelatedApps)})
	}
	// Rewrite links that point at a moved path, in every file holding one.
	lcond, largs := below("dst", oldpath)
	lrows, err := ix.txQuery(ctx, tx, `SELECT DISTINCT src FROM links WHERE `+lcond, largs...)
	if err != nil {
		return nil, err
	}
	var srcs []string
	for lrows.Next() {
		var s string
		if err := lrows.Scan(&s); err != nil {
			lrows.Close()
			return nil, err
		}
		srcs = append(srcs, s)
	}
	lrows.Close()
	for _, src := range srcs {
		var links string
		if err := ix.txQueryRow(ctx, tx, `SELECT links FROM files WHERE path = ?`, src).Scan(&links); err != nil {
			if err == sql.ErrNoRows {
				continue
			}
			return nil, err
		}
		l := decodeList(links)
		for i, dst := range l {
			if np, ok := moved(dst, oldpath, newpath); ok {
				l[i] = np
			}
		}
		if _, err := ix.txExec(ctx, tx, `UPDATE files SET links = ? WHERE path = ?`, encodeList(l), src); err != nil {
			return nil, err
		}
		if _, err := ix.txExec(ctx, tx, `DELETE FROM links WHERE src = ?`, src); err != nil {
			return nil, err
		}
		for _, dst := range l {
			if _, err := ix.txExec(ctx, tx, `INSERT OR IGNORE INTO links(dst, src) VALUES (?, ?)`, dst, src); err != nil {
				return nil, err
			}
		}
	}
	ops = append(ops, func() {
		del := make([]string, len(hays))
		set := make([][2]string, len(hays))
		for i, h := range hays {
			del[i], set[i] = h.old, [2]string{h.new, h.hay}
		}
		ix.tags.Apply(del, set)
		ix.vecs[embedding.SpaceTags].Rekey(func(k string) (string, bool) { return moved(k, oldpath, newpath) })
		ix.vecs[embedding.SpaceContent].Rekey(func(k string) (string, bool) {
			i := strings.LastIndexByte(k, '#')
			if i < 0 {
				return k, false
			}
			np, ok := moved(k[:i], oldpath, newpath)
			return np + k[i:], ok
		})
	})
	return ops, nil
}

// rowScanner scans an id column before the file columns.
type rowScanner struct {
	rows *sql.Rows
	id   *int64
}

func (r rowScanner) Scan(dest ...any) error {
	return r.rows.Scan(append([]any{r.id}, dest...)...)
}
