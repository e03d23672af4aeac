package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
)

// change says which in-memory state a committed write affects. It is
// applied locally after commit and sent to other daemons with NOTIFY, where
// it is applied the same way: by reloading the affected rows.
type change struct {
	Node    string   `json:"n,omitempty"`
	Gen     int64    `json:"g,omitempty"` // the write's generation (fresh.go)
	End     bool     `json:"e,omitempty"` // the write's last notification
	Reload  bool     `json:"r,omitempty"` // reload everything
	Paths   []string `json:"p,omitempty"` // reload these files' tag data and chunk vectors
	Removed []string `json:"d,omitempty"` // drop these paths and everything below them (the paths of removed rows)
	Space   string   `json:"s,omitempty"` // with Keys: reload these vectors of Space
	Keys    []string `json:"k,omitempty"`
}

// maxPayload keeps NOTIFY payloads under PostgreSQL's 8000-byte limit.
const maxPayload = 7000

// payloads encodes ch as one or more NOTIFY payloads, each under
// maxPayload: a change naming many rows (a bulk Put or embedding batch) is
// split into parts that, applied in order, have its effect — removals, then
// reloaded paths, then reloaded vectors — so other daemons reload only those
// rows rather than everything. Every part carries the write's generation;
// the last says it is the last.
func (ch *change) payloads() []string {
	whole := *ch
	whole.End = true
	if b, _ := json.Marshal(whole); len(b) <= maxPayload {
		return []string{string(b)}
	}
	var parts []change
	split := func(items []string, mk func([]string) change) {
		var part []string
		size := 0
		flush := func() {
			if len(part) > 0 {
				parts = append(parts, mk(part))
				part, size = nil, 0
			}
		}
		for _, it := range items {
			n := len(it) + 8 // quotes, comma, escapes of common characters
			if len(it) > maxPayload/2 {
				// One name too long for a payload: reload everything.
				parts = append(parts, change{Reload: true})
				continue
			}
			if size+n > maxPayload-200 {
				flush()
			}
			part = append(part, it)
			size += n
		}
		flush()
	}
	split(ch.Removed, func(p []string) change { return change{Removed: p} })
	split(ch.Paths, func(p []string) change { return change{Paths: p} })
	split(ch.Keys, func(k []string) change { return change{Space: ch.Space, Keys: k} })
	out := make([]string, len(parts))
	for i, p := range parts {
		p.Node, p.Gen, p.End = ch.Node, ch.Gen, i == len(parts)-1
		b, _ := json.Marshal(p)
		out[i] = string(b)
	}
	return out
}

// writeAttempts bounds the runs of a write transaction PostgreSQL aborts
// as a deadlock or a serialization failure. The writers of this package
// take their locks in one order (see pathLocks), so among them neither
// happens; another client of the database (a daemon of an older version
// during an upgrade, a script) may still take locks in another order, and
// the aborted transaction changed nothing, so it is run again rather than
// failing the user's write.
const writeAttempts = 3

// retryable reports whether err aborted a transaction that may simply be
// run again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001") // deadlock_detected, serialization_failure
}

// write runs fn in a transaction, notifies other daemons of its change in
// the same transaction (delivered at commit), and applies it locally. A
// transaction PostgreSQL aborts as a deadlock is run again, fn included
// (see writeAttempts).
func (ix *Index) write(ctx context.Context, op, path string, fn func(tx pgx.Tx) (*change, error)) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	var ch *change
	var err error
	for attempt := 1; ; attempt++ {
		ch = nil
		err = ix.writeTx(ctx, fn, &ch)
		if err == nil || attempt == writeAttempts || !retryable(err) || ctx.Err() != nil {
			break
		}
		ix.rerun.Add(1)
		ix.log.Warn("index: PostgreSQL aborted a write waiting for another client's locks; running it again", "op", op, "path", path, "err", err)
	}
	if err != nil {
		return ix.storeErr(op, path, err)
	}
	if ch != nil {
		if h := ix.testHookCommitted.Load(); h != nil {
			(*h)(ch.Gen)
		}
		if err := ix.apply(context.WithoutCancel(ctx), ch); err != nil {
			ix.log.Warn("index: refreshing in-memory state failed; it is reloaded on the next change", "err", err)
		}
		ix.fresh.ownApplied(ch.Gen)
	}
	return nil
}

// writeTx runs fn and the change's bookkeeping in one transaction and
// sets *ch to the change committed, if any.
func (ix *Index) writeTx(ctx context.Context, fn func(tx pgx.Tx) (*change, error), ch **change) error {
	return pgx.BeginFunc(ctx, ix.pool, func(tx pgx.Tx) error {
		c, err := fn(tx)
		if err != nil || c == nil {
			return err
		}
		*ch = c
		if err != nil || ch == nil {
			return err
		}
		c.Node = ix.node
		if err := tx.QueryRow(ctx, `UPDATE semfs_gen SET n = n + 1 WHERE id = 1 RETURNING n`).Scan(&c.Gen); err != nil {
			return err
		}
		for _, payload := range c.payloads() {
			if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, payload); err != nil {
				return err
			}
		}
		// Logged before the commit: from the commit on, this daemon's
		// listener may receive the notification and move the generation
		// PeerChanges reports up to past this write. A write that then
		// fails (or whose commit's outcome is unknown) leaves paths that
		// may not have changed, which costs a reader a re-read.
		ix.peers.record(c)
		return nil
	})
}

