package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/postings"
)

// Freshness across processes: what another process committed is seen by
// this one's next lookup, without reopening and without waiting for this
// process's own writer.
//
// Postings: a lookup reads the generation (genKey) in its read
// transaction. When another process raised it, the lookup reads the
// segments list and tombstones at that snapshot, decoding only segments
// not already in memory (a merge or a renumbering by the other process
// means new segments, so more decoding), and installs the result in
// memory if the write lock (wmu) is free at that moment; if this
// process's writer holds it (a long Put, or a Put waiting for the other
// process's write transaction), the lookup answers from what it read
// (kept in peer for the next lookups at the same generation) and leaves
// the install to the writer, which reloads at its transaction's start.
//
// Tags and vectors: fresh_log numbers every committed change of a
// file's tag fields or of a vector with the path it touched. Triggers on
// files log the rows' updates and deletions (Put's upsert, Rename,
// Remove, whatever statement makes them), so every process logs alike;
// new rows are logged by the Put inserting them (batch.insertFiles: a
// trigger's program run per row cost 4 % of a small-file ingest's
// writer); the vector writes (embed.go) log the paths of the vectors
// they set; WipeVectors and rebuildDerived log an empty path, meaning
// "reload everything". Those writers log their paths with logPaths, in
// one batch entry per transaction: its path column holds the paths,
// each after a newline (a path holds no control character, see
// semfs.Clean), and its seq is the previous one plus the number of
// paths, so seqs still count logged paths: the entry ends the span
// (seq-n, seq]. seq is an INTEGER PRIMARY KEY, so a transaction's
// entries are contiguous spans (it holds the write lock); only the
// oldest entries are pruned (freshKeep). Memory remembers the seq it reflects (logSeq);
// a lookup of tags or vectors reads max(seq) and, when another process
// logged more, re-reads the rows of the logged paths only (everything
// after a reset entry or when entries it needs were pruned). A write of
// this process that logged right after logSeq advances logSeq itself, so
// a process does not re-read its own writes.
const freshSQL = `
CREATE TABLE IF NOT EXISTS fresh_log (seq INTEGER PRIMARY KEY, path TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS fresh_files_delete AFTER DELETE ON files BEGIN
	INSERT INTO fresh_log(path) VALUES (old.path);
END;
CREATE TRIGGER IF NOT EXISTS fresh_files_access AFTER UPDATE OF path, created_by, task, related_apps, groups_json, public ON files BEGIN
	INSERT INTO fresh_log(path) VALUES (old.path);
	INSERT INTO fresh_log(path) SELECT new.path WHERE new.path != old.path;
END;
DROP TRIGGER IF EXISTS fresh_files_insert;
DROP TRIGGER IF EXISTS fresh_files_update;
DROP TRIGGER IF EXISTS fresh_files_vec;
DROP TRIGGER IF EXISTS fresh_chunks_vec;
`

// freshObjects are the tables and triggers freshSQL leaves. It drops
// the ones earlier versions made: fresh_files_insert (insertFiles logs
// new rows now), fresh_files_update (an update trigger that did not log
// changes of groups_json and public, which PeerChanges reports) and the
// triggers that logged vector writes row by row before embed.go logged
// them per path.
var freshObjects = []string{"fresh_log", "fresh_files_delete", "fresh_files_access"}

// freshKeep is how many logged paths (seqs) fresh_log keeps: a process
// that falls further behind reloads everything.
const freshKeep = 1 << 16

const logHeadSQL = `SELECT coalesce(max(seq), 0) FROM fresh_log`

// logReset is the fresh_log entry that means "reload everything".
const logReset = `INSERT INTO fresh_log(path) VALUES ('')`

// ensureFresh creates fresh_log and its triggers when missing.
func (ix *Index) ensureFresh(ctx context.Context) error {
	var all, known int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*), count(CASE WHEN name IN (`+placeholders(len(freshObjects))+`) THEN 1 END)
		FROM sqlite_master WHERE name LIKE 'fresh\_%' ESCAPE '\'`, anys(freshObjects)...).Scan(&all, &known); err != nil {
		return storeErr("open index", ix.path, err)
	}
	if all == len(freshObjects) && known == all {
		return nil
	}
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if _, err := ix.db.ExecContext(ctx, freshSQL); err != nil {
		return storeErr("open index", ix.path, err)
	}
	return nil
}

