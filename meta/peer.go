package meta

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// DefaultPeerPoll is how often the restricted set is brought up to the
// changes other processes made to the store (Options.PeerPoll).
const DefaultPeerPoll = 250 * time.Millisecond

// peers follows, for a store other processes write too
// (index.PeerStore), the changes they make to rows, so that the
// restricted set shows their groups and public flags (see "Other
// processes" in the package doc).
type peers struct {
	store index.PeerStore

	mu     sync.Mutex   // one refresh at a time; guards the fields below
	cursor index.Cursor // changes up to here are applied
	redo   []string     // subtrees to read again: this process changed them meanwhile
	failed bool         // the last refresh failed (logged once)
}

// startPeers sets up the peer poller when the store is an
// index.PeerStore and Options.PeerPoll is not negative: it reads the
// store's cursor (before New loads the restricted set, so that nothing
// written meanwhile is missed) and turns on the tracking of this
// process's own changes. New starts the loop once the set is loaded.
func (f *FS) startPeers(ctx context.Context) error {
	ps, ok := f.store.(index.PeerStore)
	if !ok || f.opts.PeerPoll < 0 {
		return nil
	}
	ch, err := ps.PeerChanges(ctx, 0)
	if err != nil {
		return err
	}
	f.peers = &peers{store: ps, cursor: ch.Next}
	f.vis.mu.Lock()
	f.vis.tracking = true
	f.vis.mu.Unlock()
	return nil
}

// peerLoop refreshes the restricted set every Options.PeerPoll until
// Close.
func (f *FS) peerLoop() {
	defer f.stopped.Done()
	every := f.opts.PeerPoll
	if every == 0 {
		every = DefaultPeerPoll
	}
	t := time.NewTicker(every)
	defer t.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-f.stop
		cancel()
	}()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
			f.refreshPeers(ctx)
		}
	}
}

// refreshPeers applies to the restricted set the rows other processes
// changed since the last refresh: one small query when none did. A
// failure is logged (once until a refresh succeeds again) and the next
// refresh tries the same changes again.
func (f *FS) refreshPeers(ctx context.Context) {
	p := f.peers
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	err := f.refreshPeersLocked(ctx)
	switch {
	case err != nil && ctx.Err() == nil && !p.failed:
		p.failed = true
		f.log.Warn("semfs could not read the index changes of other processes; restrictions they set are not applied until it can", "err", err)
	case err == nil && p.failed:
		p.failed = false
		f.log.Info("semfs reads the index changes of other processes again")
	}
}

func (f *FS) refreshPeersLocked(ctx context.Context) error {
	p := f.peers
	ch, err := p.store.PeerChanges(ctx, p.cursor)
	if err != nil {
		return err
	}
	if !ch.All && len(ch.Paths) == 0 && len(ch.Dirs) == 0 && len(p.redo) == 0 {
		p.cursor = ch.Next
		f.vis.mu.RLock()
		idle := len(f.vis.touched) == 0
		f.vis.mu.RUnlock()
		if idle {
			return nil
		}
		// This process changed restrictions: take its record of them
		// (nothing to read, nothing it must keep).
	}
	// The restricted rows in what was read, read after PeerChanges (rows
	// changed meanwhile are reported after Next: read again next time).
	found := map[string][]string{}
	keep := func(r index.File) error {
		if len(r.Groups) > 0 && !r.Public {
			found[r.Path] = r.Groups
		}
		return nil
	}
	var paths, dirs []string
	if ch.All {
		if err := p.store.WalkFiles(ctx, "/", keep); err != nil {
			return err
		}
	} else {
		paths = ch.Paths
		for rest := paths; len(rest) > 0; {
			n := min(len(rest), 1000)
			rows, err := p.store.Files(ctx, rest[:n])
			if err != nil {
				return err
			}
			for _, r := range rows {
				keep(r)
			}
			rest = rest[n:]
		}
		dirs = topmost(append(append([]string(nil), p.redo...), ch.Dirs...))
		for _, d := range dirs {
			if err := p.store.WalkFiles(ctx, d, keep); err != nil && !semfs.IsAbsence(err) {
				return err
			}
		}
	}
	var changed []string
	p.redo, changed = f.vis.applyPeers(ch.All, paths, dirs, found)
	p.cursor = ch.Next
	if len(changed) > 0 && f.opts.PeerRetagged != nil {
		f.opts.PeerRetagged(changed)
	}
	return nil
}

// applyPeers makes the restricted set show found, the restricted rows
// the store holds among paths (exact paths) and at or below dirs, or
// among all rows when all is set, except at or below what this process
// changed since the last call (touched) or covers: those stay as memory
// has them. It returns the subtrees to read again next time and the
// paths whose restriction it changed, and starts a new record of this
// process's changes.
func (r *restricted) applyPeers(all bool, paths, dirs []string, found map[string][]string) (redo, changed []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	put := func(q string, g []string) {
		if !slices.Equal(r.groups[q], g) {
			changed = append(changed, q)
			r.put(q, g)
		}
	}
	held := append([]string(nil), r.touched...)
	for d := range r.covers {
		held = append(held, d)
	}
	held = topmost(held)
	isHeld := func(q string) bool {
		for _, h := range held {
			if semfs.HasPrefix(q, h) {
				return true
			}
		}
		return false
	}
	redo = append(redo, r.touched...)
	r.touched = nil
	if all {
		for _, q := range r.paths {
			if isHeld(q) {
				found[q] = r.groups[q]
			}
		}
		for q, g := range found {
			if isHeld(q) && r.groups[q] == nil {
				delete(found, q)
			} else if !slices.Equal(r.groups[q], g) {
				changed = append(changed, q)
			}
		}
		for _, q := range r.paths {
			if found[q] == nil {
				changed = append(changed, q)
			}
		}
		r.paths = r.paths[:0]
		for q := range found {
			r.paths = append(r.paths, q)
		}
		sort.Strings(r.paths)
		r.groups = found
		return append(redo, coversOf(r.covers)...), changed
	}
	for _, q := range paths {
		if isHeld(q) {
			redo = append(redo, q)
			continue
		}
		put(q, found[q])
	}
	for _, d := range dirs {
		lo, hi := r.under(d)
		var gone []string
		for _, q := range r.paths[lo:hi] {
			if semfs.HasPrefix(q, d) && found[q] == nil && !isHeld(q) {
				gone = append(gone, q)
			}
		}
		for _, q := range gone {
			put(q, nil)
		}
		for q, g := range found {
			if semfs.HasPrefix(q, d) && !isHeld(q) {
				put(q, g)
			}
		}
		for _, h := range held {
			if semfs.HasPrefix(h, d) || semfs.HasPrefix(d, h) {
				redo = append(redo, d)
				break
			}
		}
	}
	return topmost(redo), changed
}

func coversOf(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for d := range m {
		out = append(out, d)
	}
	return out
}

// topmost returns the paths of ps not below another, sorted, each once.
func topmost(ps []string) []string {
	if len(ps) == 0 {
		return nil
	}
	s := append([]string(nil), ps...)
	sort.Strings(s)
	out := s[:0]
	for _, q := range s {
		dup := false
		for _, t := range out {
			if semfs.HasPrefix(q, t) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, q)
		}
	}
	return out
}
