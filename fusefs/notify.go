package fusefs

import (
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"

	"github.com/semfs/semfs"
)

// Changes made behind the mount — through the same tree by the control
// socket, HTTP or MCP — are reported to the Server with the methods below,
// which update the inode table and tell the kernel to drop what it caches
// for the paths involved: a file's pages and attributes, a name's entry.
// With them the kernel may cache for long (Options.KeepCache, long
// Options.AttrTimeout) and still read a change as soon as the call that
// made it returned. Changes made through the mount need no report: the
// kernel made them.
//
// The methods must not be called from a request of this mount (the
// kernel may wait on that request before it takes the notification).

// Written reports that the bytes of the file at p changed in place.
func (s *Server) Written(p string) {
	t := s.t
	if in := t.inode(p); in != nil {
		notifyErr(t, "content", p, in.NotifyContent(0, 0))
	}
}

// Replaced reports that a new file stands at p (written whole to a
// temporary file and renamed over p, as hostfs does): p gets a new number,
// so that the kernel looks it up again, and handles open on the old file
// keep reading the old bytes, as on a local file system.
func (s *Server) Replaced(p string) {
	s.changed(p, "", func(t *tree) { t.dropFile(p) })
}

// Removed reports that p, and anything below it, is gone.
func (s *Server) Removed(p string) {
	s.changed(p, "", func(t *tree) {
		e, ok := t.inos[p]
		t.drop(p, !ok || e.mode == syscall.S_IFDIR)
	})
}

// Renamed reports that oldp moved to newp, replacing what newp held.
func (s *Server) Renamed(oldp, newp string) {
	if oldp == newp {
		return
	}
	s.changed(oldp, newp, func(t *tree) {
		dir := true
		if e, ok := t.inos[oldp]; ok {
			dir = e.mode == syscall.S_IFDIR
		}
		t.moveLocked(oldp, newp, dir)
	})
}

// Created reports that p was created (a directory, or a file opened with
// O_CREATE), with any missing parents: the cached listings of its
// ancestors are dropped.
func (s *Server) Created(p string) {
	s.changed(p, "", func(*tree) {})
}

// dirEntry is a name in a directory whose kernel entry is to be dropped.
type dirEntry struct {
	parent *gofs.Inode
	name   string
}

// Retagged reports that who may see p changed (its groups or public
// flag): the kernel drops the names of p and of every directory above it
// (a directory whose files are all hidden is hidden too) and the listings
// of those directories, so that no caller is answered from what was cached
// for another.
func (s *Server) Retagged(p string) {
	if p == "/" {
		return
	}
	t := s.t
	t.renamed()
	var entries []dirEntry
	var dirs []*gofs.Inode
	t.mu.Lock()
	for name := p; name != "/"; {
		dir, base := semfs.Split(name)
		if e, ok := t.inos[dir]; ok {
			if in := t.live[e.ino]; in != nil {
				entries = append(entries, dirEntry{in, base})
				dirs = append(dirs, in)
			}
		}
		name = dir
	}
	t.mu.Unlock()
	for _, e := range entries {
		notifyErr(t, "entry", e.name, e.parent.NotifyEntry(e.name))
	}
	for _, d := range dirs {
		notifyErr(t, "listing", p, d.NotifyContent(0, 0))
	}
}

// changed applies update to the table under the namespace lock (so that
// no request resolves a path halfway through), then, with no lock held,
// invalidates the kernel's entries for the names p and q (q may be empty)
// and the listings and attributes of the directories above them (a write
// may have created them).
func (s *Server) changed(p, q string, update func(t *tree)) {
	t := s.t
	var entries []dirEntry
	var dirs []*gofs.Inode
	seen := map[*gofs.Inode]bool{}
	t.ns.Lock()
	t.mu.Lock()
	for _, name := range []string{p, q} {
		if name == "" || name == "/" {
			continue
		}
		dir, base := semfs.Split(name)
		if e, ok := t.inos[dir]; ok && t.live[e.ino] != nil {
			entries = append(entries, dirEntry{t.live[e.ino], base})
		}
		for {
			if e, ok := t.inos[dir]; ok {
				if in := t.live[e.ino]; in != nil && !seen[in] {
					seen[in] = true
					dirs = append(dirs, in)
				}
			}
			if dir == "/" {
				break
			}
			dir, _ = semfs.Split(dir)
		}
	}
	update(t)
	t.renamed()
	t.mu.Unlock()
	t.ns.Unlock()
	for _, e := range entries {
		notifyErr(t, "entry", e.name, e.parent.NotifyEntry(e.name))
	}
	for _, d := range dirs {
		notifyErr(t, "listing", p, d.NotifyContent(0, 0))
	}
}

// notifyErr logs a failed notification. ENOENT means the kernel holds no
// such inode or name, which is nothing to invalidate.
func notifyErr(t *tree, what, p string, errno syscall.Errno) {
	if errno != 0 && errno != syscall.ENOENT {
		t.opts.logf("fusefs: invalidating the kernel's %s of %s: %v", what, p, errno)
	}
}

// inode returns the kernel's inode for p, or nil if it has none.
func (t *tree) inode(p string) *gofs.Inode {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.inos[p]; ok {
		return t.live[e.ino]
	}
	return nil
}

// dropFile drops the number of p if p is numbered as a file. The caller
// holds t.mu.
func (t *tree) dropFile(p string) {
	if e, ok := t.inos[p]; ok && e.mode == syscall.S_IFREG {
		t.drop(p, false)
	}
}