// logHead reads the last fresh_log seq in tx.
func logHead(ctx context.Context, tx *sql.Tx) (int64, error) {
	var head int64
	err := tx.QueryRowContext(ctx, logHeadSQL).Scan(&head)
	return head, err
}

// ownLog returns the memOp of a write transaction of this process that
// logged the entries after start (read at its start) up to its end: the
// memory it changes is its own, so it counts as a change of memory
// (memSeq) and, when memory was at start, moves logSeq past its entries.
// It also prunes old entries. Call it last in the transaction.
func (ix *Index) ownLog(ctx context.Context, tx *sql.Tx, start int64) (memOp, error) {
	end, err := logHead(ctx, tx)
	if err != nil || end == start {
		return nil, err
	}
	return ix.ownLogSpan(ctx, tx, start, end)
}

// ownLogSpan is ownLog when the transaction knows its entries are
// start+1..end.
func (ix *Index) ownLogSpan(ctx context.Context, tx *sql.Tx, start, end int64) (memOp, error) {
	if end/4096 != start/4096 { // now and then
		if _, err := tx.ExecContext(ctx, `DELETE FROM fresh_log WHERE seq <= ?`, end-freshKeep); err != nil {
			return nil, err
		}
	}
	return func() {
		ix.memSeq++
		if ix.logSeq == start {
			ix.logSeq = end
		}
		if n := len(ix.ownSpans); n > 0 && ix.ownSpans[n-1][1] == start {
			ix.ownSpans[n-1][1] = end
		} else {
			if n >= ownSpansKeep {
				ix.ownSpans = append(ix.ownSpans[:0], ix.ownSpans[n/2:]...)
			}
			ix.ownSpans = append(ix.ownSpans, [2]int64{start, end})
		}
	}, nil
}

// ownSpansKeep bounds ownSpans: PeerChanges reports the entries of own
// writes older than those kept (re-reading them is harmless).
const ownSpansKeep = 1024

// ownEntries reports whether every entry of (seen, head] is one this
// process logged, and returns a test of whether one seq is, for entries
// after seen. It forgets the spans up to seen (the caller's cursor).
func (ix *Index) ownEntries(seen, head int64) (all bool, own func(seq int64) bool) {
	ix.view.Lock()
	defer ix.view.Unlock()
	i := 0
	for i < len(ix.ownSpans) && ix.ownSpans[i][1] <= seen {
		i++
	}
	ix.ownSpans = ix.ownSpans[i:]
	spans := slices.Clone(ix.ownSpans)
	own = func(seq int64) bool {
		j := sort.Search(len(spans), func(k int) bool { return spans[k][1] >= seq })
		return j < len(spans) && spans[j][0] < seq
	}
	at := seen
	for _, sp := range spans {
		if sp[0] > at {
			break
		}
		at = max(at, sp[1])
	}
	return at >= head, own
}

// refresh brings the in-memory tags and vectors up to what other
// processes committed: one SELECT when nothing changed. It reads the
// changed rows without any lock and applies them unless this process's
// own writes changed memory meanwhile (then it tries again, up to three
// times, and else serves what memory holds: the next call retries).
func (ix *Index) refresh(ctx context.Context) error {
	for try := range 4 {
		if try == 3 {
			// This process's writes kept changing memory (a drain of
			// embeddings, a stream of saves): read and apply holding
			// the writer's lock, which they take, if it comes free soon
			// (a writer waiting for another process's transaction may
			// hold it for seconds: then serve memory, as before).
			if !ix.lockWriterSoon(ctx) {
				return nil
			}
			defer ix.wmu.Unlock()
		}
		ix.view.RLock()
		seen, mem := ix.logSeq, ix.memSeq
		ix.view.RUnlock()
		var head int64
		if err := ix.logStmt.QueryRowContext(ctx).Scan(&head); err != nil {
			return storeErr("search", "/", err)
		}
		if head == seen {
			return nil
		}
		ch, err := ix.readChanges(ctx, seen)
		if err != nil {
			return storeErr("search", "/", err)
		}
		ix.view.Lock()
		ok := ix.memSeq == mem && ix.logSeq == seen
		if ok {
			ch.apply(ix)
		}
		ix.view.Unlock()
		if ok {
			return nil
		}
	}
	return nil
}

// refreshWait bounds how long refresh's last try waits for the writer's
// lock.
const refreshWait = 100 * time.Millisecond

