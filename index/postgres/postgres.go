// Package postgres is the index store for trees shared by several daemons:
// the metadata of record and the derived data semfs searches, in
// PostgreSQL (github.com/jackc/pgx/v5).
//
// It implements the same index.Store contract as the embedded SQLite store
// and runs the same tests. Full text uses tsvector + GIN: chunks holding
// every query word first, ranked by ts_rank (path weighted above body,
// normalised by length) over a bounded set of the shortest matches
// (Options.RankCandidates), so a lookup does not grow with the number of
// chunks holding a common word; Load imports many new files at once
// through COPY. Grep candidates and tag keywords use
// pg_trgm GIN indexes; vectors are stored as real[] and searched by an
// in-process index on each daemon (Debian's PostgreSQL has no pgvector),
// kept fresh by LISTEN/NOTIFY: every committed change notifies channel
// semfs_index, and each daemon reloads what other daemons changed. A
// lookup answered from memory first reads the count of committed writes
// and waits until the notifications up to it were applied, so a daemon
// sees what another committed at its next lookup (fresh.go).
//
// Credentials in the connection URL never appear in errors or logs.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
)

// SchemaVersion is the version of the store-of-record schema.
//
//	1: files (lists as JSONB, vectors as real[]), links, kv.
//	2: chunks.len, the lexeme count of the chunk's tsvector (generated).
//	3: semfs_gen, the count of committed write transactions (fresh.go).
const SchemaVersion = 3

// DerivedVersion is the version of the derived tables.
//
//	1: chunks (tsvector: path 'simple' weight A, body 'english' weight B), grep (pg_trgm), tag_hay trigram index.
//	   chunks.len (schema 2) is added in place by a migration, not by a rebuild.
const DerivedVersion = 1

//go:embed migrations/*.sql
var migrations embed.FS

//go:embed derived.sql
var derivedSQL string

var derivedTables = []string{"chunks", "grep"}

// channel is the LISTEN/NOTIFY channel of index changes.
const channel = "semfs_index"

// Index is an index.Store in PostgreSQL.
type Index struct {
	pool *pgxpool.Pool
	dsn  string // redacted, for messages
	node string // this process's id in notifications
	log  *slog.Logger

	rankCandidates int // Options.RankCandidates, resolved

	wmu sync.Mutex // serialises this process's write transactions
	// rerun counts the write transactions PostgreSQL aborted as a
	// deadlock or serialization failure and write ran again: tests check
	// that semfs's own writers cause none (see pathLocks).
	rerun atomic.Int64
	// testHookReloadRead, when a test sets it, runs in reloadPaths
	// between reading the rows and applying them.
	testHookReloadRead atomic.Pointer[func()]
	// testHookCommitted, when a test sets it, runs in write after the
	// commit, before the write is applied to memory.
	testHookCommitted atomic.Pointer[func(gen int64)]
	// testHookRangeRead, when a test sets it, runs in lockRows between
	// the read of a range's rows and their path locks.
	testHookRangeRead atomic.Pointer[func()]
	vecs              map[string]*index.Vectors

	tmu  sync.RWMutex
	tags map[string]string // path → lower-cased tag hay

	listenCancel context.CancelFunc
	listenDone   chan struct{}

	fresh freshness // which committed writes memory shows (fresh.go)
	peers peerLog   // the paths recent writes changed (PeerChanges)

	// Repaired lists what Open found wrong with the derived data (and
	// rebuilt; every file is then pending).
	Repaired []string
}

var _ index.Store = (*Index)(nil)

// Options configure Open.
type Options struct {
	Logger *slog.Logger
	// NoListen disables LISTEN/NOTIFY (a single daemon needs none).
	NoListen bool
	// RankCandidates bounds the work of one full-text lookup: of the
	// chunks matching the query and the filter, only this many of the
	// shortest are ranked (0: DefaultRankCandidates; negative: rank every
	// match, time linear in the number of matches).
	RankCandidates int
}

// searchWorkMem is the work_mem of the store's sessions unless the URL sets
// one.
const searchWorkMem = "32MB"

// DefaultRankCandidates is Options.RankCandidates when unset: at 1M files
// it keeps the median lookup fast while the ranked top stays close to
// ranking every match (docs/bench/scale.md).
const DefaultRankCandidates = 1000

