package meta

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
)

// DefaultCloseDelay is the longest a deferred close waits for its row
// (Options.CloseDelay) when a front end asks for deferral without a value.
const DefaultCloseDelay = 100 * time.Millisecond

const (
	// closeBatch: a batch of deferred closes is committed once it holds
	// this many closes.
	closeBatch = 256
	// closeQueue bounds the pending closes: a close beyond it stores its
	// row itself, so that a writer faster than the committer is slowed
	// down to its pace and a flush never waits for more than a few
	// batches.
	closeQueue = 4 * closeBatch
	// closeReadTries: a close whose file cannot be read is given up after
	// this many attempts (Reconcile indexes the file later); a close
	// whose row cannot be stored is retried until it is.
	closeReadTries = 5
	// closeRetry and closeRetryMax bound the pause of the committer after
	// a failed store, doubled at each failure in a row.
	closeRetry    = 100 * time.Millisecond
	closeRetryMax = 30 * time.Second
	// closeJournalMin: the journal is rewritten with only the pending
	// closes once it holds more than this many lines and twice as many as
	// are pending.
	closeJournalMin = 512
)

// closes holds the closes whose rows are not stored yet when
// Options.CloseDelay defers them. A committer goroutine stores them in
// batches, one transaction per batch: once no close arrived for a
// twentieth of CloseDelay (5 ms by default, so a lone close is stored
// almost at once), when closeBatch are waiting, or when the oldest has
// waited CloseDelay. Every surface that reads rows calls flushCloses
// first, so none observes the lag; Options.CloseJournal keeps them across
// a crash. A close whose store failed stays pending and is retried.
type closes struct {
	mu       sync.Mutex
	pending  []queued            // in the order closed; a path appears once
	paths    map[string]struct{} // the paths of pending
	inflight map[string]queued   // the closes taken by the holder of run
	seq      uint64              // the last close's number
	newest   time.Time           // when the last close arrived
	stopped  bool                // the committer ended: add refuses
	failures int                 // batches in a row that failed
	retryAt  time.Time           // the committer waits until then after a failure
	journal  *closeJournal       // Options.CloseJournal, or nil
	log      *slog.Logger
	stopErr  error // the final flush's, for Close

	// run is held shared while a batch is read and committed, by the
	// committer or a flush (which first waits for the closes it needs
	// that another holder has in flight, see ready), and exclusively by
	// Rename and Remove: whoever holds it exclusively has every close
	// taken before it stored.
	run sync.RWMutex
	// settled is signalled (on mu) when a batch is settled.
	settled *sync.Cond

	unflushed atomic.Int64 // closes taken or pending, not yet stored
	wake      chan struct{}
	done      chan struct{} // the committer ended
}

// closed is one deferred close: the file's path and its writer's
// created_by, captured when it was closed.
type closed struct {
	path    string
	creator string
	at      time.Time
}

// queued is a close waiting in closes.
type queued struct {
	closed
	seq    uint64 // in the order recorded
	tries  int    // failed attempts to read its file
	replay bool   // from the journal of an earlier process
}

// deferCloses reports whether closes are deferred.
func (f *FS) deferCloses() bool { return f.opts.CloseDelay > 0 }

// startCloses starts the committer of deferred closes.
func (f *FS) startCloses() {
	f.closes.wake = make(chan struct{}, 1)
	f.closes.done = make(chan struct{})
	f.closes.settled = sync.NewCond(&f.closes.mu)
	if f.Unflushed() > 0 {
		f.closes.wake <- struct{}{} // replayed closes whose store failed
	}
	go f.commitCloses()
}

