package meta

import (
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

// closeBatch: a batch of deferred closes is committed once it holds this
// many closes.
const closeBatch = 256

// closes holds the closes whose rows are not stored yet when
// Options.CloseDelay defers them. A committer goroutine stores them in
// batches, one transaction per batch: once no close arrived for a
// twentieth of CloseDelay (5 ms by default, so a lone close is stored
// almost at once), when closeBatch are waiting, or when the oldest has
// waited CloseDelay. Every surface that reads rows calls flushCloses
// first, so none observes the lag; Options.CloseJournal keeps them across
// a crash.
type closes struct {
	mu      sync.Mutex
	pending []closed            // in the order closed; a path appears once
	paths   map[string]struct{} // the paths of pending
	newest  time.Time           // when the last close arrived
	stopped bool                // the committer ended: add refuses
	journal *closeJournal       // Options.CloseJournal, or nil
	log     *slog.Logger

	// run is held while a batch is read and committed, by the committer
	// or a flush: whoever holds it has every close taken before it
	// stored.
	run sync.Mutex

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

// deferCloses reports whether closes are deferred.
func (f *FS) deferCloses() bool { return f.opts.CloseDelay > 0 }

// startCloses starts the committer of deferred closes.
func (f *FS) startCloses() {
	f.closes.wake = make(chan struct{}, 1)
	f.closes.done = make(chan struct{})
	go f.commitCloses()
}

// add records the close of p by creator, or returns false if the
// committer ended (the caller then stores the row itself). The caller
// holds f.writers.mu, so that a rename either moves the path of an open
// writer or the path recorded here (writers.deferClose).
func (c *closes) add(p, creator string, now time.Time) bool {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return false
	}
	// Closed twice before its commit: the first writer named the file's
	// creator, so keep that record.
	if _, found := c.paths[p]; !found {
		if c.paths == nil {
			c.paths = map[string]struct{}{}
		}
		c.paths[p] = struct{}{}
		c.pending = append(c.pending, closed{path: p, creator: creator, at: now})
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

// rename moves the pending closes at o or below it to the same place
// below n; the caller holds f.writers.mu and c.run, after the base
// renamed o to n.
func (c *closes) rename(o, n string) {
	c.mu.Lock()
	defer c.mu.Unlock()
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

// stored counts n closes as stored and empties the journal once nothing
// is pending.
func (c *closes) stored(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unflushed.Add(-int64(n)) == 0 && len(c.pending) == 0 && c.journal != nil {
		if err := c.journal.reset(); err != nil {
			c.log.Warn("semfs could not empty its close journal", "err", err)
		}
	}
}

// take removes and returns up to max pending closes whose paths satisfy
// keep (nil: all), oldest first.
func (c *closes) take(max int, keep func(string) bool) []closed {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out, rest []closed
	for _, d := range c.pending {
		if len(out) < max && (keep == nil || keep(d.path)) {
			out = append(out, d)
			delete(c.paths, d.path)
		} else {
			rest = append(rest, d)
		}
	}
	c.pending = rest
	return out
}

// due reports how long the committer should still wait before taking a
// batch (0: now), and whether anything is pending at all.
func (c *closes) due(now time.Time, maxDelay time.Duration) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) == 0 {
		return 0, false
	}
	if len(c.pending) >= closeBatch {
		return 0, true
	}
	wait := min(c.newest.Add(maxDelay/20).Sub(now), c.pending[0].at.Add(maxDelay).Sub(now))
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
		f.flushCloses(ctx, nil)
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
			c.run.Lock()
			f.storeCloses(ctx, c.take(closeBatch, nil))
			c.run.Unlock()
		}
	}
}

// Flush stores the rows of every file closed so far whose row a deferred
// close (Options.CloseDelay) left for later, and returns when they are
// committed. Query, Search, Meta, SetTags and Rename flush first; a front
// end that reads the index itself (a snapshot, a backlog count) calls
// Flush before it.
func (f *FS) Flush(ctx context.Context) error {
	f.flushCloses(ctx, nil)
	return nil
}

