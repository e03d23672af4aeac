// Package meta is the metadata layer: it wraps any semfs.FS, forwards every
// capability of it, and keeps per-file metadata (created_by, tags, links,
// provenance, times, size, hash) in an index.Store, together with the
// derived data that makes the tree findable: chunks, full text, trigrams and
// vectors.
//
// # Writes
//
// A write goes to the base FS first; only then does the layer update the
// store. The bytes are never lost to an index failure: the failure is
// logged, the file is left pending, and Reconcile or Reindex repairs it.
// Files up to Options.InlineBudget bytes are chunked and indexed inline;
// larger ones are queued for a background indexer. A removal whose rows
// the store fails to remove leaves them (restricted ones stay restricted);
// the next write of rows at that path (a save, a tag, a rename) removes
// them first, and fails while it cannot, so that a file created there
// again never takes the removed file's groups or created_by. Only the
// removed files' rows go, path by path: those read before the removal,
// still unchanged (or, when they could not be read, rows at whose paths
// no file stands, checked before a WriteFile or OpenFile writes the
// base; a write fails while the rows cannot be read); a row another
// process wrote there since stays, restricted as the store holds it. A
// restart forgets them: Reconcile removes rows whose files are gone.
//
// Saves that finish together share one store transaction (group commit): a
// save waits for the commit that holds its row, so what a close or fsync
// acknowledged is as durable as before, but a stream of small files pays
// one synced commit per group rather than per file. The tag-text vector is
// embedded inline only when the tag text holds more than the path (a task
// or related apps, which queries look for right away); a path-only text and
// content-chunk vectors are left missing for the embedding drain worker
// (embedding.Worker), which embeds them in batches, and Options.Deferred is
// told so that it can wake the worker.
//
// With Options.CloseDelay set, the close of a file opened for writing does
// not wait for its row: it records the path and its writer's created_by and
// returns, and a committer stores the rows of many closed files in one
// transaction, within CloseDelay. Every read of rows through the layer
// (Meta, Query, Search, SetTags, Rename) and Flush store what is pending
// under the paths they read first, so no caller sees the lag; a WriteFile
// stores a pending close of its file first, so that the first writer
// names the creator. A close whose row cannot be stored stays pending and
// is retried. Too many pending closes make a close store its row itself.
// A process killed before the commit loses those rows' created_by
// (Reconcile indexes the files as written by an unknown writer) unless
// Options.CloseJournal keeps them. A FUSE mount wants this: the kernel
// sends RELEASE after close(2) returned, so nobody waits for that
// acknowledgement, while a RELEASE that commits a row holds one of the
// few request readers.
//
// # Renames
//
// Tags follow a renamed file (or every file of a directory), and links to a
// moved path are rewritten. A file renamed over a file whose row has
// groups keeps those groups and the public flag when it has no groups of
// its own, as an editor's save keeps a file's mode: saving the usual
// atomic way (write a temporary file, rename it over the target: vim, sed
// -i, os.replace, agents' atomic writers) must not make a restricted file
// public. A source with groups of its own keeps them. A rename the store
// cannot record is undone and fails, so that a file and its restriction
// never part (a restart loads restrictions from the store).
//
// # Other processes
//
// Visibility is answered from memory (the set of restricted files, loaded
// at New), never by a store query per call. When the store may be written
// by other processes too (an index.PeerStore: the SQLite file `semfs tag`
// opens beside a running daemon, a PostgreSQL index several daemons
// share), a poller asks it every Options.PeerPoll (DefaultPeerPoll, 250
// ms) which rows changed and applies their groups and public flags: a
// restriction another process set hides the file here at most one poll
// interval plus that query's time after its commit (and making it public
// again shows it as late; over PostgreSQL the query first waits, as
// lookups do, for the notifications of writes up to then, at most 2 s,
// and a poll that fails is logged and retried). Until then this process
// answers as before the change. The paths this process itself changed
// since the last poll stay as it set them and are read again at the
// next. Options.PeerRetagged hears of the paths a poll changed.
//
// A save keeps the stored row's tags, and a tag keeps its creator and
// the bytes' fields: each builds its row from the stored one. Over an
// index.UpdatingStore (SQLite, PostgreSQL) that row is read in the
// transaction that writes it, so what another process wrote in between is
// kept; over another store the read and the write are separate, and a
// change another process commits between them is written over. Reconcile
// builds its rows the same way, so the tags, groups and public flags
// another process sets during a reconcile are kept; over SQLite the
// contents are still analysed before the write lock
// (index.PreparingStore.PrepareUpdate).
//
// # Searching
//
// FS implements seed 000's tag query (Query), content search with fusion,
// filters and cursors (Search), save-time candidates (Related) and a
// trigram prefilter for grep (GrepCandidates). See the method docs.
package meta

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
)

// DefaultInlineBudget is the largest file indexed inline on write.
const DefaultInlineBudget = 1 << 20

// Options configure the layer.
type Options struct {
	// Spaces are the embedders of the tag and content spaces. A nil
	// embedder disables that signal (the tag query then ranks by keywords
	// only, and says so in the log).
	Spaces embedding.Spaces
	// Logger receives index failures and other events; default slog.Default().
	Logger *slog.Logger
	// InlineBudget is the largest file (bytes) indexed on the write path;
	// default DefaultInlineBudget. Larger files are queued.
	InlineBudget int64
	// Ignore, if set, names paths of the base that are not indexed
	// (bookkeeping such as "/.semfs"). Default: the "/.semfs" subtree.
	Ignore func(path string) bool
	// Fusion selects how Search combines signals: FusionRRF (default: on
	// the GOROOT eval it beats every single signal in Recall@10 and MRR, on
	// all questions and on the held-out half; see docs/bench/eval.md) or
	// FusionSum.
	Fusion string
	// Now returns the current time; default time.Now.
	Now func() time.Time
	// Deferred, if set, is called after a save left a vector of the named
	// space for the drain worker, typically to Kick that worker.
	Deferred func(space string)
	// CloseDelay, if positive, defers the index update of a file opened
	// for writing from its Close to a batch committed at most this long
	// after (see the package doc); DefaultCloseDelay suits a FUSE mount.
	// Zero: Close returns once the row is stored.
	CloseDelay time.Duration
	// CloseJournal, if set, is a host file where deferred closes are
	// recorded until their rows are stored. New stores the closes a
	// killed process left in it, with their writers as created_by;
	// without it those files are indexed by Reconcile as written by an
	// unknown writer.
	CloseJournal string
	// Changed, if set, is called after each change of the base's files
	// made through the layer, with the context of the call that made it,
	// before the index is updated (after it, for a rename with CloseDelay
	// and a removal of a file whose close is pending) — so that a front
	// end caching the tree (the FUSE mount) can drop what it holds. It
	// must not block.
	Changed func(ctx context.Context, c Change)
	// PeerPoll is how often, when the store is an index.PeerStore (other
	// processes may write it), the restrictions they set are applied (see
	// "Other processes" in the package doc). Zero: DefaultPeerPoll;
	// negative: never (a store no other process writes).
	PeerPoll time.Duration
	// PeerRetagged, if set, is called by that poller with the paths whose
	// restriction another process changed, once this layer applies it,
	// so that a front end caching what callers may see (the FUSE mount)
	// can drop it. It must not block.
	PeerRetagged func(paths []string)
}

// Change is one change of the base's files made through the layer.
type Change struct {
	Op   ChangeOp
	Path string
	To   string // the destination of a rename
}

// ChangeOp says what a Change did.
type ChangeOp int

const (
	// ChangeWrite: the bytes of the file at Path changed in place (a file
	// opened for writing was closed).
	ChangeWrite ChangeOp = iota + 1
	// ChangeReplace: WriteFile replaced the file at Path whole (hostfs
	// writes a new host file and renames it over the old one).
	ChangeReplace
	// ChangeRemove: Path and anything below it are gone.
	ChangeRemove
	// ChangeRename: Path moved to To, replacing what To held.
	ChangeRename
	// ChangeCreate: Path was created (a directory, with any missing
	// parents, or a file opened with O_CREATE).
	ChangeCreate
)