// Redact returns a connection URL with its password removed.
func Redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres://(unparseable URL)"
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "REDACTED")
		}
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "REDACTED")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Open connects to the database at dsn (postgres://...), applies
// migrations, checks the derived tables, loads vectors and starts listening
// for other daemons' changes.
func Open(ctx context.Context, dsn string, opts Options) (*Index, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("index: bad PostgreSQL URL %s: expected postgres://user@host:port/db", Redact(dsn))
	}
	cfg.MaxConns = 8
	// A search's bitmap of matching chunks must stay exact: once it
	// exceeds work_mem it turns lossy and every chunk on a lossy page has
	// its tsvector read and checked again (7.4 s instead of 2.2 s for two
	// common words at 1M files, docs/bench/scale.md). 32MB keeps it exact
	// up to about 3M chunks. A work_mem in the URL wins.
	if _, ok := cfg.ConnConfig.RuntimeParams["work_mem"]; !ok {
		cfg.ConnConfig.RuntimeParams["work_mem"] = searchWorkMem
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("index: PostgreSQL at %s: %s", Redact(dsn), scrub(err, dsn))
	}
	ix := &Index{pool: pool, dsn: Redact(dsn), log: log,
		node: strconv.FormatInt(time.Now().UnixNano(), 36),
		vecs: map[string]*index.Vectors{embedding.SpaceTags: index.NewVectors(), embedding.SpaceContent: index.NewVectors()},
		tags: map[string]string{}, rankCandidates: opts.RankCandidates}
	if ix.rankCandidates == 0 {
		ix.rankCandidates = DefaultRankCandidates
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("index: cannot reach PostgreSQL at %s: %s (is the server running? check the URL)", ix.dsn, scrub(err, dsn))
	}
	if err := ix.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if err := ix.openDerived(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if !opts.NoListen {
		if err := ix.listen(ctx); err != nil {
			pool.Close()
			return nil, err
		}
	}
	// The listener applies what it hears under the writer's lock: held
	// here, a change it heard meanwhile lands after this load, not under
	// it.
	ix.wmu.Lock()
	err = ix.loadAt(ctx)
	ix.wmu.Unlock()
	if err != nil {
		ix.Close()
		return nil, err
	}
	return ix, nil
}

// scrub removes the URL's password from an error's text.
func scrub(err error, dsn string) string {
	msg := err.Error()
	if u, perr := url.Parse(dsn); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "REDACTED")
		}
	}
	return msg
}

// Close stops listening and closes the pool.
func (ix *Index) Close() error {
	if ix.listenCancel != nil {
		ix.listenCancel()
		<-ix.listenDone
	}
	ix.pool.Close()
	return nil
}

func (ix *Index) storeErr(op, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &fs.PathError{Op: op, Path: path, Err: err}
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) && !strings.HasPrefix(pg.Code, "08") && !strings.HasPrefix(pg.Code, "57") {
		// The server is up and refused the statement (a deadlock still
		// there after writeAttempts, a row too large): no hint about
		// its being down, which would send the user the wrong way.
		return &fs.PathError{Op: op, Path: path, Err: fmt.Errorf("index store (PostgreSQL at %s): %s", ix.dsn, scrub(err, ix.dsn))}
	}
	return &fs.PathError{Op: op, Path: path, Err: fmt.Errorf("index store (PostgreSQL): %s; check that the server at %s is up", scrub(err, ix.dsn), ix.dsn)}
}

