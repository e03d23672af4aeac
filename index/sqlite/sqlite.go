// Package sqlite is the embedded index store: one SQLite file in WAL mode
// (modernc.org/sqlite, pure Go) holding the metadata of record and the
// derived data semfs searches.
//
// # Durability
//
// The database runs with journal_mode=WAL and synchronous=FULL: when Put,
// Remove or Rename returns, the metadata is on stable storage (see
// docs/bench/index.md for what that costs and why NORMAL was not chosen).
// Checkpoints are not needed for that, and run on a goroutine of their
// own rather than in the writer's commits (checkpoint.go).
//
// # Schema
//
// The store-of-record schema is versioned (SchemaVersion) and migrated by
// embedded SQL files applied in one transaction each. Derived tables
// (chunks, postings, postings_dead, vectors held in chunks and files)
// carry their own DerivedVersion: when it changes, when a derived table is
// missing, when a postings segment fails its checksum, or when counts
// disagree, Open rebuilds the derived schema and marks every file pending,
// so the meta layer re-indexes from bytes instead of answering from an
// empty table.
//
// # Full text and grep
//
// Full-text (BM25) and grep trigram postings are segments built in Go by
// index/postings, stored as BLOBs in the transaction that writes the rows
// they index, and searched in memory: Open loads them. Deletions are
// tombstones (postings_dead) until a merge drops them; a merge builds its
// segment without the write lock and takes it only to swap.
//
// # Several processes
//
// Several processes may open one file (a CLI command beside `semfs index
// --watch`, two daemons in tests). Every write transaction that changes
// the postings raises a generation counter in kv, inside the transaction
// (BEGIN IMMEDIATE, so writers serialise); a writer reads it first and
// reloads the in-memory postings when another process wrote since, before
// computing tombstones from them. A lookup reads it in the read
// transaction it then reads rows in and, when it changed, reads the
// postings at that snapshot (reusing the segments already decoded:
// segment ids are never given twice, nor chunk ids but by a renumbering,
// which gives every segment a new id) without waiting for this process's
// writer. The in-memory tag index and vectors follow fresh_log, a log of
// the paths whose tags or vectors changed: a lookup re-reads the rows of
// the paths other processes logged. So a process sees what another
// committed at its next lookup, at the cost of one small SELECT per
// lookup when nothing changed (fresh.go, docs/bench/freshness.md).
//
// # Ids
//
// Postings map documents to chunk and file ids as uint32. Chunk ids only
// count up and file ids grow with atomic saves, so when a write would
// give one past 2^32-1, Put renumbers both 1..n in one transaction,
// rewriting the segments with the new ids (see renumber.go), and writes
// again.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/postings"
)

// SchemaVersion is the version of the store-of-record schema.
//
//	1: files (tags as JSON columns, bookkeeping), links, kv.
//	2: files_task and files_created_by leave out the empty value.
const SchemaVersion = 2

// DerivedVersion is the version of the derived tables and of the analysis
// that fills them; bumping it rebuilds derived data on the next Open.
//
//	1: chunks + chunks_fts (porter, path+body), tags_fts and grep_fts (trigram).
//	2: grep_fts holds distinct folded trigrams as tokens (index.GrepTrigrams).
//	3: chunks_fts and grep_fts flush pending terms every 8 MiB (hashsize).
//	4: no tags_fts: the tag query's keyword points come from an in-memory
//	   index.TagIndex loaded from the files table.
//	5: no chunks_fts or grep_fts: full-text and grep trigram postings are
//	   index/postings segments in the postings table (same tokens, same
//	   BM25).
//	6: no chunks_path index: a path's chunks are found through the range of
//	   their keys (one B-tree fewer per chunk row written).
//	7: one index of chunks on (fresh, key) instead of a UNIQUE one on key
//	   and chunks_need on key WHERE fresh = 0 (one B-tree fewer per chunk
//	   row written); fresh is 0 or 1, and 1 where vec is set.
//	8: chunks have no path and no columns: both are in the key.
//	9: postings segments of format 2 (index/postings): a Text posting's
//	   commonest frequency pairs are coded in its gap's low bits, and a
//	   Trigram list denser than one document in eight is a bitmap.
const DerivedVersion = 9