func (f *FS) changed(ctx context.Context, c Change) {
	if f.opts.Changed != nil {
		f.opts.Changed(ctx, c)
	}
}

// FS is the metadata layer over a base FS.
type FS struct {
	base  semfs.FS
	store index.Store
	opts  Options
	log   *slog.Logger

	mu sync.Mutex // serialises read-modify-write of file rows

	// unremoved are the removals through the layer whose rows the store
	// failed to remove. A write of rows at or below one removes the
	// removed files' rows there first (clearUnremoved). Guarded by mu;
	// anyUnremoved says whether it holds any, read without mu by the
	// writes of files (clearBeforeWrite) so that they do not wait for a
	// group commit holding mu when, as nearly always, it holds none.
	unremoved    []removal
	anyUnremoved atomic.Bool

	group   group   // saves waiting to share a commit
	tickets tickets // the order of the saves of one path

	vis   restricted // files with restricted visibility
	peers *peers     // changes of other processes (peer.go); nil: none followed

	writers writers // files open for writing
	closes  closes  // closed files waiting for their rows (CloseDelay)

	queue   chan string
	stop    chan struct{}
	stopped sync.WaitGroup
	closeMu sync.Once
}

var (
	_ semfs.FS               = (*FS)(nil)
	_ semfs.Unwrapper        = (*FS)(nil)
	_ semfs.ExistsFS         = (*FS)(nil)
	_ semfs.ReadFileFS       = (*FS)(nil)
	_ semfs.WriteFileFS      = (*FS)(nil)
	_ semfs.OpenFileFS       = (*FS)(nil)
	_ semfs.MkdirFS          = (*FS)(nil)
	_ semfs.MkdirAllFS       = (*FS)(nil)
	_ semfs.RemoveFS         = (*FS)(nil)
	_ semfs.RemoveAllFS      = (*FS)(nil)
	_ semfs.RenameFS         = (*FS)(nil)
	_ semfs.FilesFS          = (*FS)(nil)
	_ semfs.SizeFS           = (*FS)(nil)
	_ semfs.MetaFS           = (*FS)(nil)
	_ semfs.QueryFS          = (*FS)(nil)
	_ semfs.SearchFS         = (*FS)(nil)
	_ semfs.RelatedFS        = (*FS)(nil)
	_ semfs.GrepCandidatesFS = (*FS)(nil)
)

// New returns the metadata layer over base, keeping metadata in store. It
// starts the background indexer; call Close to stop it (Close does not close
// the store or the base).
func New(base semfs.FS, store index.Store, opts Options) (*FS, error) {
	if base == nil || store == nil {
		return nil, semfs.PathErr("meta", "/", semfs.ErrInvalid, "meta.New needs a base FS and an index store")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.InlineBudget <= 0 {
		opts.InlineBudget = DefaultInlineBudget
	}
	if opts.Ignore == nil {
		opts.Ignore = func(p string) bool { return semfs.HasPrefix(p, "/.semfs") }
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Fusion == "" {
		opts.Fusion = FusionRRF
	}
	f := &FS{base: base, store: store, opts: opts, log: opts.Logger,
		queue: make(chan string, 4096), stop: make(chan struct{})}
	if err := f.startPeers(context.Background()); err != nil {
		return nil, err
	}
	if err := f.vis.load(context.Background(), store); err != nil {
		return nil, err
	}
	if opts.CloseJournal != "" {
		if err := f.openCloseJournal(context.Background()); err != nil {
			return nil, err
		}
	}
	f.stopped.Add(1)
	go f.indexer()
	if f.peers != nil {
		f.stopped.Add(1)
		go f.peerLoop()
	}
	if f.deferCloses() {
		f.startCloses()
	}
	return f, nil
}

// openCloseJournal stores the closes a previous process recorded in
// Options.CloseJournal and did not store, then keeps the journal for this
// one's deferred closes.
func (f *FS) openCloseJournal(ctx context.Context) error {
	j, left, bad, err := openCloseJournalBad(f.opts.CloseJournal)
	if err != nil {
		return err
	}
	f.closes.log = f.log
	if bad > 0 {
		f.log.Warn("semfs skipped malformed lines of its close journal", "journal", f.opts.CloseJournal, "lines", bad)
	}
	var failed []queued
	if len(left) > 0 {
		stored := 0
		for len(left) > 0 {
			n := min(len(left), closeBatch)
			batch := f.unstored(ctx, left[:n])
			stored += len(batch)
			fl, embed, _ := f.storeCloses(ctx, batch)
			f.embedAll(ctx, embed)
			failed = append(failed, fl...)
			left = left[n:]
		}
		f.log.Info("stored the closes a previous process left unstored", "journal", f.opts.CloseJournal, "closes", stored, "failed", len(failed))
	}
	if len(failed) == 0 {
		err = j.reset()
	} else {
		// Kept for the committer, or for the next start.
		keep := make([]closed, len(failed))
		for i, d := range failed {
			keep[i] = d.closed
		}
		err = j.rewrite(keep)
	}
	if err != nil {
		j.close()
		return fmt.Errorf("meta: emptying the close journal: %w", err)
	}
	if !f.deferCloses() {
		return j.close()
	}
	f.closes.journal = j
	if len(failed) > 0 {
		c := &f.closes
		c.paths = map[string]struct{}{}
		for i := range failed {
			c.seq++
			failed[i].seq = c.seq
			c.paths[failed[i].path] = struct{}{}
		}
		c.pending = failed
		c.unflushed.Add(int64(len(failed)))
		c.failures, c.retryAt = 1, time.Now().Add(closeRetry)
	}
	return nil
}

// unstored returns the closes of left replayed from the journal whose rows
// are not stored as they are: a row with a creator and the file's size and
// modification time was stored by the close (or a later write), and
// storing it again would only move its updated_at.
func (f *FS) unstored(ctx context.Context, left []closed) []queued {
	paths := make([]string, len(left))
	for i, d := range left {
		paths[i] = d.path
	}
	rows, err := f.store.Files(ctx, paths)
	out := make([]queued, 0, len(left))
	for _, d := range left {
		if r, ok := rows[d.path]; err == nil && ok && r.CreatedBy != "" {
			info, err := f.base.Stat(ctx, d.path)
			if err == nil && info.Size() == r.Size && info.ModTime().Equal(r.ModTime) {
				continue
			}
		}
		out = append(out, queued{closed: d, replay: true})
	}
	return out
}

// Close stores the rows of closed files still waiting (CloseDelay) and
// stops the background indexer. Files still queued stay pending in the
// store and are indexed by the next Reconcile or IndexPending. It returns
// the error of a row it could not store (kept in Options.CloseJournal,
// if set, for the next start).
func (f *FS) Close() error {
	var err error
	f.closeMu.Do(func() {
		close(f.stop)
		if f.deferCloses() {
			<-f.closes.done
			err = f.closes.stopErr
			// Closes still pending (their rows failed) stay in the
			// journal for the next start; a later Flush leaves it be.
			f.closes.mu.Lock()
			j := f.closes.journal
			f.closes.journal = nil
			f.closes.mu.Unlock()
			if j != nil {
				j.close()
			}
		}
		f.stopped.Wait()
	})
	return err
}

// Unwrap returns the base FS.
func (f *FS) Unwrap() semfs.FS { return f.base }

// Store returns the index store.
func (f *FS) Store() index.Store { return f.store }

// Open implements semfs.FS.
func (f *FS) Open(ctx context.Context, name string) (fs.File, error) { return f.base.Open(ctx, name) }

// Stat implements semfs.FS.
func (f *FS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	return f.base.Stat(ctx, name)
}

// ReadDir implements semfs.FS.
func (f *FS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	return f.base.ReadDir(ctx, name)
}

// Exists implements semfs.ExistsFS.
func (f *FS) Exists(ctx context.Context, name string) (bool, error) {
	return semfs.Exists(ctx, f.base, name)
}

// ReadFile implements semfs.ReadFileFS.
func (f *FS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	return semfs.ReadFile(ctx, f.base, name)
}

// Files implements semfs.FilesFS.
func (f *FS) Files(ctx context.Context, root string) iter.Seq2[string, error] {
	return semfs.Files(ctx, f.base, root)
}

// TotalSize implements semfs.SizeFS.
func (f *FS) TotalSize(ctx context.Context) (int64, error) { return semfs.TotalSize(ctx, f.base) }

// Mkdir implements semfs.MkdirFS.
func (f *FS) Mkdir(ctx context.Context, name string, perm fs.FileMode) error {
	if err := semfs.Mkdir(ctx, f.base, name, perm); err != nil {
		return err
	}
	f.created(ctx, name)
	return nil
}

// created reports the creation of name, which the base accepted.
func (f *FS) created(ctx context.Context, name string) {
	if f.opts.Changed == nil {
		return
	}
	if p, err := semfs.Clean("mkdir", name); err == nil {
		f.changed(ctx, Change{Op: ChangeCreate, Path: p})
	}
}

// MkdirAll implements semfs.MkdirAllFS.
func (f *FS) MkdirAll(ctx context.Context, name string, perm fs.FileMode) error {
	if err := semfs.MkdirAll(ctx, f.base, name, perm); err != nil {
		return err
	}
	f.created(ctx, name)
	return nil
}

// WriteFile implements semfs.WriteFileFS: the bytes go to the base, then
// the file's row and derived data are updated.
func (f *FS) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	p, err := semfs.Clean("write", name)
	if err != nil {
		return err
	}
	if f.deferCloses() {
		// A close of p recorded before this write is stored first: its
		// writer created the file, if this one did not.
		f.flushCloses(context.WithoutCancel(ctx), func(q string) bool { return q == p })
	}
	if err := f.clearBeforeWrite(context.WithoutCancel(ctx), "write", p); err != nil {
		return err
	}
	// The ticket is taken before the write: written then knows whether
	// another save of p began while the bytes went to the base.
	t := f.tickets.take(p, creator(ctx))
	defer f.tickets.release(p)
	if err := semfs.WriteFile(ctx, f.base, p, data, perm); err != nil {
		return err
	}
	f.changed(ctx, Change{Op: ChangeReplace, Path: p})
	f.written(ctx, p, data, t, true)
	return nil
}

// OpenFile implements semfs.OpenFileFS. A file opened for writing is
// re-indexed when it is closed.
func (f *FS) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	p, err := semfs.Clean("open", name)
	if err != nil {
		return nil, err
	}
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC) != 0 {
		if err := f.clearBeforeWrite(context.WithoutCancel(ctx), "open", p); err != nil {
			return nil, err
		}
	}
	h, err := semfs.OpenFile(ctx, f.base, p, flag, perm)
	if err != nil {
		return nil, err
	}
	if flag&os.O_CREATE != 0 {
		f.changed(ctx, Change{Op: ChangeCreate, Path: p})
	}
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 && flag&(os.O_CREATE|os.O_TRUNC) == 0 {
		return h, nil
	}
	w := &writeFile{RWFile: h, f: f, ctx: context.WithoutCancel(ctx), path: p,
		dirty: flag&(os.O_CREATE|os.O_TRUNC) != 0}
	f.writers.add(w)
	return w, nil
}