// Put implements index.Store. It takes the path locks of its items'
// paths first (see pathLocks), so a Put of a row, such as Reconcile's of
// a file written behind the layer, and another daemon's Update building
// that row from nothing commit one after the other instead of the later
// overwriting the earlier.
func (ix *Index) Put(ctx context.Context, items ...index.Item) error {
	if len(items) == 0 {
		return nil
	}
	// Rows are written in path order, as every writer locks them (a
	// stable sort: of two items for one path the last still wins).
	items = slices.Clone(items)
	slices.SortStableFunc(items, func(a, b index.Item) int { return strings.Compare(a.File.Path, b.File.Path) })
	paths := make([]string, len(items))
	for i, it := range items {
		paths[i] = it.File.Path
	}
	paths = slices.Compact(paths)
	return ix.write(ctx, "index", items[0].File.Path, func(tx pgx.Tx) (*change, error) {
		b := &pgx.Batch{}
		queuePathLocks(b, paths, false)
		if err := execBatch(ctx, tx, b); err != nil {
			return nil, err
		}
		return ix.putAll(ctx, tx, items)
	})
}

// execBatch sends b in tx and checks each of its statements.
func execBatch(ctx context.Context, tx pgx.Tx, b *pgx.Batch) error {
	res := tx.SendBatch(ctx, b)
	for range b.Len() {
		if _, err := res.Exec(); err != nil {
			res.Close()
			return err
		}
	}
	return res.Close()
}

// putAll puts items in tx; the change names their paths. The files rows
// are written in the order of items (Put's: path order; Update's are
// locked already), then the chunks of the files with content are locked
// and deleted in key order in one statement, as every writer of chunks
// locks them (see pathLocks), before the new ones are inserted. Of two
// items with content for one path, the last one's chunks are stored.
func (ix *Index) putAll(ctx context.Context, tx pgx.Tx, items []index.Item) (*change, error) {
	ch := &change{}
	ids := make([]int64, len(items))
	last := map[string]int{} // path → index of its last item with content
	for i, it := range items {
		id, err := ix.putRow(ctx, tx, it)
		if err != nil {
			return nil, err
		}
		ids[i] = id
		ch.Paths = append(ch.Paths, it.File.Path)
		if it.Content != nil {
			last[it.File.Path] = i
		}
	}
	if len(last) == 0 {
		return ch, nil
	}
	paths := make([]string, 0, len(last))
	for p := range last {
		paths = append(paths, p)
	}
	kept, err := deleteChunks(ctx, tx, paths)
	if err != nil {
		return nil, err
	}
	for i, it := range items {
		if it.Content == nil || last[it.File.Path] != i {
			continue
		}
		if err := putContent(ctx, tx, it, ids[i], kept[it.File.Path]); err != nil {
			return nil, err
		}
	}
	return ch, nil
}

// deleteChunks deletes the chunks of paths, locking them in key order
// first, and returns the vectors of those that had a fresh one, by path
// and text.
func deleteChunks(ctx context.Context, tx pgx.Tx, paths []string) (map[string]map[string][]float32, error) {
	rows, err := tx.Query(ctx, `DELETE FROM chunks WHERE id IN (SELECT id FROM chunks WHERE path = ANY($1) ORDER BY key FOR UPDATE)
		RETURNING path, text, vec, fresh`, paths)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	kept := map[string]map[string][]float32{}
	for rows.Next() {
		var path, text string
		var vec []float32
		var fresh bool
		if err := rows.Scan(&path, &text, &vec, &fresh); err != nil {
			return nil, err
		}
		if fresh && len(vec) > 0 {
			if kept[path] == nil {
				kept[path] = map[string][]float32{}
			}
			kept[path][text] = vec
		}
	}
	return kept, rows.Err()
}

var _ index.UpdatingStore = (*Index)(nil)

