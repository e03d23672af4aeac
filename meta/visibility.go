package meta

import (
	"context"
	"sort"
	"strings"
	"sync"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// restricted is the in-memory set of files whose tags restrict who sees
// them (groups set, not public), sorted by path, so that visibility is
// answered without a store round trip. It is loaded at New and kept in step
// with SetTags, Rename and Remove, each changing it only once the store
// holds the change: a restart loads it from the store, and a row the store
// keeps (search hits, snippets) must stay as restricted as it is there. A
// restricted path whose file is gone is visible to nobody. Changes other
// processes make to the store reach it through the peer poller (peer.go).
type restricted struct {
	mu     sync.RWMutex
	paths  []string            // sorted
	groups map[string][]string // path → groups

	// With tracking set (a peer poller runs), touched collects the paths
	// (each standing for its subtree) this process changed since the
	// poller last applied what the store holds, and covers counts the
	// subtrees cover restricts until uncover: the poller leaves those as
	// memory has them and reads them again next time (peer.go).
	tracking bool
	touched  []string
	covers   map[string]int
}

func (r *restricted) load(ctx context.Context, store index.Store) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paths, r.groups = nil, map[string][]string{}
	return store.WalkFiles(ctx, "/", func(f index.File) error {
		if len(f.Groups) > 0 && !f.Public {
			r.paths = append(r.paths, f.Path)
			r.groups[f.Path] = append([]string(nil), f.Groups...)
		}
		return nil
	})
}

func (r *restricted) set(p string, t semfs.Tags) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.touch(p)
	var g []string
	if len(t.Groups) > 0 && !t.Public {
		g = append([]string(nil), t.Groups...)
	}
	r.put(p, g)
}

// put makes p restricted to groups g, or not restricted when g is empty.
// The caller holds r.mu.
func (r *restricted) put(p string, g []string) {
	i := sort.SearchStrings(r.paths, p)
	has := i < len(r.paths) && r.paths[i] == p
	if len(g) > 0 {
		if !has {
			r.paths = append(r.paths, "")
			copy(r.paths[i+1:], r.paths[i:])
			r.paths[i] = p
		}
		r.groups[p] = g
		return
	}
	if has {
		r.paths = append(r.paths[:i], r.paths[i+1:]...)
		delete(r.groups, p)
	}
}

// touch records that this process changed the restrictions at or below
// p. The caller holds r.mu.
func (r *restricted) touch(p string) {
	if r.tracking {
		r.touched = append(r.touched, p)
	}
}

// under returns the range of restricted paths at or below dir.
func (r *restricted) under(dir string) (lo, hi int) {
	if dir == "/" {
		return 0, len(r.paths)
	}
	lo = sort.SearchStrings(r.paths, dir)
	hi = sort.SearchStrings(r.paths, dir+"0") // '0' follows '/'
	return lo, hi
}

// restrictedAt reports whether a restricted path is n or lies below it.
func (r *restricted) restrictedAt(n string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if n == "/" {
		return len(r.paths) > 0
	}
	// The first path at or after n, then the first at or after n+"/":
	// those are n itself and the first path below n, if any.
	i := sort.SearchStrings(r.paths, n)
	if i < len(r.paths) && r.paths[i] == n {
		return true
	}
	j := i + sort.Search(len(r.paths)-i, func(k int) bool { return !beforeChildren(r.paths[i+k], n) })
	return j < len(r.paths) && semfs.HasPrefix(r.paths[j], n)
}

// beforeChildren reports whether q sorts before n+"/" (so before every
// path below n), without building that string.
func beforeChildren(q, n string) bool {
	if len(q) <= len(n) {
		return q <= n
	}
	if c := strings.Compare(q[:len(n)], n); c != 0 {
		return c < 0
	}
	return q[len(n)] < '/'
}

func (r *restricted) drop(dir string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.touch(dir)
	lo, hi := r.under(dir)
	for _, p := range r.paths[lo:hi] {
		if semfs.HasPrefix(p, dir) {
			delete(r.groups, p)
		}
	}
	kept := r.paths[:lo]
	for _, p := range r.paths[lo:hi] {
		if !semfs.HasPrefix(p, dir) {
			kept = append(kept, p)
		}
	}
	r.paths = append(kept, r.paths[hi:]...)
}