var _ semfs.Fder = (*writeFile)(nil)

// writeFile re-indexes its file on Close if it was written.
type writeFile struct {
	semfs.RWFile
	f     *FS
	ctx   context.Context
	mu    sync.Mutex
	path  string // where the file is now: Rename moves it
	dirty bool
}

func (w *writeFile) mark() { w.mu.Lock(); w.dirty = true; w.mu.Unlock() }

func (w *writeFile) Write(p []byte) (int, error) { w.mark(); return w.RWFile.Write(p) }
func (w *writeFile) WriteAt(p []byte, off int64) (int, error) {
	w.mark()
	return w.RWFile.WriteAt(p, off)
}
func (w *writeFile) Truncate(size int64) error { w.mark(); return w.RWFile.Truncate(size) }

// HostFd implements semfs.Fder by forwarding the base file's descriptor.
// Writes through it bypass this file, so handing it out marks the file
// written: Close then re-reads and indexes it.
func (w *writeFile) HostFd() (int, bool) {
	fd, ok := semfs.HostFd(w.RWFile)
	if ok {
		w.mark()
	}
	return fd, ok
}

func (w *writeFile) Close() error {
	err := w.RWFile.Close()
	defer w.f.writers.drop(w)
	w.mu.Lock()
	dirty := w.dirty
	w.dirty = false
	w.mu.Unlock()
	if err != nil || !dirty {
		return err
	}
	if w.f.deferCloses() {
		at := time.Now() // for the batch timing, not a row
		p, ok := w.f.writers.deferClose(w, func(p string) bool { return w.f.closes.add(p, creator(w.ctx), at) })
		w.f.changed(w.ctx, Change{Op: ChangeWrite, Path: p})
		if ok {
			return nil
		}
		// The layer is closing, or too many closes are pending: store
		// the row now.
	}
	// A rename may move the file while it is being indexed: index it
	// again under its new path (writtenBehind skips a path that is gone).
	for p := w.f.writers.path(w); ; {
		w.f.changed(w.ctx, Change{Op: ChangeWrite, Path: p})
		w.f.writtenBehind(w.ctx, p)
		now := w.f.writers.path(w)
		if now == p {
			return nil
		}
		p = now
	}
}

// Remove implements semfs.RemoveFS.
func (f *FS) Remove(ctx context.Context, name string) error {
	p, err := semfs.Clean("remove", name)
	if err != nil {
		return err
	}
	return f.remove(ctx, "remove", p, func() error { return semfs.Remove(ctx, f.base, p) })
}

// remove runs do, the base's removal of p, then drops the rows at or
// below p and the closes of the removed files still pending: a file
// created again at p must not get their writers.
func (f *FS) remove(ctx context.Context, op, p string, do func() error) error {
	held := false
	var mark uint64
	if f.deferCloses() {
		// A close of p being stored may have read the old file: it is
		// committed before the removal, or it could store the old bytes
		// and writer under a file created again at p meanwhile.
		if held = f.closes.wanted(under(p)); held {
			f.closes.run.Lock()
		}
		mark = f.closes.mark()
	}
	// The rows the removal is meant to remove, read before it: should
	// the store fail to remove them, they are told from rows another
	// process writes there meanwhile (see removal).
	before, berr := f.rowsBelow(context.WithoutCancel(ctx), p)
	if err := do(); err != nil {
		if held {
			f.closes.run.Unlock()
		}
		return err
	}
	if f.deferCloses() {
		f.closes.drop(p, mark)
	}
	if !held {
		f.changed(ctx, Change{Op: ChangeRemove, Path: p})
	}
	// Under f.mu, so that a close being committed (which checks the file
	// is still there) cannot put the row back after this.
	f.mu.Lock()
	err := f.store.Remove(context.WithoutCancel(ctx), p, true)
	f.noteRemoved(p, err, before, berr)
	f.mu.Unlock()
	if held {
		// After run: see Rename.
		f.closes.run.Unlock()
		f.changed(ctx, Change{Op: ChangeRemove, Path: p})
	}
	f.logErr(op, p, err)
	if err == nil {
		// Only once the rows are gone: a row the store kept (its search
		// hits, snippets included) stays restricted, and a restricted
		// path whose file is gone is visible to nobody.
		f.vis.drop(p)
	}
	return nil
}

// removal is a removal of root whose rows the store failed to remove.
// Other processes (a second daemon, the CLI on the same index) may write
// rows below root before they are cleared, and those are theirs to keep:
// the removed files' rows are told apart by rows, or by the base.
type removal struct {
	root string
	// rows are the rows at or below root as read before the base's
	// removal: a row is a removed file's while it is still there
	// unchanged (see sameRow). Nil when they could not be read (or were
	// too many to hold); then a row is a removed file's only when no
	// file stands at its path in the base, and the writes below root
	// fail until the rows can be read (a row's times say nothing: a
	// rename or `cp -p` keeps old ones).
	rows map[string]semfs.Meta
}

// maxRemovedRows is the most rows a removal holds to tell the removed
// files' rows apart (see removal.rows); above it the base decides.
const maxRemovedRows = 1 << 16

var errTooManyRows = errors.New("too many rows to hold")