// add records the close of p by creator, or returns false if the
// committer ended or too many closes are pending (the caller then stores
// the row itself). The caller holds f.writers.mu, so that a rename either
// moves the path of an open writer or the path recorded here
// (writers.deferClose).
func (c *closes) add(p, creator string, now time.Time) bool {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return false
	}
	// Closed twice before its commit: the first writer named the file's
	// creator, so keep that record.
	if _, found := c.paths[p]; !found {
		if len(c.pending) >= closeQueue {
			c.mu.Unlock()
			return false
		}
		if c.paths == nil {
			c.paths = map[string]struct{}{}
		}
		c.paths[p] = struct{}{}
		c.seq++
		c.pending = append(c.pending, queued{closed: closed{path: p, creator: creator, at: now}, seq: c.seq})
		c.unflushed.Add(1)
		c.record(p, creator)
	}
	c.newest = now
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return true
}

// mark returns the number of the last close recorded, for drop.
func (c *closes) mark() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// drop forgets the pending closes at or below p recorded up to mark
// (their files were removed since), and records the removal in the
// journal; closes recorded later are of a file created again at p, and
// are kept (and recorded again after the removal). A caller that may
// find one of those closes in flight holds c.run.
func (c *closes) drop(p string, mark uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.pending[:0]
	var again []queued
	for _, d := range c.pending {
		if semfs.HasPrefix(d.path, p) {
			if d.seq <= mark {
				delete(c.paths, d.path)
				c.unflushed.Add(-1)
				continue
			}
			again = append(again, d)
		}
		kept = append(kept, d)
	}
	clear(c.pending[len(kept):])
	c.pending = kept
	if c.journal == nil || c.journal.lines == 0 {
		return
	}
	c.removed(p)
	for _, d := range again {
		c.record(d.path, d.creator)
	}
}

// rename moves the pending closes at o or below it to the same place
// below n; the caller holds f.writers.mu and c.run, after the base
// renamed o to n.
func (c *closes) rename(o, n string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.journal != nil && c.journal.lines > 0 {
		// What the journal holds of either path is stored or moot; the
		// moved closes are recorded again below.
		c.removed(n)
		c.removed(o)
	}
	kept := c.pending[:0]
	for _, d := range c.pending {
		switch {
		case semfs.HasPrefix(d.path, o):
			delete(c.paths, d.path)
			d.path = n + d.path[len(o):]
			c.record(d.path, d.creator)
		case semfs.HasPrefix(d.path, n):
			// The file the rename replaced: its close is moot.
			delete(c.paths, d.path)
			c.unflushed.Add(-1)
			continue
		}
		kept = append(kept, d)
	}
	clear(c.pending[len(kept):])
	c.pending = kept
	for _, d := range c.pending {
		c.paths[d.path] = struct{}{}
	}
}

// record writes a close to the journal, if any; the caller holds c.mu.
func (c *closes) record(p, creator string) {
	if c.journal == nil {
		return
	}
	if err := c.journal.record(p, creator); err != nil {
		c.log.Warn("semfs could not record a close in its journal; if the daemon dies before the close is stored, the file's created_by is lost", "path", p, "err", err)
	}
}

// removed writes a removal to the journal; the caller holds c.mu.
func (c *closes) removed(p string) {
	if err := c.journal.removed(p); err != nil {
		c.log.Warn("semfs could not record a removal in its close journal; after a crash a file created again there may be credited to the removed file's writer", "path", p, "err", err)
	}
}