// syncMode is the synchronous pragma of the metadata handle. FULL makes
// every metadata commit durable when it returns; benchmarks compare NORMAL.
var syncMode = "FULL"

//go:embed migrations/*.sql
var migrations embed.FS

//go:embed derived.sql
var derivedSQL string

var derivedTables = []string{"chunks", "postings", "postings_dead"}

// retiredTables are derived tables of earlier DerivedVersions, dropped when
// the derived schema is rebuilt.
var retiredTables = []string{"tags_fts", "chunks_fts", "grep_fts"}

// Index is a Store backed by one SQLite file.
type Index struct {
	db *sql.DB
	// vdb is a second handle on the same file with synchronous=NORMAL, for
	// writes of derived data only (vectors, and merges of postings
	// segments): a commit there is not fsynced on its own (a crash may
	// lose it; the drain re-embeds, and a lost merge leaves the segments
	// it replaced), but the next FULL commit of db makes it durable too.
	// Writes on both handles are serialised by wmu.
	vdb *sql.DB
	// cdb is the checkpointer's handle; ckptKick tells it of commits
	// (checkpoint.go).
	cdb                *sql.DB
	ckptKick           chan struct{}
	ckptStop, ckptDone chan struct{}
	path               string
	wmu                sync.Mutex // serialises write transactions

	// view is held shared by readers over the in-memory postings and the
	// rows they read with them, and exclusively by a writer from its
	// commit until the memory shows it, so readers see both change at
	// once. gen (guarded by view, written holding wmu too) is the
	// generation of the postings in memory (see genKey).
	view sync.RWMutex
	gen  int64
	st   txState // of the write transaction (guarded by wmu)

	// The open write transaction and its prepared statements (guarded by
	// wmu; see stmt.go).
	curTx   *sql.Tx
	txDB    *sql.DB // the handle of writeOn's transaction (nil outside one)
	txStmts map[string]*sql.Stmt
	dbStmts map[string]*sql.Stmt // prepared on db (dbStmt)
	genStmt *sql.Stmt            // readGenSQL prepared on db
	logStmt *sql.Stmt            // logHeadSQL prepared on db

	// Freshness of tags and vectors (fresh.go), guarded by view: logSeq
	// is the fresh_log seq memory reflects, memSeq counts this process's
	// changes of them.
	logSeq, memSeq int64
	// ownSpans are the fresh_log entries (first-1, last] this process's
	// committed writes logged, which PeerChanges leaves out (guarded by
	// view).
	ownSpans [][2]int64

	// peer holds the postings of a generation another process wrote
	// while this process's writer held wmu (fresh.go).
	peerMu sync.Mutex
	peer   *loaded

	vecs map[string]*index.Vectors // per space, in memory

	tags *index.TagIndex // keyword points of the tag query (index.TagHay per file)

	seenMu sync.Mutex
	seen   *seenRows // what the last Files call read (see takeSeen)

	// text holds the full-text postings of chunks (documents: chunk ids),
	// grep the grep trigram postings of files (documents: file ids).
	text, grep *postings.Index
	merging    sync.WaitGroup // background merges (see merge.go)
	mergeMu    sync.Mutex     // one merge at a time
	mergeBusy  bool           // guarded by mergeMu: a merge goroutine runs
	closed     bool           // guarded by mergeMu

	// Repaired is set when Open found derived data inconsistent and
	// rebuilt the derived schema (every file is then pending).
	Repaired []string
}

var _ index.Store = (*Index)(nil)
var _ embedding.Store = (*Index)(nil)

