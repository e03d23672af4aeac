package postgres

import (
	"context"
	"sync"
	"time"
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
	ix.fresh.advance(gen)
	return nil
}