// wanted reports whether a close whose path satisfies keep (nil: any) is
// pending or being stored.
func (c *closes) wanted(keep func(string) bool) bool {
	if c.unflushed.Load() == 0 {
		return false
	}
	if keep == nil {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for p := range c.inflight {
		if keep(p) {
			return true
		}
	}
	for _, d := range c.pending {
		if keep(d.path) {
			return true
		}
	}
	return false
}

// take removes and returns up to max pending closes whose paths satisfy
// keep (nil: all), oldest first; they are in flight until settled. With
// wait, it first waits until no close satisfying keep is in flight (a
// flush holding run shared: a batch of another holder must be stored
// before what the flush reads, and an older close of a path before a
// newer one).
func (c *closes) take(max int, keep func(string) bool, wait bool) []queued {
	c.mu.Lock()
	defer c.mu.Unlock()
	for wait && c.busy(keep) {
		if c.settled == nil {
			c.settled = sync.NewCond(&c.mu)
		}
		c.settled.Wait()
	}
	var out []queued
	kept := c.pending[:0]
	for _, d := range c.pending {
		// A path in flight is stored by its holder first (a path is in
		// flight once at a time).
		_, busy := c.inflight[d.path]
		if len(out) < max && !busy && (keep == nil || keep(d.path)) {
			out = append(out, d)
			delete(c.paths, d.path)
			if c.inflight == nil {
				c.inflight = map[string]queued{}
			}
			c.inflight[d.path] = d
		} else {
			kept = append(kept, d)
		}
	}
	clear(c.pending[len(kept):])
	c.pending = kept
	return out
}

// busy reports whether a close whose path satisfies keep (nil: any) is
// in flight; the caller holds c.mu.
func (c *closes) busy(keep func(string) bool) bool {
	for p := range c.inflight {
		if keep == nil || keep(p) {
			return true
		}
	}
	return false
}

// settle ends batch, taken with take: its closes are stored but failed,
// which go back to the head of the queue, ahead of a later close of the
// same path (the older writer names the file's creator). After a failure
// the committer pauses (retryAt). The journal is emptied once nothing is
// pending and rewritten once stored closes dominate it.
func (c *closes) settle(batch, failed []queued, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.settled != nil {
		defer c.settled.Broadcast()
	}
	for _, d := range batch {
		delete(c.inflight, d.path)
	}
	c.unflushed.Add(-int64(len(batch)))
	switch {
	case len(failed) > 0:
		c.failures++
		c.retryAt = now.Add(min(closeRetry<<min(c.failures-1, 16), closeRetryMax))
		again := make(map[string]struct{}, len(failed))
		for _, d := range failed {
			again[d.path] = struct{}{}
		}
		queue := append(make([]queued, 0, len(failed)+len(c.pending)), failed...)
		for _, d := range c.pending {
			if _, dup := again[d.path]; dup {
				continue
			}
			queue = append(queue, d)
		}
		if c.paths == nil {
			c.paths = map[string]struct{}{}
		}
		for p := range again {
			c.paths[p] = struct{}{}
		}
		c.unflushed.Add(int64(len(queue) - len(c.pending)))
		c.pending = queue
	case len(batch) > 0:
		c.failures, c.retryAt = 0, time.Time{}
	}
	if c.journal == nil {
		return
	}
	live := len(c.pending) + len(c.inflight)
	switch {
	case live == 0:
		if err := c.journal.reset(); err != nil {
			c.log.Warn("semfs could not empty its close journal", "err", err)
		}
	case c.journal.lines > closeJournalMin && c.journal.lines > 2*live:
		keep := make([]closed, 0, live)
		for _, d := range c.inflight {
			keep = append(keep, d.closed)
		}
		for _, d := range c.pending {
			keep = append(keep, d.closed)
		}
		if err := c.journal.rewrite(keep); err != nil {
			c.log.Warn("semfs could not compact its close journal", "err", err)
		}
	}
}

// due reports how long the committer should still wait before taking a
// batch (0: now), and whether anything is pending at all.
func (c *closes) due(now time.Time, maxDelay time.Duration) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) == 0 {
		return 0, false
	}
	wait := min(c.newest.Add(maxDelay/20).Sub(now), c.pending[0].at.Add(maxDelay).Sub(now))
	if len(c.pending) >= closeBatch {
		wait = 0
	}
	wait = max(wait, c.retryAt.Sub(now))
	return max(wait, 0), true
}

