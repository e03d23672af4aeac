package access

import (
	"context"
	"io/fs"
	"strings"
	"sync"

	"github.com/semfs/semfs"
)

var (
	_ semfs.FS               = (*FS)(nil)
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
	_ semfs.ExistsFS         = (*FS)(nil)
	_ semfs.MetaFS           = (*FS)(nil)
	_ semfs.QueryFS          = (*FS)(nil)
	_ semfs.SearchFS         = (*FS)(nil)
	_ semfs.RelatedFS        = (*FS)(nil)
	_ semfs.GrepCandidatesFS = (*FS)(nil)
	_ semfs.Unwrapper        = (*FS)(nil)
)

// FS enforces a Policy over the tree it wraps. It is safe for concurrent use.
type FS struct {
	inner semfs.FS
	pol   *policy
	quota int64
	hook  func(ctx context.Context, path string) (bool, error)
	meta  semfs.MetaFS // visibility from metadata, when inner keeps it
	vis   VisibilityFS // bulk visibility, when inner offers it
	qmu   sync.Mutex   // serialises quota-checked writes
}

// New wraps fsys with policy. It panics if the policy is invalid (see
// Policy.Validate), as regexp.MustCompile does: a policy is configuration
// checked when it is loaded.
func New(fsys semfs.FS, policy Policy) *FS {
	cp, err := compile(policy)
	if err != nil {
		panic(err)
	}
	f := &FS{inner: fsys, pol: cp, quota: policy.Quota, hook: policy.Visible}
	f.meta, _ = fsys.(semfs.MetaFS)
	f.vis, _ = fsys.(VisibilityFS)
	return f
}

// Unwrap returns the wrapped tree.
func (f *FS) Unwrap() semfs.FS { return f.inner }

// Effective returns the access the path rules give name (Unset for an
// invalid path). Visibility is not considered.
func (f *FS) Effective(name string) Access {
	p, err := clean("access", name)
	if err != nil {
		return Unset
	}
	a, _ := f.pol.access(p)
	return a
}

// clean validates name as semfs.Clean does. A path already in canonical
// form made of printable ASCII — nearly every path a front end sends —
// is accepted in one pass over a byte table, a few times faster than
// semfs.Clean, which the wrapped tree runs again anyway; anything else
// goes to semfs.Clean, so it alone decides what is valid and how a bad
// path is reported.
func clean(op, name string) (string, error) {
	if _, ok := canonical(name); ok {
		return name, nil
	}
	return semfs.Clean(op, name)
}

// cleanAt is clean that also returns the index of the path's last "/".
func cleanAt(op, name string) (string, int, error) {
	if slash, ok := canonical(name); ok {
		return name, slash, nil
	}
	p, err := semfs.Clean(op, name)
	return p, strings.LastIndexByte(p, '/'), err
}

// plainByte holds the bytes a path element may hold without a closer look:
// printable ASCII except "/" and "\\".
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '/' && c != '\\'
	}
	return t
}()

// canonical reports whether p is a path semfs.Clean returns unchanged and
// that holds only plain bytes (false means only "not certain"), and the
// index of its last "/".
func canonical(p string) (slash int, ok bool) {
	if len(p) < 2 || len(p) > semfs.MaxPathLen || p[0] != '/' {
		return 0, false
	}
	for i := 1; i < len(p); i++ {
		if c := p[i]; !plainByte[c] {
			if c != '/' || !plainElem(p[slash+1:i]) {
				return 0, false
			}
			slash = i
		}
	}
	return slash, plainElem(p[slash+1:])
}

// plainElem reports whether e is a valid element: not empty, ".", ".."
// or too long.
func plainElem(e string) bool {
	switch len(e) {
	case 0:
		return false
	case 1:
		return e != "."
	case 2:
		return e != ".."
	}
	return len(e) <= semfs.MaxNameLen
}

// hidden is the error for a path the principal may not see: it does not
// exist for them.
func hidden(op, p string) error { return semfs.PathErr(op, p, semfs.ErrNotExist, "") }

// Stat describes name. A path without access is refused, except the
// directories on the way to a granted subtree (traversal).
func (f *FS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	p, slash, err := cleanAt("stat", name)
	if err != nil {
		return nil, err
	}
	if no, r := f.pol.refusedAt(p, slash); no && p != "/" {
		// Only directories leading to granted paths show through a
		// refused area.
		var buf [16]uint64
		if ok, err := f.leadsToGrant(ctx, p, f.pol.walk(p, buf[:0])); err != nil || !ok {
			return nil, refusal("stat", p, None, r)
		}
	}
	info, err := f.inner.Stat(ctx, p)
	if err != nil {
		return nil, f.absentBelow(ctx, p, err)
	}
	if v := f.view(ctx); v.active() {
		ok, err := v.visible(p, info.IsDir())
		if err != nil {
			return nil, semfs.RewritePath(err, "stat", p)
		}
		if !ok {
			return nil, hidden("stat", p)
		}
	}
	return info, nil
}