// rowsBelow reads the rows at or below p, at most maxRemovedRows.
func (f *FS) rowsBelow(ctx context.Context, p string) (map[string]semfs.Meta, error) {
	rows := map[string]semfs.Meta{}
	err := f.store.WalkFiles(ctx, p, func(row index.File) error {
		if len(rows) >= maxRemovedRows {
			return errTooManyRows
		}
		rows[row.Path] = row.Meta
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// removed reports whether the row m, read at or below r.root, is a
// removed file's.
func (f *FS) removed(ctx context.Context, r *removal, m semfs.Meta) bool {
	if r.rows == nil {
		return f.absent(ctx, m.Path)
	}
	old, ok := r.rows[m.Path]
	return ok && sameRow(old, m)
}

// absent reports whether no file stands at p in the base (a directory
// has no row; an error that is not an absence counts as a file).
func (f *FS) absent(ctx context.Context, p string) bool {
	info, err := f.base.Stat(ctx, p)
	if err != nil {
		return semfs.IsAbsence(err)
	}
	return info.IsDir()
}

// sameRow reports whether a row read again (b) is the row a was: a save
// changes its times or bytes' fields, and a tag its tags. Links are not
// compared: a rename anywhere rewrites the links that point at it.
func sameRow(a, b semfs.Meta) bool {
	return a.CreatedBy == b.CreatedBy && a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt) &&
		a.Size == b.Size && a.Hash == b.Hash &&
		a.Task == b.Task && slices.Equal(a.RelatedApps, b.RelatedApps) && a.Summary == b.Summary &&
		a.Provenance == b.Provenance && maps.Equal(a.Extra, b.Extra) &&
		slices.Equal(a.Groups, b.Groups) && a.Public == b.Public
}

// noteRemoved records the outcome err of the store's removal of the rows
// at or below p, whose files are gone: on failure, with the rows read
// before the base's removal (before, or berr if they could not be read).
// The caller holds f.mu.
func (f *FS) noteRemoved(p string, err error, before map[string]semfs.Meta, berr error) {
	// The removals at or below p were done now, or this one covers them.
	kept := f.unremoved[:0]
	for _, r := range f.unremoved {
		if !semfs.HasPrefix(r.root, p) {
			kept = append(kept, r)
		}
	}
	f.unremoved = kept
	defer func() { f.anyUnremoved.Store(len(f.unremoved) > 0) }()
	if err == nil || (berr == nil && len(before) == 0) {
		// Done, or there was no row to remove: a row there now is
		// another process's.
		return
	}
	f.unremoved = append(f.unremoved, removal{root: p, rows: before})
}

// clearBeforeWrite clears, before the base's file at p is written, the
// rows of removed files kept at or below p (see clearUnremoved): then
// the base still tells a removed file's row from another process's when
// the removal could not read the rows. While those rows cannot be read
// it fails, and the file is not written; otherwise a failure leaves the
// row to wait (the save that follows fails to store it, as before).
func (f *FS) clearBeforeWrite(ctx context.Context, op, p string) error {
	if !f.anyUnremoved.Load() {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.unremoved) == 0 {
		return nil
	}
	err := f.clearUnremoved(ctx, p)
	if err == nil {
		return nil
	}
	for _, r := range f.unremoved {
		if r.rows == nil && (semfs.HasPrefix(p, r.root) || semfs.HasPrefix(r.root, p)) {
			return &fs.PathError{Op: op, Path: p, Err: err}
		}
	}
	return nil
}

// clearUnremoved removes, before rows at or below any of paths are
// written, the rows of removed files the store kept there (see unremoved):
// a file created again at such a path must not take the old file's
// groups and created_by, nor a file renamed there keep the old rows below
// it. It fails, and so must the write, while the store cannot read or
// remove them; the rows written meanwhile would otherwise be removed with
// them later. The caller holds f.mu.
func (f *FS) clearUnremoved(ctx context.Context, paths ...string) error {
	for i := 0; i < len(f.unremoved); {
		r := &f.unremoved[i]
		hit := false
		for _, p := range paths {
			if semfs.HasPrefix(p, r.root) || semfs.HasPrefix(r.root, p) {
				hit = true
				break
			}
		}
		if !hit {
			i++
			continue
		}
		if err := f.clearRemoval(ctx, r); err != nil {
			return fmt.Errorf("the index still holds the rows of files removed at %s and cannot remove them now (retry later): %w", r.root, err)
		}
		f.unremoved = slices.Delete(f.unremoved, i, i+1)
		f.anyUnremoved.Store(len(f.unremoved) > 0)
	}
	return nil
}

// clearRemoval removes the removed files' rows that r left in the store,
// one path at a time (never the subtree: a row another process writes
// below r.root meanwhile is not among them), and brings the restrictions
// there in step with the store: those of the removed rows go, the
// others are as the store holds them (another process may have set them,
// and this one's poller not applied them yet). Over an
// index.RemovingStore a row goes only if it is still, in the transaction
// that removes it, the row found to be a removed file's: another process
// may write a file at that very path in between. The caller holds f.mu.
func (f *FS) clearRemoval(ctx context.Context, r *removal) error {
	gone := map[string]semfs.Meta{}
	var live []semfs.Meta
	err := f.store.WalkFiles(ctx, r.root, func(row index.File) error {
		if f.removed(ctx, r, row.Meta) {
			gone[row.Path] = row.Meta
		} else {
			live = append(live, row.Meta)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, m := range live {
		f.vis.set(m.Path, m.Tags)
	}
	paths := slices.Sorted(maps.Keys(gone))
	rs, ok := f.store.(index.RemovingStore)
	if !ok {
		var done []string
		for _, p := range paths {
			if err = f.store.Remove(ctx, p, false); err != nil {
				break
			}
			done = append(done, p)
		}
		f.vis.dropEach(done)
		return err
	}
	// The rows were found to be removed files' by f.removed, the base
	// asked outside the transaction (when r.rows is nil): a row still
	// the same in it is one no file was saved at since (a save changes
	// the row), and the others are left as their writers made them.
	var removed, missing []string
	var kept []semfs.Meta
	err = rs.RemoveIf(ctx, paths, func(stored map[string]index.File) ([]string, error) {
		removed, missing, kept = removed[:0], missing[:0], kept[:0]
		for _, p := range paths {
			s, ok := stored[p]
			switch {
			case !ok:
				missing = append(missing, p) // removed meanwhile
			case sameRow(gone[p], s.Meta):
				removed = append(removed, p)
			default:
				kept = append(kept, s.Meta)
			}
		}
		return removed, nil
	})
	if err != nil {
		return err
	}
	for _, m := range kept {
		f.vis.set(m.Path, m.Tags)
	}
	f.vis.dropEach(append(removed, missing...))
	return nil
}

// RemoveAll implements semfs.RemoveAllFS.
func (f *FS) RemoveAll(ctx context.Context, name string) error {
	p, err := semfs.Clean("removeall", name)
	if err != nil {
		return err
	}
	return f.remove(ctx, "removeall", p, func() error { return semfs.RemoveAll(ctx, f.base, p) })
}

// Rename implements semfs.RenameFS: metadata follows the file (or every
// file of a directory), and links pointing at a moved path are rewritten;
// a file without groups renamed over a file with groups takes them (see
// Renames in the package doc). If the store cannot record the rename, the
// base's rename is undone and Rename fails.
func (f *FS) Rename(ctx context.Context, oldname, newname string) error {
	o, err := semfs.Clean("rename", oldname)
	if err != nil {
		return err
	}
	n, err := semfs.Clean("rename", newname)
	if err != nil {
		return err
	}
	if o == n {
		return semfs.Rename(ctx, f.base, o, n)
	}
	var embed []semfs.Meta // tag texts of the closes stored, embedded after run
	if f.deferCloses() {
		// Closes of o or n waiting for their rows are stored first, and
		// none is stored while the rows move: a close recorded meanwhile
		// (writers.deferClose) follows the rename and is stored below.
		// The front end is told after run is released: the FUSE mount's
		// cache invalidation can wait for a rename through the mount in
		// the same directory, which waits for run.
		f.closes.run.Lock()
		embed, _ = f.flushLocked(context.WithoutCancel(ctx), under(o, n))
	}
	// Rows of removed files kept at or below o or n go first
	// (unremoved): the store would move them with o's, or leave them
	// below n, and a later removal of them would take the rows moved there.
	f.mu.Lock()
	err = f.clearUnremoved(context.WithoutCancel(ctx), o, n)
	f.mu.Unlock()
	if err != nil {
		if f.deferCloses() {
			f.closes.run.Unlock()
			f.embedAll(context.WithoutCancel(ctx), embed)
		}
		return &fs.PathError{Op: "rename", Path: o, Err: err}
	}
	// Whether a file stands at n now, before the base replaces it: only
	// then may its restriction be kept (keepRestriction); a stale row of
	// a file gone from n must not restrict the file moved there.
	replaced := false
	if info, err := f.base.Stat(ctx, n); err == nil && !info.IsDir() {
		replaced = true
	}
	// From the moment n holds o's bytes it is restricted as o is, on
	// every surface, until the rows have moved (or the move is undone):
	// other surfaces do not wait for this rename.
	// (The root, or a directory into itself, cannot move: the base
	// refuses, and the paths below o would not map onto n's.)
	var before map[string][]string
	covered := o != "/" && !semfs.HasPrefix(n, o)
	if covered {
		before = f.vis.cover(o, n)
	}
	err = f.writers.rename(o, n, func() error {
		if err := semfs.Rename(ctx, f.base, o, n); err != nil {
			return err
		}
		if f.deferCloses() {
			f.closes.rename(o, n)
		}
		return nil
	})
	if err != nil {
		if covered {
			f.vis.uncover(n, before)
		}
		if f.deferCloses() {
			f.closes.run.Unlock()
			f.embedAll(context.WithoutCancel(ctx), embed)
		}
		return err
	}
	if !f.deferCloses() {
		f.changed(ctx, Change{Op: ChangeRename, Path: o, To: n})
	}
	ctx = context.WithoutCancel(ctx)
	f.mu.Lock()
	var kept *semfs.Tags
	var pending bool
	var undoKeep func()
	if replaced {
		kept, pending, undoKeep, err = f.keepRestriction(ctx, o, n)
	}
	if err == nil {
		if err = f.store.Rename(ctx, o, n); err != nil && undoKeep != nil {
			undoKeep()
		}
	}
	if err == nil {
		f.vis.rename(o, n, kept, covered)
		// A save of n (or o) that read its bytes before the rename holds
		// the replaced file's: it must not overwrite the row that moved
		// here.
		f.tickets.supersede(under(o, n))
	}
	// Else the rows, groups included, stayed at o: a restart would load
	// them there and the file at n would be public. n stays restricted
	// as o is (covered) until the rename is undone.
	f.mu.Unlock()
	if err != nil {
		err = f.undoRename(ctx, o, n, before, err)
	}
	if f.deferCloses() {
		more, _ := f.flushLocked(ctx, under(o, n))
		f.closes.run.Unlock()
		f.embedAll(ctx, append(embed, more...))
		f.changed(ctx, Change{Op: ChangeRename, Path: o, To: n})
		if err != nil {
			f.changed(ctx, Change{Op: ChangeRename, Path: n, To: o})
		}
	} else if err != nil {
		f.changed(ctx, Change{Op: ChangeRename, Path: n, To: o})
	}
	if err != nil {
		return err
	}
	if pending {
		// keepRestriction made the row of a source not stored yet.
		f.writtenBehind(ctx, n)
	}
	// The tag text holds the path: a renamed file's vector is stale.
	r, err := f.store.File(ctx, n)
	switch {
	case err == nil:
		f.tagsChanged(ctx, r.Meta)
	case errors.Is(err, semfs.ErrNotExist):
		// The source had no row yet (its close was still being
		// committed, as when a temp file is written and renamed over the
		// target), and the target's row was replaced: index the bytes.
		if info, err := f.base.Stat(ctx, n); err == nil && !info.IsDir() {
			f.writtenBehind(ctx, n)
		}
	}
	return nil
}

// keepRestriction prepares a rename of o over the file n, the way editors
// and agents save (write a temporary file, rename it over the target): if
// n's row has groups and o's has none, o's row takes n's groups and
// public flag before it moves, as an editor's save keeps a file's mode, so
// the save does not make a restricted file public. A source with groups of
// its own keeps them. It returns the tags o's row has then (nil when
// nothing was kept), whether that row was made here (o was not stored
// yet: its bytes are indexed after the move), and undo, which puts o's
// row back as it was if the store then fails to move it. The caller holds
// f.mu.
func (f *FS) keepRestriction(ctx context.Context, o, n string) (kept *semfs.Tags, pending bool, undo func(), err error) {
	info, err := f.base.Stat(ctx, n) // o's file, moved there
	if err != nil || info.IsDir() {
		return nil, false, nil, nil
	}
	// Both rows are read in the transaction that writes o's, when the
	// store can: a tag another process sets on either meanwhile is not
	// overwritten, nor decided on from an older row.
	var old index.File
	err = f.update(ctx, []string{o, n}, func(stored map[string]index.File) ([]index.Item, error) {
		kept, pending = nil, false
		dst, ok := stored[n]
		if !ok || len(dst.Groups) == 0 {
			return nil, nil // no row with groups: nothing to keep
		}
		src, ok := stored[o]
		if ok && len(src.Groups) > 0 {
			return nil, nil
		}
		if !ok {
			now := info.ModTime().UTC()
			src = index.File{Meta: semfs.Meta{Path: o, CreatedAt: now, UpdatedAt: now, Size: info.Size()},
				ModTime: info.ModTime(), State: index.StatePending}
			pending = true
		}
		old = src
		src.Tags = src.Tags.Clone()
		src.Groups = append([]string(nil), dst.Groups...)
		src.Public = dst.Public
		t := src.Tags
		kept = &t
		return []index.Item{{File: src, TagText: index.TagText(src.Meta)}}, nil
	})
	if err != nil || kept == nil {
		return nil, false, nil, err
	}
	// The undo gives o's row back its own groups and public flag, read
	// again in the transaction that writes them: a tag another process
	// set on o since is kept, and so are groups it set in place of the
	// kept ones (they are no longer this rename's to take back).
	groups := slices.Clone(kept.Groups)
	undo = func() {
		var err error
		if pending {
			err = f.store.Remove(ctx, o, false)
		} else {
			err = f.update(ctx, []string{o}, func(stored map[string]index.File) ([]index.Item, error) {
				r, ok := stored[o]
				if !ok || r.Public != kept.Public || !slices.Equal(r.Groups, groups) {
					return nil, nil
				}
				r.Tags = r.Tags.Clone()
				r.Groups, r.Public = old.Groups, old.Public
				return []index.Item{{File: r, TagText: index.TagText(r.Meta)}}, nil
			})
		}
		f.logErr("rename", o, err)
	}
	return kept, pending, undo, nil
}

// undoRename moves n back to o after the store failed (serr) to record
// the base's rename of o to n, so that the rows, restrictions included,
// and the files agree again; before is what f.vis.cover returned. A file
// the rename replaced at n stays gone (it was to be replaced; its row is
// left for Reconcile). If the undo fails too, o and n both stay
// restricted in this process only, and the error says what to do.
func (f *FS) undoRename(ctx context.Context, o, n string, before map[string][]string, serr error) error {
	if _, err := f.base.Stat(ctx, o); err == nil {
		// Another writer made a file at o meanwhile: moving n back would
		// destroy it. The file stays at n, restricted as o was.
		f.log.Error("semfs rename could not be recorded in the index, and another file now stands at the old path, so it was not undone: the moved file's tags and restrictions are still recorded under the old path; set them again (semfs tag) at the new path",
			"from", o, "to", n, "err", serr)
		return &fs.PathError{Op: "rename", Path: o, Err: fmt.Errorf(
			"the file moved to %s but the index could not record it (%v), and another file now stands at %s, so the move was not undone: its tags are recorded under %s; set them again at %s", n, serr, o, o, n)}
	}
	uerr := f.writers.rename(n, o, func() error {
		if err := semfs.Rename(ctx, f.base, n, o); err != nil {
			return err
		}
		if f.deferCloses() {
			f.closes.rename(n, o)
		}
		return nil
	})
	if uerr == nil {
		f.vis.uncover(n, before)
		f.log.Error("semfs rename undone: the index could not record it", "from", o, "to", n, "err", serr)
		return &fs.PathError{Op: "rename", Path: o, Err: fmt.Errorf(
			"the rename to %s was undone because the index could not record it (%v); the file is still at %s; retry the rename", n, serr, o)}
	}
	f.log.Error("semfs rename could not be recorded in the index nor undone: the file's tags and restrictions are still recorded under the old path, so after a restart it is visible to everyone; set its tags again (semfs tag) at the new path",
		"from", o, "to", n, "err", serr, "undo", uerr)
	return &fs.PathError{Op: "rename", Path: o, Err: fmt.Errorf(
		"the file moved to %s but the index could not record it (%v) and moving it back failed (%v): its tags are recorded under %s; set them again at %s", n, serr, uerr, o, n)}
}

func (f *FS) logErr(op, p string, err error) {
	if err != nil {
		f.log.Error("semfs index update failed; the file's bytes are safe, run 'semfs reindex' to repair the index",
			"op", op, "path", p, "err", err)
	}
}

// creator is seed 000's created_by for the principal in ctx.
func creator(ctx context.Context) string {
	if p, ok := semfs.PrincipalFrom(ctx); ok {
		if p.App != "" {
			return p.App
		}
		if p.ID != "" {
			return p.ID
		}
	}
	return "unknown"
}

func hashOf(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// written updates the row of p after data was written to it (trusted:
// data is what the caller wrote; otherwise what writtenBehind read, or nil
// for a file too large to read inline). t is the ticket of the save, taken
// before the write (trusted) or the read.
func (f *FS) written(ctx context.Context, p string, data []byte, t uint64, trusted bool) {
	ctx = context.WithoutCancel(ctx)
	if f.opts.Ignore(p) {
		return
	}
	info, err := f.base.Stat(ctx, p)
	if semfs.IsAbsence(err) {
		return // renamed or removed since; Rename and Remove keep the rows
	}
	if err != nil {
		f.logErr("write", p, err)
		return
	}
	if trusted && (info.Size() != int64(len(data)) || f.tickets.newer(p, t)) {
		// Another writer got in between; index what is there now.
		f.writtenBehind(ctx, p)
		return
	}
	s := &save{path: p, ticket: t, info: info, creator: creator(ctx), state: index.StatePending, done: make(chan bool, 1)}
	if int64(len(data)) <= f.opts.InlineBudget {
		s.content, s.state, s.reason = index.Analyze(p, data)
		s.hash = hashOf(data)
	}
	if err := f.commit(ctx, s); err != nil {
		f.logErr("write", p, err)
		return
	}
	if s.gone {
		return
	}
	if s.state == index.StatePending {
		f.enqueue(p)
	}
	if s.content != nil && f.opts.Deferred != nil && f.opts.Spaces.Content != nil && !f.closing() {
		f.opts.Deferred(embedding.SpaceContent) // its chunks' vectors
	}
	if s.newTags {
		f.tagsChanged(ctx, s.meta)
	}
}

// save is one file's row update after a write, waiting in a group.
type save struct {
	path    string
	ticket  uint64 // from f.tickets, taken before the bytes were read
	info    fs.FileInfo
	creator string
	content *index.Content
	state   string
	reason  string
	hash    string
	replay  bool // a close replayed from the journal of an earlier process

	// Set by the commit.
	meta    semfs.Meta // the row as committed
	newTags bool       // the tag text is new (first write seen)
	gone    bool       // renamed or removed before its commit, or superseded by a newer save
	err     error
	done    chan bool // true: committed (see err); false: lead the next group
}

// group is the queue of saves for the next commit. One save at a time
// leads: it commits every save queued so far in one Put, then hands the
// lead to the first save that queued meanwhile.
type group struct {
	mu      sync.Mutex
	queue   []*save
	leading bool
}

// commit stores the row of s, in one transaction with the saves that
// queued while the previous commit ran, and returns when that transaction
// is durable.
func (f *FS) commit(ctx context.Context, s *save) error {
	g := &f.group
	g.mu.Lock()
	g.queue = append(g.queue, s)
	if g.leading {
		g.mu.Unlock()
		if committed := <-s.done; committed {
			return s.err
		}
		g.mu.Lock() // handed the lead; s is still queued
	}
	g.leading = true
	batch := g.queue
	g.queue = nil
	g.mu.Unlock()

	f.commitGroup(ctx, batch)

	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].done <- false
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	return s.err
}

// tickets orders the saves of a path: a save takes a ticket before it
// reads (or writes) the file's bytes, and commitGroup drops a save whose
// ticket is older than one committed for the same path, since its bytes
// may be older too. Only paths with a save in flight are kept.
type tickets struct {
	mu    sync.Mutex
	next  uint64
	paths map[string]*pathTickets
}

type pathTickets struct {
	open      int    // tickets taken and not released
	last      uint64 // the newest ticket taken
	committed uint64 // the newest ticket committed
	creator   string // the writer of the oldest save that named one
}

// take returns a new ticket for p, for a save by creator ("": none, as
// for the indexer); release it once its save is done.
func (t *tickets) take(p, creator string) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	pt := t.takeLocked(p)
	if pt.creator == "" {
		pt.creator = creator
	}
	return t.next
}

// takeLocked takes the next ticket for p and returns p's tickets; the
// caller holds t.mu.
func (t *tickets) takeLocked(p string) *pathTickets {
	if t.paths == nil {
		t.paths = map[string]*pathTickets{}
	}
	pt := t.paths[p]
	if pt == nil {
		pt = &pathTickets{}
		t.paths[p] = pt
	}
	t.next++
	pt.open++
	pt.last = t.next
	return pt
}

// takeAll takes a ticket for each of paths, as take does for the indexer,
// under one lock: paths[i]'s is first+i.
func (t *tickets) takeAll(paths []string) (first uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	first = t.next + 1
	for _, p := range paths {
		t.takeLocked(p)
	}
	return first
}

// creator returns the writer of the oldest save of p in flight: a row
// made by a newer save names the file's first writer even if the older
// save is then dropped. Default: def.
func (t *tickets) creator(p, def string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if pt := t.paths[p]; pt != nil && pt.creator != "" {
		return pt.creator
	}
	return def
}

// release ends a ticket of p taken with take.
func (t *tickets) release(p string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if pt := t.paths[p]; pt != nil {
		if pt.open--; pt.open == 0 {
			delete(t.paths, p)
		}
	}
}

// releaseAll ends a ticket of each path that path(i) returns, i < n,
// under one lock.
func (t *tickets) releaseAll(n int, path func(i int) string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range n {
		p := path(i)
		if pt := t.paths[p]; pt != nil {
			if pt.open--; pt.open == 0 {
				delete(t.paths, p)
			}
		}
	}
}

// newer reports whether a ticket of p newer than n was taken (and is
// still held, or was committed).
func (t *tickets) newer(p string, n uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	pt := t.paths[p]
	return pt != nil && pt.last > n
}

// stale reports whether a save of p newer than ticket n was committed.
func (t *tickets) stale(p string, n uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	pt := t.paths[p]
	return pt != nil && pt.committed > n
}

// supersede makes every save in flight of a path satisfying match stale,
// as if a newer one had been committed.
func (t *tickets) supersede(match func(string) bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	for p, pt := range t.paths {
		if match(p) {
			pt.committed = t.next
		}
	}
}

// committed records that the save of p with ticket n was committed.
func (t *tickets) committed(p string, n uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if pt := t.paths[p]; pt != nil {
		pt.committed = max(pt.committed, n)
	}
}

// commitGroup builds the rows of batch from the stored ones and puts them
// in one transaction. Every save but the leader's is then released.
func (f *FS) commitGroup(ctx context.Context, batch []*save) {
	f.mu.Lock()
	now := f.opts.Now().UTC()
	// A close is committed after the fact (FUSE sends RELEASE in the
	// background): the file may have been renamed away (write a temp,
	// rename it over the target) or removed since. Its row must not come
	// back; Rename indexes the destination.
	paths := make([]string, 0, len(batch))
	for _, s := range batch {
		if _, err := f.base.Stat(ctx, s.path); semfs.IsAbsence(err) {
			s.gone = true
			continue
		}
		paths = append(paths, s.path)
	}
	// Two closes of one file can be committed out of order (FUSE sends
	// RELEASE in the background): a save whose bytes were read before
	// those of a save already committed, or of a later one in this batch,
	// would put old contents back. It is dropped.
	newest := make(map[string]uint64, len(batch))
	for _, s := range batch {
		if !s.gone {
			newest[s.path] = max(newest[s.path], s.ticket)
		}
	}
	for _, s := range batch {
		if !s.gone && (s.ticket < newest[s.path] || f.tickets.stale(s.path, s.ticket)) {
			s.gone = true
		}
	}
	// Rows of removed files kept there go first (unremoved): a file
	// created again at a removed file's path starts a row of its own.
	var blocked map[string]error
	if len(f.unremoved) > 0 {
		for _, p := range paths {
			if err := f.clearUnremoved(ctx, p); err != nil {
				if blocked == nil {
					blocked = map[string]error{}
				}
				blocked[p] = err
			}
		}
	}
	live := make([]*save, 0, len(batch))
	for _, s := range batch {
		if s.gone {
			continue
		}
		if err := blocked[s.path]; err != nil {
			s.err = err
			continue
		}
		live = append(live, s)
	}
	// Each row is built from the stored one as read in the transaction
	// that writes it (when the store can: index.UpdatingStore), so a tag
	// another process set after a separate read is not written back.
	var items []index.Item
	var at map[string]int // path → its item
	var saved []*save
	livePaths := make([]string, len(live))
	for i, s := range live {
		livePaths[i] = s.path
	}
	var err error
	if len(live) > 0 {
		err = f.update(ctx, livePaths, func(stored map[string]index.File) ([]index.Item, error) {
			items, at, saved = f.saveRows(live, stored, now)
			return items, nil
		})
	}
	if err != nil && len(saved) == 0 {
		// The rows could not be read.
		for _, s := range live {
			s.err = err
		}
	}
	errs := make([]error, len(items)) // per item
	if err != nil {
		// One bad row must not fail the group: each save gets the
		// outcome of its own row.
		for i, it := range items {
			errs[i] = err
			if len(items) > 1 {
				var of []*save // the saves of this row
				for _, s := range saved {
					if s.path == it.File.Path {
						of = append(of, s)
					}
				}
				errs[i] = f.update(ctx, []string{it.File.Path}, func(stored map[string]index.File) ([]index.Item, error) {
					one, _, _ := f.saveRows(of, stored, now)
					return one, nil
				})
			}
		}
	}
	for _, s := range saved {
		if errs[at[s.path]] == nil {
			f.tickets.committed(s.path, s.ticket)
		}
	}
	f.mu.Unlock()
	for _, s := range saved {
		s.err = errs[at[s.path]]
	}
	for _, s := range batch[1:] {
		s.done <- true
	}
}

// saveRows builds the rows of saves from the stored rows (stored), at
// time now: a row keeps the stored row's tags and creator, and a file
// without a stored row, or whose row was made by a tag or a reconcile,
// names its first writer. A path saved twice has one row, built from the
// saves in order; at maps a path to its row, and saved are the saves
// that have one. The caller holds f.mu.
func (f *FS) saveRows(saves []*save, stored map[string]index.File, now time.Time) (items []index.Item, at map[string]int, saved []*save) {
	items = make([]index.Item, 0, len(saves))
	at = make(map[string]int, len(saves))
	for _, s := range saves {
		i, seen := at[s.path]
		rec, found := stored[s.path]
		if seen {
			rec = items[i].File
		} else if !found {
			rec = index.File{Meta: semfs.Meta{Path: s.path, CreatedBy: f.tickets.creator(s.path, s.creator), CreatedAt: now}}
		}
		s.newTags = rec.UpdatedAt.IsZero()
		if rec.CreatedBy == "" {
			// The row came from a tag or a reconcile: this is the first
			// write semfs sees, so it names the creator.
			rec.CreatedBy = f.tickets.creator(s.path, s.creator)
			s.newTags = true
		}
		if !(s.replay && found && !seen && s.hash != "" && rec.Hash == s.hash) {
			// A replayed close of bytes the row holds already (it was
			// stored before the crash) changes nothing but a missing
			// creator.
			rec.UpdatedAt = now
		}
		rec.Size, rec.Hash, rec.ModTime = s.info.Size(), s.hash, s.info.ModTime()
		rec.State, rec.Reason = s.state, s.reason
		s.meta = rec.Meta
		item := index.Item{File: rec, TagText: index.TagText(rec.Meta), Content: s.content}
		if seen {
			items[i] = item
		} else {
			at[s.path] = len(items)
			items = append(items, item)
		}
		saved = append(saved, s)
	}
	return items, at, saved
}

// update reads the rows of paths, builds items from them and puts them:
// in one write transaction when the store is an index.UpdatingStore, so
// that what another process wrote between the read and the write is not
// written back; otherwise with Files, then Put.
func (f *FS) update(ctx context.Context, paths []string, build func(stored map[string]index.File) ([]index.Item, error)) error {
	if u, ok := f.store.(index.UpdatingStore); ok {
		return u.Update(ctx, paths, build)
	}
	stored, err := f.store.Files(ctx, paths)
	if err != nil {
		return err
	}
	items, err := build(stored)
	if err != nil || len(items) == 0 {
		return err
	}
	return f.store.Put(ctx, items...)
}

// tagsChanged brings the tag vector of m up to date after its tag text
// changed: inline when the text holds more than the path (seed 001's save
// path: a task or related apps are what a query looks for next), otherwise
// through the drain worker, which embeds path-only texts in batches.
func (f *FS) tagsChanged(ctx context.Context, m semfs.Meta) {
	if m.Task != "" || len(m.RelatedApps) > 0 {
		f.embedTags(ctx, m)
		return
	}
	if f.opts.Deferred != nil && f.opts.Spaces.Tags != nil && !f.closing() {
		f.opts.Deferred(embedding.SpaceTags)
	}
}

// writtenBehind re-reads p from the base and indexes it (after an
// OpenFile write, or a race between writers).
func (f *FS) writtenBehind(ctx context.Context, p string) {
	t := f.tickets.take(p, creator(ctx))
	defer f.tickets.release(p)
	info, err := f.base.Stat(ctx, p)
	if semfs.IsAbsence(err) {
		return // renamed or removed since; Rename and Remove keep the rows
	}
	if err != nil {
		f.logErr("write", p, err)
		return
	}
	if info.Size() > f.opts.InlineBudget {
		f.written(ctx, p, nil, t, false) // records the row as pending
		return
	}
	data, err := semfs.ReadFile(ctx, f.base, p)
	if err != nil {
		f.logErr("write", p, err)
		return
	}
	f.written(ctx, p, data, t, false)
}

// embedTags embeds the tag text of m inline (seed 001's save path). A
// failure is logged and left to the drain worker.
func (f *FS) embedTags(ctx context.Context, m semfs.Meta) {
	e := f.opts.Spaces.Tags
	if e == nil {
		return
	}
	text := index.TagText(m)
	vecs, err := e.Embed(ctx, []string{text})
	if err == nil && len(vecs) == 1 {
		err = f.store.SetEmbedding(ctx, embedding.SpaceTags, m.Path, text, vecs[0])
	}
	if err != nil {
		f.log.Warn("inline tag embedding failed; the drain worker will retry", "path", m.Path, "err", err)
	}
}

func (f *FS) enqueue(p string) {
	select {
	case f.queue <- p:
	default: // the row stays pending; IndexPending picks it up
	}
}

// indexer indexes queued large files in the background.
func (f *FS) indexer() {
	defer f.stopped.Done()
	for {
		select {
		case <-f.stop:
			return
		case p := <-f.queue:
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				select {
				case <-f.stop:
					cancel()
				case <-ctx.Done():
				}
			}()
			err := f.indexOne(ctx, p)
			f.logErr("index", p, err)
			if err == nil && f.opts.Deferred != nil {
				f.opts.Deferred(embedding.SpaceContent)
			}
			cancel()
		}
	}
}

// indexOne reads p from the base and rebuilds its derived data; a file gone
// from the base loses its row.
func (f *FS) indexOne(ctx context.Context, p string) error {
	t := f.tickets.take(p, "")
	defer f.tickets.release(p)
	info, err := f.base.Stat(ctx, p)
	if err != nil {
		if semfs.IsAbsence(err) {
			return f.store.Remove(ctx, p, false)
		}
		return err
	}
	var data []byte
	if info.Size() <= index.MaxIndexBytes {
		if data, err = semfs.ReadFile(ctx, f.base, p); err != nil {
			return err
		}
	} else if data, err = hashOnly(ctx, f.base, p); err != nil {
		return err
	}
	item, err := f.item(ctx, p, info, data, info.Size() > index.MaxIndexBytes)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tickets.stale(p, t) {
		return nil // a save that read the file later was committed
	}
	if err := f.clearUnremoved(ctx, p); err != nil {
		return err
	}
	// Keep the tags current: the row is read again, in the transaction
	// that writes it when the store can (another process may tag it).
	err = f.update(ctx, []string{p}, func(stored map[string]index.File) ([]index.Item, error) {
		if rec, ok := stored[p]; ok {
			item.File.Meta.Tags, item.File.CreatedBy, item.File.CreatedAt = rec.Tags, rec.CreatedBy, rec.CreatedAt
		} else {
			// Removed since item read it (a removed file's row, cleared
			// above): its tags are not this file's.
			item.File.Meta.Tags, item.File.CreatedBy, item.File.CreatedAt = semfs.Tags{}, "", info.ModTime().UTC()
		}
		item.TagText = index.TagText(item.File.Meta)
		return []index.Item{item}, nil
	})
	if err != nil {
		return err
	}
	f.tickets.committed(p, t)
	return nil
}

// hashOnly streams a file too large to index and returns its hash as the
// data's stand-in (item then records size and hash only).
func hashOnly(ctx context.Context, fsys semfs.FS, p string) ([]byte, error) {
	h, err := fsys.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	s := sha256.New()
	if _, err := io.Copy(s, h); err != nil {
		return nil, semfs.RewritePath(err, "index", p)
	}
	return []byte("sha256:" + hex.EncodeToString(s.Sum(nil))), nil
}

// item builds the index item for p from its bytes, keeping an existing
// row's tags.
func (f *FS) item(ctx context.Context, p string, info fs.FileInfo, data []byte, huge bool) (index.Item, error) {
	rec, err := f.store.File(ctx, p)
	if err != nil {
		if !errors.Is(err, semfs.ErrNotExist) {
			return index.Item{}, err
		}
		// Written behind our back: the writer is unknown.
		rec = index.File{Meta: semfs.Meta{Path: p, CreatedBy: "", CreatedAt: info.ModTime().UTC(), UpdatedAt: info.ModTime().UTC()}}
	}
	var content *index.Content
	var state, reason, hash string
	if huge {
		content, state, reason = &index.Content{}, index.StateSkipped, index.ReasonTooLarge
		hash = string(data[len("sha256:"):])
	} else {
		content, state, reason = index.Analyze(p, data)
		hash = hashOf(data)
	}
	if rec.Hash != hash {
		rec.UpdatedAt = info.ModTime().UTC()
	}
	rec.Size, rec.Hash, rec.ModTime, rec.State, rec.Reason = info.Size(), hash, info.ModTime(), state, reason
	return index.Item{File: rec, TagText: index.TagText(rec.Meta), Content: content}, nil
}

// IndexPending indexes every pending file now and returns how many it
// indexed.
func (f *FS) IndexPending(ctx context.Context) (int, error) {
	n := 0
	for {
		paths, err := f.store.PendingFiles(ctx, 256)
		if err != nil {
			return n, err
		}
		if len(paths) == 0 {
			return n, nil
		}
		progressed := false
		for _, p := range paths {
			if err := f.indexOne(ctx, p); err != nil {
				if ctx.Err() != nil {
					return n, ctx.Err()
				}
				f.logErr("index", p, err)
				continue
			}
			progressed = true
			n++
		}
		if !progressed {
			return n, semfs.PathErr("reindex", paths[0], semfs.ErrInvalid, "pending files cannot be indexed; see the log")
		}
	}
}

// Meta implements semfs.MetaFS. A file without a row (written behind the
// layer's back and not reconciled yet) and a directory get what Stat knows.
func (f *FS) Meta(ctx context.Context, name string) (semfs.Meta, error) {
	p, err := semfs.Clean("meta", name)
	if err != nil {
		return semfs.Meta{}, err
	}
	f.flushCloses(context.WithoutCancel(ctx), under(p))
	info, err := f.base.Stat(ctx, p)
	if err != nil {
		return semfs.Meta{}, err
	}
	if !info.IsDir() {
		rec, err := f.store.File(ctx, p)
		if err == nil {
			m := rec.Meta
			m.Tags = m.Tags.Clone()
			return m, nil
		}
		if !errors.Is(err, semfs.ErrNotExist) {
			return semfs.Meta{}, semfs.RewritePath(err, "meta", p)
		}
	}
	return semfs.Meta{Path: p, CreatedAt: info.ModTime().UTC(), UpdatedAt: info.ModTime().UTC(), Size: info.Size()}, nil
}

// SetTags implements semfs.MetaFS: the file's tags are replaced by tags
// (created_by, times, size and hash are kept), and the tag vector is
// re-embedded inline.
func (f *FS) SetTags(ctx context.Context, name string, tags semfs.Tags) error {
	p, err := semfs.Clean("tag", name)
	if err != nil {
		return err
	}
	info, err := f.base.Stat(ctx, p)
	if err != nil {
		return semfs.RewritePath(err, "tag", p)
	}
	if info.IsDir() {
		return semfs.PathErr("tag", p, semfs.ErrIsDir, "only files carry tags; tag the files inside the directory")
	}
	if f.opts.Ignore(p) {
		return semfs.PathErr("tag", p, semfs.ErrPermission, "semfs bookkeeping cannot be tagged")
	}
	tags = tags.Clone()
	for i, l := range tags.Links {
		c, err := semfs.Clean("tag", l)
		if err != nil {
			return semfs.PathErr("tag", p, semfs.ErrInvalid, "link "+quote(l)+" is not a valid tree path; links are absolute tree paths such as /notes/a.md")
		}
		tags.Links[i] = c
	}
	for k := range tags.Extra {
		if k == "" {
			return semfs.PathErr("tag", p, semfs.ErrInvalid, "empty key in key=value tags; write key=value with a non-empty key")
		}
	}
	ctx = context.WithoutCancel(ctx)
	f.flushCloses(ctx, under(p))
	f.mu.Lock()
	if err := f.clearUnremoved(ctx, p); err != nil {
		f.mu.Unlock()
		return &fs.PathError{Op: "tag", Path: p, Err: err}
	}
	// The row is read in the transaction that writes it when the store
	// can: a save by another process in between keeps its creator and
	// bytes' fields.
	var rec index.File
	pending := false
	err = f.update(ctx, []string{p}, func(stored map[string]index.File) ([]index.Item, error) {
		var ok bool
		if rec, ok = stored[p]; !ok {
			now := info.ModTime().UTC()
			rec = index.File{Meta: semfs.Meta{Path: p, CreatedAt: now, UpdatedAt: now, Size: info.Size()},
				ModTime: info.ModTime(), State: index.StatePending}
		}
		pending = !ok
		rec.Tags = tags
		return []index.Item{{File: rec, TagText: index.TagText(rec.Meta)}}, nil
	})
	if err == nil {
		f.vis.set(p, tags)
	}
	f.mu.Unlock()
	if err != nil {
		return semfs.RewritePath(err, "tag", p)
	}
	if pending {
		f.enqueue(p)
	}
	f.embedTags(ctx, rec.Meta)
	return nil
}

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return `"` + s + `"`
}