// commitCloses is the committer goroutine of deferred closes.
func (f *FS) commitCloses() {
	c := &f.closes
	defer close(c.done)
	ctx := context.Background()
	stop := func() {
		c.mu.Lock()
		c.stopped = true
		c.mu.Unlock()
		c.stopErr = f.flushCloses(ctx, nil)
	}
	for {
		select {
		case <-f.stop:
			stop()
			return
		case <-c.wake:
		}
		for {
			wait, pending := c.due(time.Now(), f.opts.CloseDelay)
			if !pending {
				break
			}
			if wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-f.stop:
					t.Stop()
					stop()
					return
				case <-t.C:
				}
				continue
			}
			c.run.RLock()
			batch := c.take(closeBatch, nil, false)
			if len(batch) == 0 {
				// All that is due is in flight in a flush: wait for it.
				c.run.RUnlock()
				c.mu.Lock()
				if c.busy(nil) {
					c.settled.Wait()
				}
				c.mu.Unlock()
				continue
			}
			failed, embed, _ := f.storeCloses(ctx, batch)
			c.settle(batch, failed, time.Now())
			c.run.RUnlock()
			f.embedAll(ctx, embed)
		}
	}
}

// Flush stores the rows of every file closed so far whose row a deferred
// close (Options.CloseDelay) left for later, and returns when they are
// committed. Query, Search, Meta, SetTags and Rename flush first; a front
// end that reads the index itself (a snapshot, a backlog count) calls
// Flush before it. If a row could not be stored, Flush returns the error;
// the close stays pending (and journalled) and is retried.
func (f *FS) Flush(ctx context.Context) error {
	return f.flushCloses(ctx, nil)
}

// Unflushed returns how many closed files still wait for their rows to be
// stored (Options.CloseDelay).
func (f *FS) Unflushed() int { return int(f.closes.unflushed.Load()) }

// flushCloses stores the pending closes whose paths satisfy keep (nil:
// all) now, after a batch of them the committer is storing; it returns
// at once if none is pending or being stored, whatever else is. A close
// that fails is tried once per flush; the first error is returned.
func (f *FS) flushCloses(ctx context.Context, keep func(string) bool) error {
	c := &f.closes
	if !c.wanted(keep) {
		return nil
	}
	c.run.RLock()
	embed, err := f.flushLocked(ctx, keep)
	c.run.RUnlock()
	f.embedAll(ctx, embed)
	return err
}

// flushLocked is flushCloses for a caller holding c.run (shared or
// exclusive), which embeds the returned tag texts (embedAll) once it
// released run.
func (f *FS) flushLocked(ctx context.Context, keep func(string) bool) ([]semfs.Meta, error) {
	var embed []semfs.Meta
	var first error
	tried := map[string]struct{}{}
	for {
		batch := f.closes.take(closeBatch, func(p string) bool {
			if _, done := tried[p]; done {
				return false
			}
			return keep == nil || keep(p)
		}, true)
		if len(batch) == 0 {
			return embed, first
		}
		failed, e, err := f.storeCloses(ctx, batch)
		for _, d := range failed {
			tried[d.path] = struct{}{}
		}
		f.closes.settle(batch, failed, time.Now())
		embed = append(embed, e...)
		first = cmp.Or(first, err)
	}
}

// under returns a keep function for flushCloses matching paths at or
// below any of roots.
func under(roots ...string) func(string) bool {
	return func(p string) bool {
		for _, r := range roots {
			if semfs.HasPrefix(p, r) {
				return true
			}
		}
		return false
	}
}

// embedAll embeds the tag texts of metas inline (embedTags).
func (f *FS) embedAll(ctx context.Context, metas []semfs.Meta) {
	for _, m := range metas {
		f.embedTags(ctx, m)
	}
}