// dropEach lifts the restrictions of exactly paths (and of nothing
// below them).
func (r *restricted) dropEach(paths []string) {
	if len(paths) == 0 {
		return
	}
	gone := make(map[string]bool, len(paths))
	for _, p := range paths {
		gone[p] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := r.paths[:0]
	for _, p := range r.paths {
		if gone[p] {
			r.touch(p)
			delete(r.groups, p)
		} else {
			kept = append(kept, p)
		}
	}
	r.paths = kept
}

// rename moves the restrictions at or below o to the same place below n,
// replacing n's, in one step (a moved restricted file is never seen
// unrestricted). tags, if not nil, are the tags of the row now at n (a
// file renamed over a restricted one keeps that restriction).
//
// covered: n was covered (cover) for the rename, which this settles.
func (r *restricted) rename(o, n string, tags *semfs.Tags, covered bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.touch(o)
	r.touch(n)
	if covered && r.covers[n] > 0 {
		if r.covers[n]--; r.covers[n] == 0 {
			delete(r.covers, n)
		}
	}
	moved := map[string][]string{}
	for p, g := range r.subtree(o) {
		moved[n+p[len(o):]] = g
	}
	if tags != nil {
		delete(moved, n)
		if len(tags.Groups) > 0 && !tags.Public {
			moved[n] = append([]string(nil), tags.Groups...)
		}
	}
	r.replace(o, nil)
	r.replace(n, moved)
}

// cover restricts the paths at or below n as the paths at or below o are
// (which stay restricted too), replacing what n's subtree held, and
// returns what it held, for uncover.
func (r *restricted) cover(o, n string) (before map[string][]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.touch(n)
	if r.tracking {
		if r.covers == nil {
			r.covers = map[string]int{}
		}
		r.covers[n]++
	}
	before = r.subtree(n)
	lo, hi := r.under(o)
	moved := map[string][]string{}
	for _, p := range r.paths[lo:hi] {
		if semfs.HasPrefix(p, o) {
			moved[n+p[len(o):]] = r.groups[p]
		}
	}
	r.replace(n, moved)
	return before
}

// uncover puts back in n's subtree what cover returned.
func (r *restricted) uncover(n string, before map[string][]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.touch(n)
	if r.covers[n] > 0 {
		if r.covers[n]--; r.covers[n] == 0 {
			delete(r.covers, n)
		}
	}
	r.replace(n, before)
}

// subtree returns the restricted paths at or below dir with their groups.
// The caller holds r.mu.
func (r *restricted) subtree(dir string) map[string][]string {
	out := map[string][]string{}
	lo, hi := r.under(dir)
	for _, p := range r.paths[lo:hi] {
		if semfs.HasPrefix(p, dir) {
			out[p] = r.groups[p]
		}
	}
	return out
}

// replace makes m (paths at or below dir) the restricted paths at or below
// dir. The caller holds r.mu.
func (r *restricted) replace(dir string, m map[string][]string) {
	lo, hi := r.under(dir)
	kept := make([]string, 0, len(r.paths)+len(m))
	kept = append(kept, r.paths[:lo]...)
	for _, p := range r.paths[lo:hi] {
		if semfs.HasPrefix(p, dir) {
			delete(r.groups, p)
		} else {
			kept = append(kept, p)
		}
	}
	kept = append(kept, r.paths[hi:]...)
	for p, g := range m {
		r.groups[p] = g
		kept = append(kept, p)
	}
	sort.Strings(kept)
	r.paths = kept
}

// VisibleTo reports whether name is visible to p (the access layer's
// VisibilityFS): a file when its tags are visible to p; a directory when it
// holds a visible file or no file at all. When nothing restricted is at or
// below name the answer is true without a look at the backend, so a missing
// name answers true then and false otherwise (access.VisibilityFS allows
// either: its callers look a path up first).
func (f *FS) VisibleTo(ctx context.Context, p semfs.Principal, name string) (bool, error) {
	n, err := semfs.Clean("stat", name)
	if err != nil {
		return false, nil
	}
	if n == "/" || !f.vis.restrictedAt(n) {
		// Nothing restricted at or below n: visible if it exists, which
		// the caller found out already (access.VisibilityFS).
		return true, nil
	}
	info, err := f.base.Stat(ctx, n)
	if err != nil {
		if semfs.IsAbsence(err) {
			return false, nil
		}
		return false, err
	}
	if p.Admin || n == "/" {
		return true, nil
	}
	if !info.IsDir() {
		f.vis.mu.RLock()
		g, ok := f.vis.groups[n]
		f.vis.mu.RUnlock()
		return !ok || p.InGroup(g), nil
	}
	return f.dirVisible(ctx, p, n)
}

func (f *FS) dirVisible(ctx context.Context, p semfs.Principal, dir string) (bool, error) {
	f.vis.mu.RLock()
	lo, hi := f.vis.under(dir)
	var hidden map[string]bool
	for _, q := range f.vis.paths[lo:hi] {
		if !semfs.HasPrefix(q, dir) {
			continue
		}
		if p.InGroup(f.vis.groups[q]) {
			f.vis.mu.RUnlock()
			return true, nil
		}
		if hidden == nil {
			hidden = map[string]bool{}
		}
		hidden[q] = true
	}
	f.vis.mu.RUnlock()
	if hidden == nil {
		return true, nil // nothing restricted below
	}
	// Every restricted file below is hidden: the directory is visible if
	// it holds any other file, or no file at all.
	any := false
	for q, err := range semfs.Files(ctx, f.base, dir) {
		if err != nil {
			if semfs.IsAbsence(err) {
				return false, nil
			}
			return false, err
		}
		any = true
		if !hidden[q] {
			return true, nil
		}
	}
	return !any, nil
}

// HiddenIn returns the entries of directory dir hidden from p (nil when
// none is). Only entries with a restricted file at or below them can be
// hidden, so a directory with none below it costs one search of the
// restricted set and no allocation.
func (f *FS) HiddenIn(ctx context.Context, p semfs.Principal, dir string) (map[string]bool, error) {
	d, err := semfs.Clean("readdir", dir)
	if err != nil || p.Admin {
		return nil, nil
	}
	// The children of d that have restricted files at or below them, each
	// once. Paths below one child are contiguous in the sorted set (a stale
	// file and directory of one name may not be; then it is asked twice).
	var buf [8]string
	children := buf[:0]
	f.vis.mu.RLock()
	lo, hi := f.vis.under(d)
	for _, q := range f.vis.paths[lo:hi] {
		if q == d || !semfs.HasPrefix(q, d) {
			continue
		}
		rest := semfs.Rel(q, d)[1:]
		name, _, _ := strings.Cut(rest, "/")
		if n := len(children); n == 0 || children[n-1] != name {
			children = append(children, name)
		}
	}
	f.vis.mu.RUnlock()
	var out map[string]bool
	for _, name := range children {
		if out[name] {
			continue
		}
		ok, err := f.VisibleTo(ctx, p, semfs.Join(d, name))
		if err != nil {
			return nil, err
		}
		if !ok {
			if out == nil {
				out = map[string]bool{}
			}
			out[name] = true
		}
	}
	return out, nil
}