// Open opens (creating if needed) the index at path, applies migrations,
// checks the derived tables and loads vectors into memory.
func Open(ctx context.Context, path string) (*Index, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, &fs.PathError{Op: "open index", Path: path, Err: err}
		}
	}
	// temp_store(MEMORY): a bulk INSERT or an upsert writes a statement
	// journal (to roll back that statement alone); in a temporary file,
	// its pwrite calls took 1 of the writer's 6.7 CPU s on 100 000 small files.
	// cache_spill(-32768): a transaction's changed pages stay in memory
	// up to 32 MiB before SQLite writes them to the WAL ahead of the
	// commit (the default, the 2 MB cache_size, spilled a batch of 8192
	// small files' pages, some twice); pages not changed by a write
	// transaction are still bounded by cache_size.
	// wal_autocheckpoint(0) and journal_size_limit: the checkpointer
	// copies the WAL into the database file, not the writer's commits
	// (checkpoint.go).
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(" + syncMode + ")&_pragma=temp_store(MEMORY)&_pragma=cache_spill(-32768)&_txlock=immediate"
	wdsn := dsn + "&_pragma=wal_autocheckpoint(0)&_pragma=journal_size_limit(" + strconv.Itoa(walJournalLimit) + ")"
	db, err := sql.Open("sqlite", wdsn)
	if err != nil {
		return nil, storeErr("open index", path, err)
	}
	db.SetMaxOpenConns(4)
	vdb, err := sql.Open("sqlite", strings.Replace(wdsn, "synchronous("+syncMode+")", "synchronous(NORMAL)", 1))
	if err != nil {
		db.Close()
		return nil, storeErr("open index", path, err)
	}
	vdb.SetMaxOpenConns(1)
	cdb, err := openCheckpointer(dsn)
	if err != nil {
		vdb.Close()
		db.Close()
		return nil, storeErr("open index", path, err)
	}
	ix := &Index{db: db, vdb: vdb, cdb: cdb, path: path, vecs: map[string]*index.Vectors{
		embedding.SpaceTags: index.NewVectors(), embedding.SpaceContent: index.NewVectors(),
	}, tags: index.NewTagIndex(), text: postings.New(postings.Text), grep: postings.New(postings.Trigram)}
	// Another process may be creating or migrating the same file right now
	// (a CLI command beside `semfs index --watch`); SQLite then answers
	// "database is locked" at once for the schema steps, so retry them.
	if err := retryBusy(ctx, func() error { return ix.migrate(ctx) }); err != nil {
		ix.Close()
		return nil, err
	}
	if err := retryBusy(ctx, func() (err error) {
		ix.genStmt, err = ix.db.PrepareContext(ctx, readGenSQL)
		return err
	}); err != nil {
		ix.Close()
		return nil, storeErr("open index", path, err)
	}
	if err := retryBusy(ctx, func() error { return ix.openDerived(ctx) }); err != nil {
		ix.Close()
		return nil, err
	}
	if err := retryBusy(ctx, func() error { return ix.ensureFresh(ctx) }); err != nil {
		ix.Close()
		return nil, err
	}
	if err := retryBusy(ctx, func() (err error) {
		ix.logStmt, err = ix.db.PrepareContext(ctx, logHeadSQL)
		return err
	}); err != nil {
		ix.Close()
		return nil, storeErr("open index", path, err)
	}
	if err := retryBusy(ctx, func() error { return ix.openPostings(ctx) }); err != nil {
		ix.Close()
		return nil, err
	}
	if err := ix.load(ctx); err != nil {
		ix.Close()
		return nil, err
	}
	ix.startCheckpoints()
	return ix, nil
}