// storeCloses reads the files of batch and commits their rows in one
// transaction (commitGroup), then does what written does after a commit
// but embed tag texts: it returns the rows whose tag texts are embedded
// inline, for the caller to embed once it released c.run (a slow embedder
// must not hold up every flush). It returns the closes that failed and are
// to be tried again, and the first error.
func (f *FS) storeCloses(ctx context.Context, batch []queued) (failed []queued, embed []semfs.Meta, first error) {
	if len(batch) == 0 {
		return nil, nil, nil
	}
	saves := make([]*save, 0, len(batch))
	from := make([]queued, 0, len(batch)) // the close of each save
	for _, d := range batch {
		// Taken before the read and held past the commit: a save of the
		// same path outside the batch (WriteFile, or a close while the
		// layer is closing) is ordered with this one.
		t := f.tickets.take(d.path, d.creator)
		defer f.tickets.release(d.path)
		s, err := f.prepareSave(ctx, d.path, d.creator, t)
		if err != nil {
			first = cmp.Or(first, err)
			if d.tries++; d.tries < closeReadTries {
				f.log.Warn("semfs could not read a closed file to index it; will retry", "path", d.path, "err", err)
				failed = append(failed, d)
			} else {
				f.logErr("write", d.path, err)
			}
			continue
		}
		if s != nil {
			s.replay = d.replay
			saves = append(saves, s)
			from = append(from, d)
		}
	}
	if len(saves) == 0 {
		return failed, nil, first
	}
	f.commitGroup(ctx, saves)
	content, tags := false, false
	for i, s := range saves {
		if s.err != nil {
			f.log.Warn("semfs could not store a closed file's row; will retry", "path", s.path, "err", s.err)
			first = cmp.Or(first, s.err)
			failed = append(failed, from[i])
			continue
		}
		if s.gone {
			continue
		}
		if s.state == index.StatePending {
			f.enqueue(s.path)
		}
		content = content || s.content != nil
		if s.newTags {
			if s.meta.Task != "" || len(s.meta.RelatedApps) > 0 {
				embed = append(embed, s.meta)
			} else {
				tags = true
			}
		}
	}
	// Once per batch: the daemon wakes a drain worker only once saves
	// pause, so that embedding does not run beside a stream of writes.
	// Not once the layer is closing: the front end stopped its workers,
	// and the drain at the next start finds the missing vectors.
	if f.opts.Deferred != nil && !f.closing() {
		if content && f.opts.Spaces.Content != nil {
			f.opts.Deferred(embedding.SpaceContent)
		}
		if tags && f.opts.Spaces.Tags != nil {
			f.opts.Deferred(embedding.SpaceTags)
		}
	}
	return failed, embed, first
}

// closing reports whether Close was called.
func (f *FS) closing() bool {
	select {
	case <-f.stop:
		return true
	default:
		return false
	}
}

// prepareSave reads p from the base and builds its save (row fields and
// derived content) with ticket t, or returns nil if p is gone or ignored.
func (f *FS) prepareSave(ctx context.Context, p, creator string, t uint64) (*save, error) {
	if f.opts.Ignore(p) {
		return nil, nil
	}
	// One open: the handle's Stat costs no second path lookup.
	h, err := f.base.Open(ctx, p)
	if semfs.IsAbsence(err) {
		return nil, nil // removed since; Remove dropped the row
	}
	if err != nil {
		return nil, err
	}
	defer h.Close()
	info, err := h.Stat()
	if err != nil {
		return nil, semfs.RewritePath(err, "write", p)
	}
	if info.IsDir() {
		return nil, nil
	}
	s := &save{path: p, ticket: t, info: info, creator: creator, state: index.StatePending, done: make(chan bool, 1)}
	if info.Size() > f.opts.InlineBudget {
		return s, nil // recorded as pending; the indexer reads it
	}
	data := make([]byte, info.Size())
	n, err := io.ReadFull(h, data)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil // truncated meanwhile: index what was read
	} else if err == nil {
		// Grown meanwhile: read the rest.
		var more []byte
		more, err = io.ReadAll(h)
		data = append(data, more...)
		n = len(data)
	}
	if err != nil {
		return nil, semfs.RewritePath(err, "write", p)
	}
	data = data[:n]
	if int64(n) != info.Size() {
		// Written again while read: the row records what was read.
		if info, err = h.Stat(); err != nil {
			return nil, semfs.RewritePath(err, "write", p)
		}
		s.info = info
	}
	s.content, s.state, s.reason = index.Analyze(p, data)
	s.hash = hashOf(data)
	return s, nil
}
