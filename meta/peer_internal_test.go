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
	redo, changed := r.applyPeers(false, []string{"/own.txt", "/peer.txt"}, nil, map[string][]string{"/peer.txt": fin})
	if !slices.Equal(changed, []string{"/peer.txt"}) {
		t.Errorf("changed = %v, want [/peer.txt]", changed)
	}
	if !slices.Equal(r.paths, []string{"/own.txt", "/peer.txt"}) {
		t.Errorf("restricted after apply = %v, want the own change kept and the peer's applied", r.paths)
	}
	if !slices.Equal(redo, []string{"/own.txt"}) {
		t.Errorf("redo = %v, want [/own.txt]", redo)
	}
	// Next poll: the own path read again (the store now says public);
	// nothing changed here meanwhile, so the store's row wins.
	redo, changed = r.applyPeers(false, nil, []string{"/own.txt"}, map[string][]string{})
	if !slices.Equal(r.paths, []string{"/peer.txt"}) || len(redo) != 0 || !slices.Equal(changed, []string{"/own.txt"}) {
		t.Errorf("restricted = %v, redo %v, changed %v; want [/peer.txt], nothing to redo, /own.txt changed", r.paths, redo, changed)
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
	redo, _ = r.applyPeers(false, nil, nil, map[string][]string{})
	if !slices.Equal(redo, []string{"/moved.txt"}) || len(r.covers) != 0 {
		t.Errorf("after uncover: redo %v, covers %v; want /moved.txt read again and no cover", redo, r.covers)
	}
	// A subtree read again drops what the store no longer restricts
	// below it and adds what it does.
	r.put("/d/a", fin)
	_, changed = r.applyPeers(false, nil, []string{"/d"}, map[string][]string{"/d/b": fin})
	slices.Sort(changed)
	if !slices.Equal(r.paths, []string{"/d/b", "/peer.txt"}) || !slices.Equal(changed, []string{"/d/a", "/d/b"}) {
		t.Errorf("after reading /d again: %v, changed %v; want [/d/b /peer.txt], changed [/d/a /d/b]", r.paths, changed)
	}
	// A reload of everything reports what differs.
	_, changed = r.applyPeers(true, nil, nil, map[string][]string{"/d/b": fin, "/e": fin})
	slices.Sort(changed)
	if !slices.Equal(r.paths, []string{"/d/b", "/e"}) || !slices.Equal(changed, []string{"/e", "/peer.txt"}) {
		t.Errorf("after a reload: %v, changed %v; want [/d/b /e], changed [/e /peer.txt]", r.paths, changed)
	}
}
