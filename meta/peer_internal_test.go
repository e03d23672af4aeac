package meta

import (
	"slices"
	"testing"

	"github.com/semfs/semfs"
)

// What this process changed since the poller's last apply stays as it
// set it, even when the rows the poller read are older, and is read
// again at the next poll; other paths take the store's rows.
func TestApplyPeersKeepsOwnChanges(t *testing.T) {
	r := &restricted{groups: map[string][]string{}, tracking: true}
	fin := []string{"finance"}
	r.set("/own.txt", semfs.Tags{Groups: fin})
	redo := r.applyPeers(false, []string{"/own.txt", "/peer.txt"}, nil, map[string][]string{"/peer.txt": fin})
	if !slices.Equal(r.paths, []string{"/own.txt", "/peer.txt"}) {
		t.Errorf("restricted after apply = %v, want the own change kept and the peer's applied", r.paths)
	}
	if !slices.Equal(redo, []string{"/own.txt"}) {
		t.Errorf("redo = %v, want [/own.txt]", redo)
	}
	// Next poll: the own path read again (the store now says public);
	// nothing changed here meanwhile, so the store's row wins.
	redo = r.applyPeers(false, nil, []string{"/own.txt"}, map[string][]string{})
	if !slices.Equal(r.paths, []string{"/peer.txt"}) || len(redo) != 0 {
		t.Errorf("restricted = %v, redo %v; want [/peer.txt] and nothing to redo", r.paths, redo)
	}

	// A cover (a rename the store could not record) holds until uncover,
	// through a reload of everything too.
	before := r.cover("/peer.txt", "/moved.txt")
	r.applyPeers(true, nil, nil, map[string][]string{"/peer.txt": fin})
	if !slices.Equal(r.paths, []string{"/moved.txt", "/peer.txt"}) {
		t.Errorf("after a reload with /moved.txt covered: %v", r.paths)
	}
	r.applyPeers(false, []string{"/moved.txt"}, nil, map[string][]string{})
	if !slices.Equal(r.paths, []string{"/moved.txt", "/peer.txt"}) {
		t.Errorf("a peer change of the covered /moved.txt applied: %v", r.paths)
	}
	r.uncover("/moved.txt", before)
	redo = r.applyPeers(false, nil, nil, map[string][]string{})
	if !slices.Equal(redo, []string{"/moved.txt"}) || len(r.covers) != 0 {
		t.Errorf("after uncover: redo %v, covers %v; want /moved.txt read again and no cover", redo, r.covers)
	}
	// A subtree read again drops what the store no longer restricts
	// below it and adds what it does.
	r.put("/d/a", fin)
	r.applyPeers(false, nil, []string{"/d"}, map[string][]string{"/d/b": fin})
	if !slices.Equal(r.paths, []string{"/d/b", "/peer.txt"}) {
		t.Errorf("after reading /d again: %v, want [/d/b /peer.txt]", r.paths)
	}
}