// Unflushed returns how many closed files still wait for their rows to be
// stored (Options.CloseDelay).
func (f *FS) Unflushed() int { return int(f.closes.unflushed.Load()) }

// flushCloses stores the pending closes whose paths satisfy keep (nil:
// all) now, and waits for a batch the committer is storing.
func (f *FS) flushCloses(ctx context.Context, keep func(string) bool) {
	c := &f.closes
	if c.unflushed.Load() == 0 {
		return
	}
	c.run.Lock()
	defer c.run.Unlock()
	f.flushLocked(ctx, keep)
}

// flushLocked is flushCloses for a caller holding c.run.
func (f *FS) flushLocked(ctx context.Context, keep func(string) bool) {
	for {
		batch := f.closes.take(closeBatch, keep)
		if len(batch) == 0 {
			return
		}
		f.storeCloses(ctx, batch)
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

// storeCloses reads the files of batch and commits their rows in one
// transaction (commitGroup), then does what written does after a commit.
func (f *FS) storeCloses(ctx context.Context, batch []closed) {
	if len(batch) == 0 {
		return
	}
	defer f.closes.stored(len(batch))
	saves := make([]*save, 0, len(batch))
	for _, d := range batch {
		// Taken before the read and held past the commit: a save of the
		// same path outside the batch (WriteFile, or a close while the
		// layer is closing) is ordered with this one.
		t := f.tickets.take(d.path, d.creator)
		defer f.tickets.release(d.path)
		if s := f.prepareSave(ctx, d.path, d.creator, t); s != nil {
			saves = append(saves, s)
		}
	}
	if len(saves) == 0 {
		return
	}
	f.commitGroup(ctx, saves)
	content, tags := false, false
	for _, s := range saves {
		if s.err != nil {
			f.logErr("write", s.path, s.err)
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
				f.embedTags(ctx, s.meta)
			} else {
				tags = true
			}
		}
	}
	// Once per batch: the daemon wakes a drain worker only once saves
	// pause, so that embedding does not run beside a stream of writes.
	if f.opts.Deferred != nil {
		if content && f.opts.Spaces.Content != nil {
			f.opts.Deferred(embedding.SpaceContent)
		}
		if tags && f.opts.Spaces.Tags != nil {
			f.opts.Deferred(embedding.SpaceTags)
		}
	}
}

// prepareSave reads p from the base and builds its save (row fields and
// derived content) with ticket t, or returns nil if p is gone or ignored.
func (f *FS) prepareSave(ctx context.Context, p, creator string, t uint64) *save {
	if f.opts.Ignore(p) {
		return nil
	}
	// One open: the handle's Stat costs no second path lookup.
	h, err := f.base.Open(ctx, p)
	if semfs.IsAbsence(err) {
		return nil // removed since; Remove dropped the row
	}
	if err != nil {
		f.logErr("write", p, err)
		return nil
	}
	defer h.Close()
	info, err := h.Stat()
	if err != nil {
		f.logErr("write", p, semfs.RewritePath(err, "write", p))
		return nil
	}
	if info.IsDir() {
		return nil
	}
	s := &save{path: p, ticket: t, info: info, creator: creator, state: index.StatePending, done: make(chan bool, 1)}
	if info.Size() > f.opts.InlineBudget {
		return s // recorded as pending; the indexer reads it
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
		f.logErr("write", p, semfs.RewritePath(err, "write", p))
		return nil
	}
	data = data[:n]
	if int64(n) != info.Size() {
		// Written again while read: the row records what was read.
		if info, err = h.Stat(); err != nil {
			return nil
		}
		s.info = info
	}
	s.content, s.state, s.reason = index.Analyze(p, data)
	s.hash = hashOf(data)
	return s
}