// Path locks. FOR UPDATE locks only rows that exist, so every writer of
// rows it may create (Update, Put, Rename) first takes a transaction lock
// on each such path (class pathLocks, key the path's hash): an Update of a
// path without a row, such as a daemon's tag of a file whose first row
// another daemon is writing, then waits for the other's commit and reads
// the row it wrote, instead of both building the row from nothing and the
// later overwriting the earlier (its groups lost, the file public). A lock
// per path uses an entry of the server's shared lock table
// (max_locks_per_transaction per connection), so a write of more than
// manyPaths paths, or of paths not known before its rows are read (a
// directory's Rename), takes allPathsLock exclusively instead, which every
// other such write holds shared.
//
// Lock order, the same in every writer, so none waits for another in a
// cycle: allPathsLock, then the path locks in ascending key order, then
// rows of files in path order (one statement, ORDER BY path FOR UPDATE, or
// a Put's items sorted by path), then rows of chunks in key order (one
// statement, ORDER BY key FOR UPDATE, over all the files the write
// changes: putAll, deleteRows, rename), then the semfs_gen row (in write).
// No advisory lock is taken after a row lock.
//
// A writer of files rows (but for the embedding writes and rebuildDerived,
// below) holds the path locks of every row it locks, or allPathsLock
// exclusively, before it locks the row, so no other writer moves the row
// meanwhile. A statement locking the rows of a range
// (WHERE path >= …) without them would lock, under READ COMMITTED, the
// newest version of a row a Rename moved after the statement's snapshot,
// at its old place in the statement's path order, and so out of path
// order. A writer of a range therefore reads its rows' paths first without
// a lock, takes their path locks, and locks the rows at those paths
// (lockRows). The chunks, grep and links rows of a file are written only
// by a writer holding its files row, by the embedding writes and by
// rebuildDerived.
//
//   - Put, Update, RemoveIf and a file's Remove take allPathsLock shared
//     and the path locks of their paths; a subtree's Remove and Rename
//     take those of the rows they read first (lockRows), or allPathsLock
//     alone, exclusively; Load takes it exclusively.
//   - The embedding writes take no advisory lock: SetEmbeddings updates its
//     rows in key order (path order for files rows), whatever order they
//     are given in, one row per statement, so a moved row is not locked;
//     WipeVectors takes its table's EXCLUSIVE lock before updating every
//     row of it.
//   - rebuildDerived takes 74232 (one rebuild at a time) and then the files
//     table's ACCESS EXCLUSIVE lock, before it drops the derived tables
//     and updates every files row, and no path lock (a writer may hold a
//     lock on files while it waits for its path locks: see below).
//   - 74231 is session-level, held only by migrate, which runs nothing
//     else meanwhile.
//
// Table locks: every statement locks the tables it names, weakly (ACCESS
// SHARE, ROW SHARE, ROW EXCLUSIVE: none conflicts with another), when it
// runs, and also when pgx prepares it, which it does for a connection's
// first use of a statement in the transaction, before the batch holding
// it runs: Update's read of its rows then holds a lock on files before it
// waits for its path locks, as does the read lockRows makes first. A
// strong table lock (rebuildDerived's, WipeVectors') is the first
// statement of its transaction that names a table, sent in a round trip
// of its own (after rebuildDerived's 74232, which only a rebuild takes),
// so that no statement prepared with it holds a weak lock on the table
// meanwhile: it holds no lock a writer waits for while it waits for its
// own. A writer queued behind one of them while holding what a writer it
// waits for needs is let go first by PostgreSQL's deadlock check (after
// deadlock_timeout), which aborts none.
const (
	pathLocks    = 74233 // class of the (class, hash) locks; 74231 and 74232 are single-key locks
	allPathsLock = 74234
	manyPaths    = 256
)

// queuePathLocks queues on b the advisory locks of a write of paths (any
// order, repeats allowed), or with all the lock of all paths alone.
func queuePathLocks(b *pgx.Batch, paths []string, all bool) {
	if all || len(paths) > manyPaths {
		b.Queue(`SELECT pg_advisory_xact_lock($1::int8)`, allPathsLock)
		return
	}
	b.Queue(`SELECT pg_advisory_xact_lock_shared($1::int8)`, allPathsLock)
	// unnest yields the keys in order, and each key's lock is taken
	// before the next key is read.
	b.Queue(`SELECT pg_advisory_xact_lock($1::int4, k) FROM unnest($2::int4[]) AS k`, pathLocks, pathKeys(paths))
}

// lockFileRows takes the path locks of sorted (paths sorted, without
// repeats) and the rows at them, in path order, so that two writes of the
// same rows cannot wait for each other, and returns the rows by path. The
// locks and the read go in one round trip.
func lockFileRows(ctx context.Context, tx pgx.Tx, sorted []string) (map[string]index.File, error) {
	b := &pgx.Batch{}
	queuePathLocks(b, sorted, false)
	b.Queue(`SELECT `+fileCols+` FROM files WHERE path = ANY($1) ORDER BY path FOR UPDATE`, sorted)
	files, err := lockedRows(ctx, tx, b, b.Len()-1, scanFileRow)
	if err != nil {
		return nil, err
	}
	stored := make(map[string]index.File, len(files))
	for _, f := range files {
		stored[f.Path] = f
	}
	return stored, nil
}

