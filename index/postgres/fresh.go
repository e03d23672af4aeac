package postgres

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/semfs/semfs/index"
)

// Freshness of the in-memory tag table and vectors across daemons.
//
// Every write transaction raises semfs_gen.n (one row: writers of all
// daemons serialise on it, as their NOTIFYs serialise at commit anyway)
// and names the value in its notifications. PostgreSQL delivers
// notifications in commit order, so the listener knows which generation
// memory has applied. A lookup answered from memory reads n (one SELECT)
// and waits until memory has applied every generation up to it: other
// daemons' through the listener, this daemon's own as soon as write
// applied them locally. It waits at most freshWait (the listener
// reconnecting, which then reloads everything), then answers from memory
// as it is. Without a listener (Options.NoListen: one daemon) there is
// nothing to wait for and no SELECT.

// freshWait bounds how long a lookup waits for the listener.
const freshWait = 2 * time.Second

// freshness tracks the generations memory has applied.
type freshness struct {
	mu      sync.Mutex
	applied int64          // every generation up to this is applied
	own     map[int64]bool // generations above applied this daemon applied itself
	moved   chan struct{}  // closed (and replaced) when applied or own change
}

// caughtUp reports whether every generation up to gen is applied.
// Call it holding mu.
func (f *freshness) caughtUp(gen int64) bool {
	for g := f.applied + 1; g <= gen; g++ {
		if !f.own[g] {
			return false
		}
	}
	return true
}

// signal wakes waiting lookups. Call it holding mu.
func (f *freshness) signal() {
	if f.moved != nil {
		close(f.moved)
	}
	f.moved = make(chan struct{})
}

// advance records that the listener applied generation gen (and so, in
// commit order, every one before it).
func (f *freshness) advance(gen int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for g := range f.own {
		if g <= gen {
			delete(f.own, g)
		}
	}
	if gen > f.applied {
		f.applied = gen
	}
	f.signal()
}

// ownApplied records that this daemon applied its own write of
// generation gen.
func (f *freshness) ownApplied(gen int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if gen <= f.applied {
		return
	}
	if f.own == nil {
		f.own = map[int64]bool{}
	}
	f.own[gen] = true
	f.signal()
}

// wait waits until every generation up to gen is applied, ctx ends, or
// freshWait passes, and reports whether memory caught up.
func (f *freshness) wait(ctx context.Context, gen int64) bool {
	timeout := time.NewTimer(freshWait)
	defer timeout.Stop()
	for {
		f.mu.Lock()
		if f.caughtUp(gen) {
			f.mu.Unlock()
			return true
		}
		if f.moved == nil {
			f.moved = make(chan struct{})
		}
		moved := f.moved
		f.mu.Unlock()
		select {
		case <-moved:
		case <-ctx.Done():
			return false
		case <-timeout.C:
			return false
		}
	}
}

// readGen reads the generation of the last committed write.
func (ix *Index) readGen(ctx context.Context) (int64, error) {
	var gen int64
	err := ix.pool.QueryRow(ctx, `SELECT n FROM semfs_gen WHERE id = 1`).Scan(&gen)
	return gen, err
}

// refresh waits until memory shows every committed write (see above).
func (ix *Index) refresh(ctx context.Context) {
	if ix.listenCancel == nil {
		return
	}
	gen, err := ix.readGen(ctx)
	if err != nil {
		return // the lookup answers from memory; the write path reports outages
	}
	if !ix.fresh.wait(ctx, gen) && ctx.Err() == nil {
		ix.log.Warn("index: memory did not catch up with other daemons' writes; answering from it as it is", "generation", gen)
	}
}

// loadAt loads everything, as of at least the generation read first.
func (ix *Index) loadAt(ctx context.Context) error {
	gen, err := ix.readGen(ctx)
	if err != nil {
		return ix.storeErr("open index", "/", err)
	}
	if err := ix.load(ctx); err != nil {
		return err
	}
	// The peer log holds no write up to gen (at Open) or misses some (a
	// reconnect): any row may have changed then.
	ix.peers.mu.Lock()
	ix.peers.from = max(ix.peers.from, gen)
	ix.peers.mu.Unlock()
	ix.fresh.advance(gen)
	return nil
}

// peerKeep is how many changes the peer log keeps: a reader further
// behind is told that every row may have changed.
const peerKeep = 4096

// peerLog keeps the paths of recent committed writes (this daemon's,
// logged just before they commit, and the other daemons' as the listener
// receives them) by generation, for PeerChanges.
type peerLog struct {
	mu      sync.Mutex
	from    int64 // every change of a generation above from is in entries
	entries []peerEntry
}

type peerEntry struct {
	gen   int64
	all   bool // every row may have changed (a reload)
	paths []string
}

// record logs what change ch (or one part of it) did to rows.
func (l *peerLog) record(ch *change) {
	if !ch.Reload && len(ch.Paths) == 0 && len(ch.Removed) == 0 {
		return // vectors only
	}
	e := peerEntry{gen: ch.Gen, all: ch.Reload}
	e.paths = append(append(e.paths, ch.Removed...), ch.Paths...)
	l.add(e)
}

func (l *peerLog) add(e peerEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, e)
	if len(l.entries) > 2*peerKeep {
		// Entries arrive about in generation order (own writes and the
		// listener's interleave): drop the oldest half.
		slices.SortFunc(l.entries, func(a, b peerEntry) int { return cmp.Compare(a.gen, b.gen) })
		drop := len(l.entries) - peerKeep
		l.from = max(l.from, l.entries[drop-1].gen)
		l.entries = append(l.entries[:0], l.entries[drop:]...)
	}
}

var _ index.PeerStore = (*Index)(nil)

// PeerChanges implements index.PeerStore: the paths of the rows written
// after since (by this daemon too, so that a caller mirrors what the
// store holds), up to the last committed generation, from the peer log
// (so it waits, as lookups do, until the listener has received every
// write up to that generation). The cursor is a generation plus one. One
// SELECT when nothing was written; none without a listener (NoListen:
// no other daemon writes), which reports nothing but All for the zero
// cursor.
func (ix *Index) PeerChanges(ctx context.Context, since index.Cursor) (index.Changes, error) {
	same := index.Changes{Next: since}
	if ix.listenCancel == nil {
		if since == 0 {
			return index.Changes{All: true, Next: 1}, nil
		}
		return same, nil
	}
	gen, err := ix.readGen(ctx)
	if err != nil {
		return same, ix.storeErr("changes", "/", err)
	}
	next := index.Cursor(gen + 1)
	if since == next {
		return same, nil
	}
	if since == 0 {
		return index.Changes{All: true, Next: next}, nil
	}
	if !ix.fresh.wait(ctx, gen) {
		if err := ctx.Err(); err != nil {
			return same, err
		}
		return same, ix.storeErr("changes", "/", errors.New("the notifications of other daemons' writes have not arrived"))
	}
	seen := int64(since) - 1
	l := &ix.peers
	l.mu.Lock()
	defer l.mu.Unlock()
	if seen < l.from || seen > gen {
		return index.Changes{All: true, Next: next}, nil
	}
	ch := index.Changes{Next: next}
	dup := map[string]bool{}
	for _, e := range l.entries {
		if e.gen <= seen || e.gen > gen {
			continue
		}
		if e.all {
			return index.Changes{All: true, Next: next}, nil
		}
		for _, p := range e.paths {
			if !dup[p] {
				dup[p] = true
				ch.Paths = append(ch.Paths, p)
			}
		}
	}
	return ch, nil
}