// retryBusy runs fn until it does not fail with SQLITE_BUSY, for up to 15 s.
func retryBusy(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := fn()
		if err == nil || !strings.Contains(err.Error(), "SQLITE_BUSY") || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Close waits for a running merge, checkpoints and closes the database.
func (ix *Index) Close() error {
	ix.mergeMu.Lock()
	ix.closed = true
	ix.mergeMu.Unlock()
	ix.merging.Wait()
	ix.stopCheckpoints()
	cerr := ix.cdb.Close()
	verr := ix.vdb.Close()
	if err := ix.db.Close(); err != nil {
		return err
	}
	return errors.Join(verr, cerr)
}

func storeErr(op, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &fs.PathError{Op: op, Path: path, Err: err}
	}
	return semfs.PathErr(op, path, semfs.ErrInvalid, "index store: "+err.Error()+"; run 'semfs reindex' if the index is damaged")
}

func (ix *Index) migrate(ctx context.Context) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if _, err := ix.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return storeErr("open index", ix.path, err)
	}
	var v int
	err := ix.db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v)
	if err != nil {
		return storeErr("open index", ix.path, err)
	}
	if v > SchemaVersion {
		return semfs.PathErr("open index", ix.path, semfs.ErrInvalid,
			fmt.Sprintf("index schema version %d is newer than this binary's %d; upgrade semfs", v, SchemaVersion))
	}
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	sort.Strings(names)
	for _, name := range names {
		n, err := strconv.Atoi(strings.SplitN(filepath.Base(name), "_", 2)[0])
		if err != nil || n <= v {
			continue
		}
		body, _ := migrations.ReadFile(name)
		// BEGIN IMMEDIATE (the DSN's _txlock) takes the write lock; re-read
		// the version under it, since another process opening the same new
		// index may have applied this migration meanwhile.
		tx, err := ix.db.BeginTx(ctx, nil)
		if err != nil {
			return storeErr("open index", ix.path, err)
		}
		var cur int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&cur); err != nil {
			tx.Rollback()
			return storeErr("open index", ix.path, err)
		}
		if cur >= n {
			tx.Rollback()
			continue
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			tx.Rollback()
			return storeErr("open index", ix.path, fmt.Errorf("migration %s: %w", name, err))
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version(version) VALUES (?)`, n); err != nil {
			tx.Rollback()
			return storeErr("open index", ix.path, err)
		}
		if err := tx.Commit(); err != nil {
			return storeErr("open index", ix.path, err)
		}
	}
	return nil
}

// openDerived creates the derived tables and rebuilds them when they are
// missing, of another version, or inconsistent with the store of record.
func (ix *Index) openDerived(ctx context.Context) error {
	problems, err := ix.derivedProblems(ctx)
	if err != nil {
		return storeErr("open index", ix.path, err)
	}
	if len(problems) == 0 {
		return nil
	}
	fresh, err := ix.isNew(ctx)
	if err != nil {
		return storeErr("open index", ix.path, err)
	}
	if err := ix.rebuildDerived(ctx); err != nil {
		return err
	}
	if !fresh {
		ix.Repaired = problems
	}
	return nil
}

func (ix *Index) isNew(ctx context.Context) (bool, error) {
	var n int
	err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM files`).Scan(&n)
	return n == 0, err
}