// pathKeys returns the lock keys of paths, sorted and without repeats:
// taken in that order, two Updates of overlapping paths cannot wait for
// each other.
func pathKeys(paths []string) []int32 {
	keys := make([]int32, 0, len(paths))
	for _, p := range paths {
		h := fnv.New32a()
		h.Write([]byte(p))
		keys = append(keys, int32(h.Sum32()))
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// Update implements index.UpdatingStore: the paths are locked (see
// pathLocks) and their rows read with FOR UPDATE in the transaction that
// writes build's items, so a write of one of them by another daemon (or
// this one) through Update, Put, Rename or Remove commits before the
// read or waits for this transaction, whether or not the row exists yet.
// build's items name paths among paths; others would be written without
// their locks.
func (ix *Index) Update(ctx context.Context, paths []string, build func(stored map[string]index.File) ([]index.Item, error)) error {
	if len(paths) == 0 {
		return nil
	}
	sorted := slices.Clone(paths)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	return ix.write(ctx, "index", paths[0], func(tx pgx.Tx) (*change, error) {
		stored, err := lockFileRows(ctx, tx, sorted)
		if err != nil {
			return nil, err
		}
		items, err := build(stored)
		if err != nil || len(items) == 0 {
			return nil, err
		}
		return ix.putAll(ctx, tx, items)
	})
}

func list(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func kvmap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// putRow writes the files row of it and its links, and returns the row's
// id.
func (ix *Index) putRow(ctx context.Context, tx pgx.Tx, it index.Item) (int64, error) {
	f := it.File
	if hasNUL(f.Meta) {
		return 0, semfs.PathErr("index", f.Path, semfs.ErrInvalid, "a tag value contains a NUL byte; remove it and tag again")
	}
	state := f.State
	if state == "" {
		state = index.StatePending
	}
	keepGrep := it.Content == nil
	grepOK := it.Content != nil && it.Content.GrepOK
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO files (path, created_by, task, related_apps, summary, links, provenance, extra,
		groups, public, created_at, updated_at, size, hash, mtime, state, reason, ext, grep_ok, tag_text, tag_hay, tag_fresh)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,false)
		ON CONFLICT(path) DO UPDATE SET created_by=excluded.created_by, task=excluded.task,
		related_apps=excluded.related_apps, summary=excluded.summary, links=excluded.links,
		provenance=excluded.provenance, extra=excluded.extra, groups=excluded.groups,
		public=excluded.public, created_at=excluded.created_at, updated_at=excluded.updated_at,
		size=excluded.size, hash=excluded.hash, mtime=excluded.mtime, state=excluded.state,
		reason=excluded.reason, ext=excluded.ext,
		grep_ok=CASE WHEN $22 THEN files.grep_ok ELSE excluded.grep_ok END,
		tag_fresh=CASE WHEN files.tag_text = excluded.tag_text THEN files.tag_fresh ELSE false END,
		tag_vec=CASE WHEN files.tag_text = excluded.tag_text THEN files.tag_vec ELSE NULL END,
		tag_text=excluded.tag_text, tag_hay=excluded.tag_hay
		RETURNING id`,
		f.Path, f.CreatedBy, f.Task, list(f.RelatedApps), f.Summary, list(f.Links), f.Provenance, kvmap(f.Extra),
		list(f.Groups), f.Public, nanos(f.CreatedAt), nanos(f.UpdatedAt), f.Size, f.Hash, nanos(f.ModTime),
		state, f.Reason, index.Ext(f.Path), grepOK, it.TagText, tagHay(f.Meta), keepGrep).Scan(&id)
	if err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM links WHERE src = $1`, f.Path); err != nil {
		return 0, err
	}
	for _, l := range f.Links {
		if _, err := tx.Exec(ctx, `INSERT INTO links(dst, src) VALUES ($1, $2) ON CONFLICT DO NOTHING`, l, f.Path); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// putContent inserts the chunks and grep text of it, whose row is id and
// whose old chunks are deleted, keeping the vectors of unchanged texts.
func putContent(ctx context.Context, tx pgx.Tx, it index.Item, id int64, kept map[string][]float32) error {
	f := it.File
	pathText := index.IndexText(f.Path)
	for _, c := range it.Content.Chunks {
		vec := kept[c.Text]
		if _, err := tx.Exec(ctx, `INSERT INTO chunks(key, path, no, start_line, end_line, text, tsv, vec, fresh)
			VALUES ($1,$2,$3,$4,$5,$6, `+tsvSQL("$7", "$8")+`, $9, $10)`,
			index.ChunkKey(f.Path, c.No), f.Path, c.No, c.StartLine, c.EndLine, c.Text, pathText, index.IndexText(c.Text), vec, vec != nil); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM grep WHERE file_id = $1`, id); err != nil {
		return err
	}
	if it.Content.GrepOK {
		if _, err := tx.Exec(ctx, `INSERT INTO grep(file_id, body) VALUES ($1, $2)`, id, strings.ToLower(it.Content.Grep)); err != nil {
			return err
		}
	}
	return nil
}

// Remove implements index.Store. It follows the lock order (see
// pathLocks): it takes the path locks of the rows it removes before it
// locks them, which for a subtree means reading their paths first (see
// lockRows).
func (ix *Index) Remove(ctx context.Context, path string, subtree bool) error {
	known, cond, args := []string{path}, "", []any(nil)
	if subtree {
		known = nil
		cond, args = below("path", path, 1)
	}
	widen := false
	err := ix.remove(ctx, path, known, cond, args, false, &widen)
	if widen {
		err = ix.remove(ctx, path, known, cond, args, true, &widen)
	}
	return err
}

func (ix *Index) remove(ctx context.Context, path string, known []string, cond string, args []any, all bool, widen *bool) error {
	return ix.write(ctx, "remove", path, func(tx pgx.Tx) (*change, error) {
		locked, err := ix.lockRows(ctx, tx, all, known, cond, args, nil, nil, widen)
		if err != nil || len(locked) == 0 {
			return nil, err
		}
		paths, err := deleteRows(ctx, tx, locked)
		if err != nil || len(paths) == 0 {
			return nil, err
		}
		return &change{Removed: paths}, nil
	})
}

// errWiden rolls back a write that found, holding the path locks of the
// rows it read first, rows at other paths (see lockRows): it is run again
// holding the lock of all paths.
var errWiden = errors.New("rows changed between the read and the locks")

// lockRows takes the advisory locks of a write (see pathLocks) and then
// locks, in path order, the files rows it changes: those at the paths
// known and those cond (with args; empty: none) finds, a condition every
// row at a path of known meets. A range's rows are read once without a
// lock, so that their path locks are taken before their rows, as every
// writer takes them: a row another write moved into or within the range
// meanwhile would otherwise be locked as its newest version, which may
// sort elsewhere (FOR UPDATE follows a committed update under READ
// COMMITTED), out of path order. A write of many rows (manyPaths), one
// for which wide reports one of the rows read (a directory's Rename),
// and a write with all take the lock of all paths instead, which every
// other such write holds shared, and lock the range's rows as they stand.
// If, holding the path locks, the range holds a row at a path not read
// first (written or moved there meanwhile), lockRows sets *widen and
// returns errWiden: the transaction rolls back and runs again with all.
// then, if not nil, queues statements that run after the rows are locked,
// in the same round trip, given whether all paths are locked and the
// paths of the rows to lock (with all, every row cond finds). lockRows
// returns the paths of the rows locked, sorted.
func (ix *Index) lockRows(ctx context.Context, tx pgx.Tx, all bool, known []string, cond string, args []any, wide func(string) bool, then func(b *pgx.Batch, all bool, paths []string), widen *bool) ([]string, error) {
	*widen = false
	paths := slices.Clone(known)
	if !all && cond != "" {
		rows, err := tx.Query(ctx, `SELECT path FROM files WHERE `+cond, args...)
		if err != nil {
			return nil, err
		}
		found, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, err
		}
		paths = append(paths, found...)
		all = len(paths) > manyPaths || wide != nil && slices.ContainsFunc(found, wide)
		if h := ix.testHookRangeRead.Load(); h != nil {
			(*h)()
		}
	}
	b := &pgx.Batch{}
	if all {
		queuePathLocks(b, nil, true)
		b.Queue(`SELECT path FROM files WHERE `+cond+` ORDER BY path FOR UPDATE`, args...)
		q := b.Len() - 1
		if then != nil {
			then(b, true, nil)
		}
		return lockedRows(ctx, tx, b, q, pgx.RowTo[string])
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	if len(paths) == 0 {
		return nil, nil
	}
	queuePathLocks(b, paths, false)
	b.Queue(`SELECT path FROM files WHERE path = ANY($1) ORDER BY path FOR UPDATE`, paths)
	q := b.Len() - 1
	if then != nil {
		then(b, false, paths)
	}
	if cond == "" {
		return lockedRows(ctx, tx, b, q, pgx.RowTo[string])
	}
	// The range read again, holding the locks, in the same round trip.
	b.Queue(`SELECT path FROM files WHERE `+cond, args...)
	res := tx.SendBatch(ctx, b)
	defer res.Close()
	var locked []string
	for i := range b.Len() {
		if i != q && i != b.Len()-1 {
			if _, err := res.Exec(); err != nil {
				return nil, err
			}
			continue
		}
		rows, err := res.Query()
		if err != nil {
			return nil, err
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, err
		}
		if i == q {
			locked = got
			continue
		}
		for _, p := range got {
			if _, ok := slices.BinarySearch(paths, p); !ok || wide != nil && wide(p) {
				*widen = true
				return nil, errWiden
			}
		}
	}
	return locked, res.Close()
}

// deleteRows deletes the files rows at paths, which the transaction
// holds the path locks of, with their chunks and links, locking the rows
// in path order and then the chunks in key order (see pathLocks), and
// returns the paths of the rows it deleted.
func deleteRows(ctx context.Context, tx pgx.Tx, paths []string) ([]string, error) {
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM files WHERE path IN (SELECT path FROM files WHERE path = ANY($1) ORDER BY path FOR UPDATE) RETURNING path`, paths)
	b.Queue(`DELETE FROM chunks WHERE id IN (SELECT id FROM chunks WHERE path = ANY($1) ORDER BY key FOR UPDATE)`, paths)
	b.Queue(`DELETE FROM links WHERE src = ANY($1)`, paths)
	return lockedRows(ctx, tx, b, 0, pgx.RowTo[string])
}

var _ index.RemovingStore = (*Index)(nil)

// RemoveIf implements index.RemovingStore. It takes the path locks of
// paths and reads their rows FOR UPDATE in path order, as Update does, so
// gone decides on the rows as the writes of every daemon committed them,
// and a write of one of them (or of a path without a row) by another
// daemon waits for this transaction. The rows gone returns are removed
// alone, as Remove removes a path without its subtree; the change names
// them as reloaded paths rather than removed ones, which other daemons
// would drop from memory with every row below them. A path gone returns
// that is not among paths is refused (its row was not read, nor its path
// locked); one among them without a row is skipped.
func (ix *Index) RemoveIf(ctx context.Context, paths []string, gone func(stored map[string]index.File) ([]string, error)) error {
	if len(paths) == 0 {
		return nil
	}
	sorted := slices.Clone(paths)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	var goneErr error // returned as it is, for errors.Is, which storeErr's wrapping would hide
	err := ix.write(ctx, "remove", paths[0], func(tx pgx.Tx) (*change, error) {
		goneErr = nil
		stored, err := lockFileRows(ctx, tx, sorted)
		if err != nil {
			return nil, err
		}
		drop, err := gone(stored)
		if err != nil {
			goneErr = err
			return nil, err
		}
		var rm []string
		for _, p := range drop {
			if _, ok := slices.BinarySearch(sorted, p); !ok {
				goneErr = semfs.PathErr("remove", p, semfs.ErrInvalid, "the removal was decided without reading this path's row")
				return nil, goneErr
			}
			if _, ok := stored[p]; ok {
				rm = append(rm, p)
			}
		}
		if len(rm) == 0 {
			return nil, nil
		}
		slices.Sort(rm)
		removed, err := deleteRows(ctx, tx, slices.Compact(rm))
		if err != nil || len(removed) == 0 {
			return nil, err
		}
		return &change{Paths: removed}, nil
	})
	if goneErr != nil {
		return goneErr
	}
	return err
}

// Rename implements index.Store. It locks, following the lock order (see
// lockRows), the rows it changes: those at and below either path and
// those linking to a moved one, and then, in key order, their chunks. A
// file's Rename takes the path locks of both paths and of the rows it
// found linking to the old one; a directory's (rows found below either
// path) takes the lock of all paths, since its rows move to paths not
// known before they are read: a move onto a path whose first row another
// daemon's Update or Put is building then waits for that write's commit
// and replaces its row, instead of being overwritten by it (the moved
// file's groups lost, the file public).
func (ix *Index) Rename(ctx context.Context, oldpath, newpath string) error {
	if oldpath == newpath {
		return nil
	}
	widen := false
	err := ix.rename(ctx, oldpath, newpath, false, &widen)
	if widen {
		err = ix.rename(ctx, oldpath, newpath, true, &widen)
	}
	return err
}

func (ix *Index) rename(ctx context.Context, oldpath, newpath string, all bool, widen *bool) error {
	return ix.write(ctx, "rename", oldpath, func(tx pgx.Tx) (*change, error) {
		ocond, oargs := below("path", oldpath, 1)
		ncond, nargs := below("path", newpath, 1+len(oargs))
		lcond, _ := below("dst", oldpath, 1)
		cond := ocond + ` OR ` + ncond + ` OR path IN (SELECT src FROM links WHERE ` + lcond + `)`
		args := append(oargs, nargs...)
		wide := func(p string) bool {
			return p != oldpath && semfs.HasPrefix(p, oldpath) || p != newpath && semfs.HasPrefix(p, newpath)
		}
		// After the rows, the chunks of those it moves or replaces, in
		// key order, in one statement: the ones it deletes and the ones
		// it moves together, as every writer of chunks locks them.
		lockChunks := func(b *pgx.Batch, all bool, _ []string) {
			if all {
				b.Queue(`SELECT 1 FROM chunks WHERE `+ocond+` OR `+ncond+` ORDER BY key FOR UPDATE`, args...)
				return
			}
			// No row below either path (lockRows widens on one).
			b.Queue(`SELECT 1 FROM chunks WHERE path = $1 OR path = $2 ORDER BY key FOR UPDATE`, oldpath, newpath)
		}
		lockedPaths, err := ix.lockRows(ctx, tx, all, []string{oldpath, newpath}, cond, args, wide, lockChunks, widen)
		if err != nil {
			return nil, err
		}
		locked := make(map[string]bool, len(lockedPaths))
		var replacedRows []string
		for _, p := range lockedPaths {
			locked[p] = true
			if semfs.HasPrefix(p, newpath) {
				replacedRows = append(replacedRows, p)
			}
		}
		var replaced []string
		if len(replacedRows) > 0 {
			if replaced, err = deleteRows(ctx, tx, replacedRows); err != nil {
				return nil, err
			}
		}
		rows, err := tx.Query(ctx, `SELECT `+fileCols+` FROM files WHERE `+ocond+` ORDER BY path`, oargs...)
		if err != nil {
			return nil, err
		}
		mv, err := pgx.CollectRows(rows, scanFileRow)
		if err != nil {
			return nil, err
		}
		ch := &change{Removed: replaced}
		for _, f := range mv {
			if !locked[f.Path] {
				// Written after the rows were locked, so after this
				// rename in the order of commits: it stays.
				continue
			}
			np := newpath + f.Path[len(oldpath):]
			m := f.Meta
			m.Path = np
			if _, err := tx.Exec(ctx, `UPDATE files SET path = $1, ext = $2, tag_text = $3, tag_hay = $4, tag_fresh = false, tag_vec = NULL WHERE path = $5`,
				np, index.Ext(np), index.TagText(m), tagHay(m), f.Path); err != nil {
				return nil, err
			}
			if _, err := tx.Exec(ctx, `UPDATE links SET src = $1 WHERE src = $2`, np, f.Path); err != nil {
				return nil, err
			}
			// Chunks move with the file; their full-text rows carry the path.
			crows, err := tx.Query(ctx, `SELECT id, no, text FROM chunks WHERE path = $1 ORDER BY no`, f.Path)
			if err != nil {
				return nil, err
			}
			type chunkRow struct {
				id   int64
				no   int
				text string
			}
			chs, err := pgx.CollectRows(crows, func(r pgx.CollectableRow) (chunkRow, error) {
				var c chunkRow
				err := r.Scan(&c.id, &c.no, &c.text)
				return c, err
			})
			if err != nil {
				return nil, err
			}
			pathText := index.IndexText(np)
			for _, c := range chs {
				if _, err := tx.Exec(ctx, `UPDATE chunks SET path = $1, key = $2,
					tsv = `+tsvSQL("$3", "$4")+` WHERE id = $5`,
					np, index.ChunkKey(np, c.no), pathText, index.IndexText(c.text), c.id); err != nil {
					return nil, err
				}
			}
			ch.Removed = append(ch.Removed, f.Path)
			ch.Paths = append(ch.Paths, np)
			locked[np] = true // the moved row, still locked
		}
		// Rewrite links that point at a moved path, in every file holding one.
		lcond, largs := below("dst", oldpath, 1)
		lrows, err := tx.Query(ctx, `SELECT DISTINCT src FROM links WHERE `+lcond, largs...)
		if err != nil {
			return nil, err
		}
		srcs, err := pgx.CollectRows(lrows, pgx.RowTo[string])
		if err != nil {
			return nil, err
		}
		for _, src := range srcs {
			if !locked[src] {
				// Linked after the rows were locked: after this rename.
				continue
			}
			var links []string
			if err := tx.QueryRow(ctx, `SELECT links FROM files WHERE path = $1`, src).Scan(&links); err != nil {
				if err == pgx.ErrNoRows {
					continue
				}
				return nil, err
			}
			for i, dst := range links {
				if semfs.HasPrefix(dst, oldpath) {
					links[i] = newpath + dst[len(oldpath):]
				}
			}
			if _, err := tx.Exec(ctx, `UPDATE files SET links = $1 WHERE path = $2`, links, src); err != nil {
				return nil, err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM links WHERE src = $1`, src); err != nil {
				return nil, err
			}
			for _, dst := range links {
				if _, err := tx.Exec(ctx, `INSERT INTO links(dst, src) VALUES ($1, $2) ON CONFLICT DO NOTHING`, dst, src); err != nil {
					return nil, err
				}
			}
		}
		return ch, nil
	})
}

// apply brings the in-memory state in line with a committed change by
// reloading the rows it names.
func (ix *Index) apply(ctx context.Context, ch *change) error {
	if ch.Reload {
		return ix.load(ctx)
	}
	if len(ch.Removed) > 0 {
		ix.forget(ch.Removed)
	}
	if len(ch.Paths) > 0 {
		if err := ix.reloadPaths(ctx, ch.Paths); err != nil {
			return err
		}
	}
	if ch.Space != "" && len(ch.Keys) > 0 {
		return ix.reloadVectors(ctx, ch.Space, ch.Keys)
	}
	return nil
}

// forget drops paths (and everything below them) from memory.
func (ix *Index) forget(paths []string) {
	under := func(p string) bool {
		for _, r := range paths {
			if semfs.HasPrefix(p, r) {
				return true
			}
		}
		return false
	}
	ix.tmu.Lock()
	for p := range ix.tags {
		if under(p) {
			delete(ix.tags, p)
		}
	}
	ix.tmu.Unlock()
	ix.vecs[embedding.SpaceTags].DeleteFunc(under)
	ix.vecs[embedding.SpaceContent].DeleteFunc(func(k string) bool {
		i := strings.LastIndexByte(k, '#')
		return i >= 0 && under(k[:i])
	})
}

func (ix *Index) reloadPaths(ctx context.Context, paths []string) error {
	rows, err := ix.pool.Query(ctx, `SELECT path, tag_hay, tag_vec FROM files WHERE path = ANY($1)`, paths)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	type row struct {
		p, hay string
		vec    []float32
	}
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.p, &r.hay, &r.vec); err != nil {
			rows.Close()
			return err
		}
		got = append(got, r)
		seen[r.p] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if h := ix.testHookReloadRead.Load(); h != nil {
		(*h)()
	}
	tags := ix.vecs[embedding.SpaceTags]
	ix.tmu.Lock()
	for _, p := range paths {
		if !seen[p] {
			delete(ix.tags, p)
		}
	}
	for _, r := range got {
		ix.tags[r.p] = r.hay
	}
	ix.tmu.Unlock()
	for _, p := range paths {
		tags.Delete(p)
	}
	for _, r := range got {
		if len(r.vec) > 0 {
			tags.Set(r.p, r.vec)
		}
	}
	set := map[string]bool{}
	for _, p := range paths {
		set[p] = true
	}
	content := ix.vecs[embedding.SpaceContent]
	content.DeleteFunc(func(k string) bool {
		i := strings.LastIndexByte(k, '#')
		return i >= 0 && set[k[:i]]
	})
	crows, err := ix.pool.Query(ctx, `SELECT key, vec FROM chunks WHERE path = ANY($1) AND vec IS NOT NULL`, paths)
	if err != nil {
		return err
	}
	defer crows.Close()
	for crows.Next() {
		var k string
		var vec []float32
		if err := crows.Scan(&k, &vec); err != nil {
			return err
		}
		content.Set(k, vec)
	}
	return crows.Err()
}

func (ix *Index) reloadVectors(ctx context.Context, space string, keys []string) error {
	s, err := spaceOf(space)
	if err != nil {
		return err
	}
	v := ix.vecs[space]
	for _, k := range keys {
		v.Delete(k)
	}
	rows, err := ix.pool.Query(ctx, `SELECT `+s.Key+`, `+s.Vec+` FROM `+s.Table+` WHERE `+s.Key+` = ANY($1) AND `+s.Vec+` IS NOT NULL`, keys)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var vec []float32
		if err := rows.Scan(&k, &vec); err != nil {
			return err
		}
		v.Set(k, vec)
	}
	return rows.Err()
}

// listen starts the goroutine that applies other daemons' changes.
func (ix *Index) listen(ctx context.Context) error {
	conn, err := ix.pool.Acquire(ctx)
	if err != nil {
		return ix.storeErr("open index", "/", err)
	}
	if _, err := conn.Exec(ctx, `LISTEN `+channel); err != nil {
		conn.Release()
		return ix.storeErr("open index", "/", err)
	}
	lctx, cancel := context.WithCancel(context.Background())
	ix.listenCancel = cancel
	ix.listenDone = make(chan struct{})
	go ix.listenLoop(lctx, conn)
	return nil
}

func (ix *Index) listenLoop(ctx context.Context, conn interface {
	Release()
	Conn() *pgx.Conn
}) {
	defer close(ix.listenDone)
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			conn.Release()
			if ctx.Err() != nil {
				return
			}
			// The connection broke (server restart): reconnect, then reload
			// everything, since notifications were missed meanwhile.
			ix.log.Warn("index: lost the PostgreSQL notification connection; reconnecting", "err", scrub(err, ix.dsn))
			for {
				select {
				case <-ctx.Done():
					return
				case <-timeAfter(500):
				}
				c, err := ix.pool.Acquire(ctx)
				if err != nil {
					continue
				}
				if _, err := c.Exec(ctx, `LISTEN `+channel); err != nil {
					c.Release()
					continue
				}
				conn = c
				break
			}
			ix.wmu.Lock()
			if err := ix.loadAt(ctx); err != nil {
				ix.log.Warn("index: reload after reconnect failed", "err", err)
			}
			ix.wmu.Unlock()
			continue
		}
		var ch change
		if err := json.Unmarshal([]byte(n.Payload), &ch); err != nil {
			continue
		}
		if ch.Node != ix.node {
			// Under the writer's lock, as this daemon's own writes apply
			// theirs: rows read here before an own write committed must
			// not land in memory after that write's newer ones (the
			// generation check would then call memory caught up).
			ix.wmu.Lock()
			ix.peers.record(&ch)
			if err := ix.apply(ctx, &ch); err != nil && ctx.Err() == nil {
				ix.log.Warn("index: applying another daemon's change failed; reloading", "err", err)
				ix.load(ctx)
			}
			ix.wmu.Unlock()
		}
		if ch.End {
			ix.fresh.advance(ch.Gen)
		}
	}
}

// lockedRows sends b, whose statements take locks, in one round trip, and
// collects with scan the rows of its statement number q.
func lockedRows[T any](ctx context.Context, tx pgx.Tx, b *pgx.Batch, q int, scan pgx.RowToFunc[T]) ([]T, error) {
	res := tx.SendBatch(ctx, b)
	var out []T
	for i := range b.Len() {
		if i != q {
			if _, err := res.Exec(); err != nil {
				res.Close()
				return nil, err
			}
			continue
		}
		rows, err := res.Query()
		if err == nil {
			out, err = pgx.CollectRows(rows, scan)
		}
		if err != nil {
			res.Close()
			return nil, err
		}
	}
	return out, res.Close()
}