// ReadDir lists name, leaving out what the principal may not see: paths
// without access (but keeping directories that lead to granted paths) and
// hidden files and directories.
func (f *FS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	p, err := clean("readdir", name)
	if err != nil {
		return nil, err
	}
	d := f.pol.dir(p)
	if d.self == None && p != "/" {
		if ok, err := f.leadsToGrant(ctx, p, d.s); err != nil || !ok {
			return nil, refusal("readdir", p, None, d.selfRule)
		}
	}
	entries, err := f.inner.ReadDir(ctx, p)
	if err != nil {
		return nil, f.absentBelow(ctx, p, err)
	}
	var hiddenNames map[string]bool
	if v := f.view(ctx); v.active() {
		if hiddenNames, err = v.listing(p, entries); err != nil {
			return nil, semfs.RewritePath(err, "readdir", p)
		}
	}
	if !d.someNone && len(hiddenNames) == 0 {
		return entries, nil
	}
	// Filter; the listing is copied only once an entry is left out. Most
	// entries are settled by one test of the last byte of their name, so
	// first skip those before the first that is not.
	i := 0
	if len(hiddenNames) == 0 {
		for i < len(entries) && !d.mayRefuse(entries[i].Name()) {
			i++
		}
	}
	var out []fs.DirEntry
	var cbuf [16]uint64
	for ; i < len(entries); i++ {
		e := entries[i]
		keep := true
		if n := e.Name(); (hiddenNames != nil && hiddenNames[n]) || d.mayRefuse(n) {
			if keep, err = f.listed(ctx, p, d, e, hiddenNames, cbuf[:0]); err != nil {
				return nil, err
			}
		}
		switch {
		case !keep && out == nil:
			out = make([]fs.DirEntry, i, len(entries))
			copy(out, entries[:i])
		case keep && out != nil:
			out = append(out, e)
		}
	}
	if out == nil {
		return entries, nil
	}
	return out, nil
}

// listed reports whether entry e of directory p (whose rule information is
// d) is shown.
func (f *FS) listed(ctx context.Context, p string, d *dirInfo, e fs.DirEntry, hiddenNames map[string]bool, cbuf states) (bool, error) {
	n := e.Name()
	if hiddenNames != nil && hiddenNames[n] {
		return false, nil
	}
	if !d.someNone || f.pol.child(d, n) != None {
		return true, nil
	}
	if !e.IsDir() {
		return false, nil
	}
	return f.leadsToGrant(ctx, semfs.Join(p, n), f.pol.stepAll(d.s, n, cbuf))
}

// readable checks that p may be read and is visible.
func (f *FS) readable(ctx context.Context, op, p string) error {
	if no, r := f.pol.refused(p); no && p != "/" {
		// A directory on the way to a grant is what it is.
		var buf [16]uint64
		if s := f.pol.walk(p, buf[:0]); f.pol.grantsBelow(s) {
			if info, err := f.inner.Stat(ctx, p); err == nil && info.IsDir() {
				if ok, err := f.leadsToGrant(ctx, p, s); err == nil && ok {
					return semfs.PathErr(op, p, semfs.ErrIsDir, "")
				}
			}
		}
		return refusal(op, p, None, r)
	}
	if v := f.view(ctx); v.active() {
		ok, err := v.visible(p, false)
		if err != nil {
			return semfs.RewritePath(err, op, p)
		}
		if !ok {
			return hidden(op, p)
		}
	}
	return nil
}

// Open opens a file the principal may read.
func (f *FS) Open(ctx context.Context, name string) (fs.File, error) {
	p, err := clean("open", name)
	if err != nil {
		return nil, err
	}
	if err := f.readable(ctx, "open", p); err != nil {
		return nil, err
	}
	file, err := f.inner.Open(ctx, p)
	if err != nil {
		return nil, f.absentBelow(ctx, p, err)
	}
	return file, nil
}

// ReadFile reads a file the principal may read.
func (f *FS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	p, err := clean("read", name)
	if err != nil {
		return nil, err
	}
	if err := f.readable(ctx, "read", p); err != nil {
		return nil, err
	}
	var data []byte
	if r, ok := f.inner.(semfs.ReadFileFS); ok {
		data, err = r.ReadFile(ctx, p) // p is clean already
	} else {
		data, err = semfs.ReadFile(ctx, f.inner, p)
	}
	if err != nil {
		return nil, f.absentBelow(ctx, p, err)
	}
	return data, nil
}

// Exists answers false for paths that are absent, refused or hidden.
func (f *FS) Exists(ctx context.Context, name string) (bool, error) {
	p, err := clean("exists", name)
	if err != nil {
		return false, nil
	}
	if no, _ := f.pol.refused(p); no && p != "/" {
		var buf [16]uint64
		if ok, err := f.leadsToGrant(ctx, p, f.pol.walk(p, buf[:0])); err != nil || !ok {
			return false, err
		}
	}
	info, err := f.inner.Stat(ctx, p)
	if err != nil {
		if semfs.IsAbsence(err) {
			return false, nil
		}
		return false, err
	}
	v := f.view(ctx)
	return v.visible(p, info.IsDir())
}

// leadsToGrant reports whether the directory p, refused by the rules
// (whose states there are s), holds a path they grant: then it is on the
// way to that grant and may be traversed. Subtrees no rule could grant
// anything in are not visited.
func (f *FS) leadsToGrant(ctx context.Context, p string, s states) (bool, error) {
	if !f.pol.grantsBelow(s) {
		return false, nil
	}
	entries, err := f.inner.ReadDir(ctx, p)
	if err != nil {
		if semfs.IsAbsence(err) {
			return false, nil
		}
		return false, err
	}
	cs := make(states, 0, len(s))
	for _, e := range entries {
		cs = f.pol.stepAll(s, e.Name(), cs[:0])
		if a, _ := f.pol.decide(cs); a != None {
			return true, nil
		}
		if e.IsDir() {
			ok, err := f.leadsToGrant(ctx, semfs.Join(p, e.Name()), cs)
			if err != nil || ok {
				return ok, err
			}
		}
	}
	return false, nil
}

// TotalSize reports the whole tree, hidden and refused parts included: the
// number exists to enforce a budget.
func (f *FS) TotalSize(ctx context.Context) (int64, error) {
	return semfs.TotalSize(ctx, f.inner)
}