func (ix *Index) migrate(ctx context.Context) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	// One daemon migrates at a time: an advisory lock held for the migration.
	conn, err := ix.pool.Acquire(ctx)
	if err != nil {
		return ix.storeErr("open index", "/", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(74231)`); err != nil {
		return ix.storeErr("open index", "/", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(74231)`)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return ix.storeErr("open index", "/", err)
	}
	var v int
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v); err != nil {
		return ix.storeErr("open index", "/", err)
	}
	if v > SchemaVersion {
		return semfs.PathErr("open index", "/", semfs.ErrInvalid, fmt.Sprintf("index schema version %d is newer than this binary's %d; upgrade semfs", v, SchemaVersion))
	}
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	sort.Strings(names)
	for _, name := range names {
		base := name[strings.LastIndexByte(name, '/')+1:]
		n, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil || n <= v {
			continue
		}
		body, _ := migrations.ReadFile(name)
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return fmt.Errorf("migration %s: %w", base, err)
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_version(version) VALUES ($1)`, n)
			return err
		})
		if err != nil {
			return ix.storeErr("open index", "/", err)
		}
	}
	return nil
}

func (ix *Index) openDerived(ctx context.Context) error {
	problems, err := ix.derivedProblems(ctx)
	if err != nil {
		return ix.storeErr("open index", "/", err)
	}
	if len(problems) == 0 {
		return nil
	}
	var n int
	if err := ix.pool.QueryRow(ctx, `SELECT count(*) FROM files`).Scan(&n); err != nil {
		return ix.storeErr("open index", "/", err)
	}
	if err := ix.rebuildDerived(ctx); err != nil {
		return err
	}
	if n > 0 {
		ix.Repaired = problems
	}
	return nil
}

func (ix *Index) derivedProblems(ctx context.Context) ([]string, error) {
	var problems []string
	var ver string
	err := ix.pool.QueryRow(ctx, `SELECT value FROM kv WHERE key = 'derived_version'`).Scan(&ver)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		problems = append(problems, "no derived_version marker")
	case err != nil:
		return nil, err
	case ver != strconv.Itoa(DerivedVersion):
		problems = append(problems, "derived_version "+ver+" != "+strconv.Itoa(DerivedVersion))
	}
	for _, t := range derivedTables {
		var ok bool
		if err := ix.pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, t).Scan(&ok); err != nil {
			return nil, err
		}
		if !ok {
			problems = append(problems, "derived table "+t+" is missing")
		}
	}
	if len(problems) > 0 {
		return problems, nil
	}
	counts := []struct{ what, a, b string }{
		{"grep-indexed files vs grep rows", `SELECT count(*) FROM files WHERE grep_ok`, `SELECT count(*) FROM grep`},
		{"chunk files vs indexed files", `SELECT count(DISTINCT path) FROM chunks`, `SELECT count(*) FROM files f WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.path = f.path)`},
	}
	for _, c := range counts {
		var a, b int
		if err := ix.pool.QueryRow(ctx, c.a).Scan(&a); err != nil {
			problems = append(problems, c.what+": "+err.Error())
			continue
		}
		if err := ix.pool.QueryRow(ctx, c.b).Scan(&b); err != nil {
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
// file pending. After 74232 (one rebuild at a time) it takes the files
// table's ACCESS EXCLUSIVE lock, which dropping grep (its foreign key)
// takes anyway: that waits for every transaction holding a lock on files
// (every writer but the content vectors') and lets none start, so while
// it rebuilds no other transaction holds a files row or waits for one the
// rebuild holds (see pathLocks). It takes no path lock: a writer's first
// statement on a connection is prepared in its transaction, which then
// holds a lock on files before it waits for its path locks.
func (ix *Index) rebuildDerived(ctx context.Context) error {
	err := ix.write(ctx, "rebuild index", "/", func(tx pgx.Tx) (*change, error) {
		b := &pgx.Batch{}
		b.Queue(`SELECT pg_advisory_xact_lock(74232)`)
		b.Queue(`LOCK TABLE files IN ACCESS EXCLUSIVE MODE`)
		if err := execBatch(ctx, tx, b); err != nil {
			return nil, err
		}
		for _, t := range derivedTables {
			if _, err := tx.Exec(ctx, `DROP TABLE IF EXISTS `+t+` CASCADE`); err != nil {
				return nil, err
			}
		}
		if _, err := tx.Exec(ctx, derivedSQL); err != nil {
			return nil, fmt.Errorf("%w (the pg_trgm extension ships in Debian's postgresql-contrib)", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE files SET state = 'pending', reason = '', grep_ok = false WHERE state <> 'pending' OR grep_ok`); err != nil {
			return nil, err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO kv(key, value) VALUES ('derived_version', $1)
			ON CONFLICT(key) DO UPDATE SET value = excluded.value`, strconv.Itoa(DerivedVersion)); err != nil {
			return nil, err
		}
		return &change{Reload: true}, nil
	})
	if err != nil {
		return err
	}
	ix.vecs[embedding.SpaceContent].Reset()
	return nil
}

// load fills the in-memory vector spaces and tag table from the database.
func (ix *Index) load(ctx context.Context) error {
	tags := ix.vecs[embedding.SpaceTags]
	content := ix.vecs[embedding.SpaceContent]
	hay := map[string]string{}
	rows, err := ix.pool.Query(ctx, `SELECT path, tag_hay, tag_vec FROM files`)
	if err != nil {
		return ix.storeErr("open index", "/", err)
	}
	tags.Reset()
	for rows.Next() {
		var p, h string
		var vec []float32
		if err := rows.Scan(&p, &h, &vec); err != nil {
			rows.Close()
			return ix.storeErr("open index", "/", err)
		}
		hay[p] = h
		if len(vec) > 0 {
			tags.Set(p, vec)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return ix.storeErr("open index", "/", err)
	}
	ix.tmu.Lock()
	ix.tags = hay
	ix.tmu.Unlock()
	content.Reset()
	rows, err = ix.pool.Query(ctx, `SELECT key, vec FROM chunks WHERE vec IS NOT NULL`)
	if err != nil {
		return ix.storeErr("open index", "/", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var vec []float32
		if err := rows.Scan(&k, &vec); err != nil {
			return ix.storeErr("open index", "/", err)
		}
		content.Set(k, vec)
	}
	return rows.Err()
}

// tagHay is the lower-cased text seed 000's keyword points look in: the
// four fields separated by a unit separator (0x1f, which no keyword holds)
// so that no word matches across two. PostgreSQL text cannot hold NUL.
func tagHay(m semfs.Meta) string {
	return strings.ToLower(m.Path + "\x1f" + m.CreatedBy + "\x1f" + m.Task + "\x1f" + strings.Join(m.RelatedApps, "\x1f"))
}

// hasNUL reports whether any text field of m holds a NUL byte, which
// PostgreSQL text cannot store.
func hasNUL(m semfs.Meta) bool {
	fields := []string{m.Path, m.CreatedBy, m.Task, m.Summary, m.Provenance, m.Hash}
	fields = append(fields, m.RelatedApps...)
	fields = append(fields, m.Links...)
	fields = append(fields, m.Groups...)
	for k, v := range m.Extra {
		fields = append(fields, k, v)
	}
	for _, f := range fields {
		if strings.IndexByte(f, 0) >= 0 {
			return true
		}
	}
	return false
}