// lockWriterSoon takes ix.wmu if it comes free within refreshWait, and
// reports whether it did. It only tries the lock, so that a lookup never
// queues behind a writer that waits for another process.
func (ix *Index) lockWriterSoon(ctx context.Context) bool {
	deadline := time.Now().Add(refreshWait)
	for {
		if ix.wmu.TryLock() {
			return true
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return false
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// refreshQuiet is refresh for lookups that cannot return an error: a
// failed refresh serves what memory holds.
func (ix *Index) refreshQuiet(ctx context.Context) { _ = ix.refresh(ctx) }

// memChanges is what refresh read: the rows of the logged paths, or of
// every file (all), as of fresh_log seq head.
type memChanges struct {
	head    int64
	all     bool
	paths   []string    // logged paths (not all)
	hays    [][2]string // path, tag hay of the rows found
	tagVecs []keyVec
	chunks  []keyVec
}

type keyVec struct {
	key string
	vec []float32
}

func (ch *memChanges) file(path, hay string, vec []float32) {
	ch.hays = append(ch.hays, [2]string{path, hay})
	if vec != nil {
		ch.tagVecs = append(ch.tagVecs, keyVec{path, vec})
	}
}

func (ch *memChanges) chunk(key string, vec []float32) {
	ch.chunks = append(ch.chunks, keyVec{key, vec})
}

// logPaths logs paths (each once, in order) in tx and returns the seq
// before their span and the span's last: one batch entry (see freshSQL),
// or, for one path or a path holding a newline, an entry per path. The
// span is contiguous: the transaction holds the write lock.
func logPaths(ctx context.Context, tx *sql.Tx, paths []string) (start, end int64, err error) {
	if len(paths) > 1 && !slices.ContainsFunc(paths, func(p string) bool { return strings.ContainsRune(p, '\n') }) {
		var b strings.Builder
		for _, p := range paths {
			b.WriteByte('\n')
			b.WriteString(p)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO fresh_log(seq, path) SELECT coalesce(max(seq), 0) + ?, ? FROM fresh_log`, len(paths), b.String())
		if err != nil {
			return 0, 0, err
		}
		end, err := res.LastInsertId()
		return end - int64(len(paths)), end, err
	}
	for rest := paths; len(rest) > 0; {
		n := min(len(rest), 500)
		args := make([]any, n)
		for i, p := range rest[:n] {
			args[i] = p
		}
		rest = rest[n:]
		res, err := tx.ExecContext(ctx, `INSERT INTO fresh_log(path) VALUES `+strings.TrimSuffix(strings.Repeat("(?),", n), ","), args...)
		if err != nil {
			return 0, 0, err
		}
		if end, err = res.LastInsertId(); err != nil {
			return 0, 0, err
		}
	}
	return end - int64(len(paths)), end, nil
}

// eachLogged calls fn with each path of a fresh_log entry: the entry's
// path, or the paths of a batch entry (see freshSQL).
func eachLogged(entry string, fn func(path string)) {
	if !strings.HasPrefix(entry, "\n") {
		fn(entry)
		return
	}
	for p := range strings.SplitSeq(entry[1:], "\n") {
		fn(p)
	}
}

// keyPath is the path of a vector's key in space: the key itself for
// tags, the chunk key's path for content.
func keyPath(space, key string) string {
	if space == embedding.SpaceContent {
		if i := strings.LastIndexByte(key, '#'); i >= 0 {
			return key[:i]
		}
	}
	return key
}

// readChanges reads, in one read transaction, what changed after seq
// seen.
func (ix *Index) readChanges(ctx context.Context, seen int64) (*memChanges, error) {
	tx, err := ix.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	ch := &memChanges{}
	var low int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0), coalesce(min(seq), 0) FROM fresh_log`).Scan(&ch.head, &low); err != nil {
		return nil, err
	}
	if ch.head < seen || low > seen+1 {
		return ch, ch.readAll(ctx, tx)
	}
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT path FROM fresh_log WHERE seq > ?`, seen)
	if err != nil {
		return nil, err
	}
	dup := map[string]bool{}
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			rows.Close()
			return nil, err
		}
		if e == "" {
			rows.Close()
			return ch, ch.readAll(ctx, tx)
		}
		eachLogged(e, func(p string) {
			if !dup[p] {
				dup[p] = true
				ch.paths = append(ch.paths, p)
			}
		})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := 0; i < len(ch.paths); i += 500 {
		part := ch.paths[i:min(i+500, len(ch.paths))]
		args := make([]any, len(part))
		for j, p := range part {
			args[j] = p
		}
		if err := readFiles(ctx, tx, `WHERE path IN (`+placeholders(len(part))+`)`, args, ch.file); err != nil {
			return nil, err
		}
	}
	for _, p := range ch.paths {
		if err := readChunks(ctx, tx, `WHERE `+chunksOf+` AND vec IS NOT NULL`, chunksOfArgs(p), ch.chunk); err != nil {
			return nil, err
		}
	}
	return ch, nil
}

// readAll reads the tag rows and vectors of every file.
func (ch *memChanges) readAll(ctx context.Context, tx *sql.Tx) error {
	ch.all, ch.paths = true, nil
	if err := readFiles(ctx, tx, "", nil, ch.file); err != nil {
		return err
	}
	return readChunks(ctx, tx, `WHERE vec IS NOT NULL`, nil, ch.chunk)
}

// readFiles calls fn with the path, tag hay and tag vector (nil: none)
// of the files rows where selects.
func readFiles(ctx context.Context, tx *sql.Tx, where string, args []any, fn func(path, hay string, vec []float32)) error {
	rows, err := tx.QueryContext(ctx, `SELECT path, created_by, task, related_apps, tag_vec FROM files `+where, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var p, by, task, apps string
		var vec []byte
		if err := rows.Scan(&p, &by, &task, &apps, &vec); err != nil {
			return err
		}
		fn(p, index.TagHay(p, by, task, decodeList(apps)), decodeVec(vec))
	}
	return rows.Err()
}

// readChunks calls fn with the key and vector of the chunks rows where
// selects.
func readChunks(ctx context.Context, tx *sql.Tx, where string, args []any, fn func(key string, vec []float32)) error {
	rows, err := tx.QueryContext(ctx, `SELECT key, vec FROM chunks `+where, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var vec []byte
		if err := rows.Scan(&k, &vec); err != nil {
			return err
		}
		if v := decodeVec(vec); v != nil {
			fn(k, v)
		}
	}
	return rows.Err()
}

// apply makes memory show ch. Call it holding view.
func (ch *memChanges) apply(ix *Index) {
	tags, content := ix.vecs[embedding.SpaceTags], ix.vecs[embedding.SpaceContent]
	if ch.all {
		paths, hays := make([]string, len(ch.hays)), make([]string, len(ch.hays))
		for i, h := range ch.hays {
			paths[i], hays[i] = h[0], h[1]
		}
		ix.tags.Reset()
		ix.tags.SetBatch(index.NewTagBatch(paths, hays))
		tags.Reset()
		content.Reset()
	} else {
		found := make(map[string]bool, len(ch.hays))
		for _, h := range ch.hays {
			found[h[0]] = true
		}
		changed := make(map[string]bool, len(ch.paths))
		var gone []string
		for _, p := range ch.paths {
			changed[p] = true
			if !found[p] {
				gone = append(gone, p)
			}
		}
		ix.tags.Apply(gone, ch.hays)
		for _, p := range ch.paths {
			tags.Delete(p)
		}
		content.DeleteFunc(func(k string) bool {
			i := strings.LastIndexByte(k, '#')
			return i >= 0 && changed[k[:i]]
		})
	}
	for _, kv := range ch.tagVecs {
		tags.Set(kv.key, kv.vec)
	}
	for _, kv := range ch.chunks {
		content.Set(kv.key, kv.vec)
	}
	ix.logSeq = ch.head
	ix.memSeq++
}

// freshView runs fn with a read transaction and postings that match its
// rows: memory's when no other process changed the postings since it was
// loaded, else the postings as of the transaction (see the package's
// freshness notes). It never waits for this process's writer.
func (ix *Index) freshView(ctx context.Context, fn func(tx *sql.Tx, text, grep *postings.Index) error) error {
	for {
		ix.view.RLock()
		tx, err := ix.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // BEGIN DEFERRED
		if err != nil {
			ix.view.RUnlock()
			return err
		}
		gen, err := ix.readGen(ctx, tx) // the first read fixes the snapshot
		if err == nil && gen == ix.gen {
			err = fn(tx, ix.text, ix.grep)
			tx.Rollback()
			ix.view.RUnlock()
			return err
		}
		ix.view.RUnlock()
		if err != nil {
			tx.Rollback()
			return err
		}
		l, shared, err := ix.peerPostings(ctx, tx, gen)
		if err != nil {
			tx.Rollback()
			return err
		}
		if !shared && ix.install(l) {
			tx.Rollback()
			continue // memory now shows gen (or later)
		}
		if !shared {
			ix.peerMu.Lock()
			if ix.peer == nil || ix.peer.gen < l.gen {
				ix.peer = l
			}
			ix.peerMu.Unlock()
		}
		err = fn(tx, l.text, l.grep)
		tx.Rollback()
		return err
	}
}

// peerPostings returns the postings at generation gen, read in tx: the
// ones kept in peer (shared: used by other lookups too) or read now,
// decoding only segments neither memory nor peer holds.
func (ix *Index) peerPostings(ctx context.Context, tx *sql.Tx, gen int64) (*loaded, bool, error) {
	ix.peerMu.Lock()
	p := ix.peer
	ix.peerMu.Unlock()
	if p != nil && p.gen == gen {
		return p, true, nil
	}
	l, err := ix.readPostings(ctx, tx, false)
	if err != nil {
		return nil, false, err
	}
	if len(l.problems) > 0 {
		return nil, false, errors.New("postings written by another process: " + strings.Join(l.problems, "; "))
	}
	return &l, false, nil
}

// install makes l the in-memory postings, unless memory is at l's
// generation or later, when the write lock is free; it reports whether
// the lock was free. l must not be used afterwards.
func (ix *Index) install(l *loaded) bool {
	if !ix.wmu.TryLock() {
		return false
	}
	defer ix.wmu.Unlock()
	ix.view.Lock()
	defer ix.view.Unlock()
	if l.gen > ix.gen {
		ix.text.Load(l.text)
		ix.grep.Load(l.grep)
		ix.gen = l.gen
	}
	ix.peerMu.Lock()
	if ix.peer != nil && ix.peer.gen <= ix.gen {
		ix.peer = nil // memory holds it now
	}
	ix.peerMu.Unlock()
	return true
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

var _ index.PeerStore = (*Index)(nil)

// PeerChanges implements index.PeerStore over fresh_log: the paths other
// processes logged after since (each once; this process's own writes
// are left out, but for the oldest when it wrote much), or All when
// since is zero, when entries it needs were pruned or when a reset entry
// was logged. The cursor is the
// last fresh_log seq read plus one (so that it is not zero when the log
// is empty). One SELECT of max(seq) when nothing was logged, or only this
// process's writes.
func (ix *Index) PeerChanges(ctx context.Context, since index.Cursor) (index.Changes, error) {
	same := index.Changes{Next: since}
	var head int64
	if err := ix.logStmt.QueryRowContext(ctx).Scan(&head); err != nil {
		return same, storeErr("changes", "/", err)
	}
	seen := int64(since) - 1
	if since != 0 && head >= seen {
		if allOwn, _ := ix.ownEntries(seen, head); allOwn {
			return index.Changes{Next: index.Cursor(head + 1)}, nil
		}
	}
	tx, err := ix.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return same, storeErr("changes", "/", err)
	}
	defer tx.Rollback()
	var low int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0), coalesce(min(seq), 0) FROM fresh_log`).Scan(&head, &low); err != nil {
		return same, storeErr("changes", "/", err)
	}
	ch := index.Changes{Next: index.Cursor(head + 1)}
	if seen < 0 || head < seen || low > seen+1 {
		ch.All = true
		return ch, nil
	}
	allOwn, own := ix.ownEntries(seen, head)
	if allOwn {
		return ch, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT seq, path FROM fresh_log WHERE seq > ? AND seq <= ?`, seen, head)
	if err != nil {
		return same, storeErr("changes", "/", err)
	}
	defer rows.Close()
	dup := map[string]bool{}
	for rows.Next() {
		var seq int64
		var e string
		if err := rows.Scan(&seq, &e); err != nil {
			return same, storeErr("changes", "/", err)
		}
		if own(seq) {
			continue
		}
		if e == "" { // a reset entry
			return index.Changes{All: true, Next: ch.Next}, nil
		}
		eachLogged(e, func(p string) {
			if !dup[p] {
				dup[p] = true
				ch.Paths = append(ch.Paths, p)
			}
		})
	}
	if err := rows.Err(); err != nil {
		return same, storeErr("changes", "/", err)
	}
	return ch, nil
}