// derivedProblems lists what is wrong with the derived tables ("" none).
// The checks run in one transaction holding the write lock, so a writer in
// another process cannot commit between two counts and make consistent
// tables look torn.
func (ix *Index) derivedProblems(ctx context.Context) ([]string, error) {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	tx, err := ix.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var problems []string
	var ver string
	err = tx.QueryRowContext(ctx, `SELECT value FROM kv WHERE key = 'derived_version'`).Scan(&ver)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		problems = append(problems, "no derived_version marker")
	case err != nil:
		return nil, err
	case ver != strconv.Itoa(DerivedVersion):
		problems = append(problems, "derived_version "+ver+" != "+strconv.Itoa(DerivedVersion))
	}
	for _, t := range derivedTables {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = ?`, t).Scan(&n); err != nil {
			return nil, err
		}
		if n == 0 {
			problems = append(problems, "derived table "+t+" is missing")
		}
	}
	if len(problems) > 0 {
		return problems, nil
	}
	counts := []struct{ what, a, b string }{
		// Through the chunks' index of (fresh, key) alone (a key is the
		// path, '#' and five digits: index.ChunkKey).
		{"chunk files vs indexed files", `SELECT count(DISTINCT substr(key, 1, length(key) - 6)) FROM chunks`,
			`SELECT count(*) FROM files f WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.fresh IN (0, 1) AND c.key >= f.path || '#' AND c.key < f.path || '$' AND substr(c.key, 1, length(c.key) - 6) = f.path)`},
	}
	for _, c := range counts {
		var a, b int
		if err := tx.QueryRowContext(ctx, c.a).Scan(&a); err != nil {
			problems = append(problems, c.what+": "+err.Error())
			continue
		}
		if err := tx.QueryRowContext(ctx, c.b).Scan(&b); err != nil {
			problems = append(problems, c.what+": "+err.Error())
			continue
		}
		if a != b {
			problems = append(problems, fmt.Sprintf("%s: %d rows vs %d", c.what, a, b))
		}
	}
	return problems, nil
}

// rebuildDerived drops and recreates the derived tables and marks every
// file pending.
func (ix *Index) rebuildDerived(ctx context.Context) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return storeErr("rebuild index", ix.path, err)
	}
	defer tx.Rollback()
	for _, t := range append(derivedTables, retiredTables...) {
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS `+t); err != nil {
			return storeErr("rebuild index", ix.path, err)
		}
	}
	if _, err := tx.ExecContext(ctx, derivedSQL); err != nil {
		return storeErr("rebuild index", ix.path, err)
	}
	// freshSQL is idempotent; every process reloads.
	if _, err := tx.ExecContext(ctx, freshSQL+logReset); err != nil {
		return storeErr("rebuild index", ix.path, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE files SET state = 'pending', reason = '', grep_ok = 0 WHERE state != 'pending' OR grep_ok != 0`); err != nil {
		return storeErr("rebuild index", ix.path, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO kv(key, value) VALUES ('derived_version', ?)
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`, strconv.Itoa(DerivedVersion)); err != nil {
		return storeErr("rebuild index", ix.path, err)
	}
	gen, err := bumpGen(ctx, tx)
	if err != nil {
		return storeErr("rebuild index", ix.path, err)
	}
	ix.view.Lock()
	defer ix.view.Unlock()
	if err := tx.Commit(); err != nil {
		return storeErr("rebuild index", ix.path, err)
	}
	ix.vecs[embedding.SpaceContent].Reset()
	ix.text.Reset()
	ix.grep.Reset()
	ix.gen = gen
	ix.memSeq++
	return nil
}

// load fills the in-memory vector spaces and tag table (at Open: nothing
// else uses them yet), at the fresh_log seq it read them at.
func (ix *Index) load(ctx context.Context) error {
	tx, err := ix.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return storeErr("open index", ix.path, err)
	}
	defer tx.Rollback()
	head, err := logHead(ctx, tx)
	if err != nil {
		return storeErr("open index", ix.path, err)
	}
	tags, content := ix.vecs[embedding.SpaceTags], ix.vecs[embedding.SpaceContent]
	tags.Reset()
	content.Reset()
	var paths, hays []string
	err = readFiles(ctx, tx, "", nil, func(p, hay string, vec []float32) {
		paths, hays = append(paths, p), append(hays, hay)
		if vec != nil {
			tags.Set(p, vec)
		}
	})
	if err != nil {
		return storeErr("open index", ix.path, err)
	}
	ix.tags.Reset()
	ix.tags.SetBatch(index.NewTagBatch(paths, hays))
	if err := readChunks(ctx, tx, `WHERE vec IS NOT NULL`, nil, content.Set); err != nil {
		return storeErr("open index", ix.path, err)
	}
	ix.logSeq = head
	return nil
}
