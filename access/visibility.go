package access

import (
	"context"
	"errors"
	"io/fs"

	"github.com/semfs/semfs"
)

// VisibilityFS is implemented by metadata layers that answer per-file
// visibility (seed 003: public, or a set of groups) cheaply, in bulk. The
// access layer prefers it to asking Meta file by file, and to scanning a
// directory's files to decide whether the directory itself is visible.
//
// The rules it must follow: a file is visible to p when its tags are
// (semfs.Tags.VisibleTo); a directory is visible when it holds at least one
// visible file or no file at all (so a directory whose files are all hidden
// does not exist for p, as in a tree pruned to the session's groups).
type VisibilityFS interface {
	semfs.FS
	// VisibleTo reports whether the file or directory name is visible to
	// p. For a missing name either answer is allowed: callers look a path
	// up before asking.
	VisibleTo(ctx context.Context, p semfs.Principal, name string) (bool, error)
	// HiddenIn returns the names of the entries of directory dir that are
	// hidden from p, or nil when none is.
	HiddenIn(ctx context.Context, p semfs.Principal, dir string) (map[string]bool, error)
}

// view decides visibility for one call. A nil view (no principal, an
// admin, or a tree without metadata) sees everything and costs nothing.
type view struct {
	f    *FS
	ctx  context.Context
	pr   semfs.Principal
	dirs map[string]bool // per-call cache of directory answers
}

// view returns the visibility view of the principal in ctx, or nil when
// nothing can be hidden. No principal means a host call: nothing is hidden
// (path rules still apply).
func (f *FS) view(ctx context.Context) *view {
	if f.hook != nil {
		return &view{f: f, ctx: ctx}
	}
	if f.vis == nil && f.meta == nil {
		return nil
	}
	pr, ok := semfs.PrincipalFrom(ctx)
	if !ok || pr.Admin {
		return nil
	}
	return &view{f: f, ctx: ctx, pr: pr}
}

// active reports whether v can hide anything.
func (v *view) active() bool { return v != nil }

// visible reports whether p (a directory if isDir) is visible.
func (v *view) visible(p string, isDir bool) (bool, error) {
	if v == nil || p == "/" {
		return true, nil
	}
	switch {
	case v.f.hook != nil:
		return v.f.hook(v.ctx, p)
	case v.f.vis != nil:
		return v.f.vis.VisibleTo(v.ctx, v.pr, p)
	case isDir:
		return v.dirVisible(p)
	default:
		return v.fileVisible(p)
	}
}

// fileVisible asks the metadata of one file.
func (v *view) fileVisible(p string) (bool, error) {
	m, err := v.f.meta.Meta(v.ctx, p)
	if err != nil {
		if semfs.IsAbsence(err) {
			// Gone (or never there): nothing is hidden. Callers looked
			// the path up first; the backend answers for it.
			return true, nil
		}
		return false, err
	}
	return m.Tags.VisibleTo(v.pr), nil
}

// dirVisible scans the files below p until it finds a visible one.
func (v *view) dirVisible(p string) (bool, error) {
	if ok, seen := v.dirs[p]; seen {
		return ok, nil
	}
	ok, err := func() (bool, error) {
		sawFile := false
		for fp, err := range semfs.Files(v.ctx, v.f.inner, p) {
			if err != nil {
				if semfs.IsAbsence(err) {
					return !sawFile, nil
				}
				return false, err
			}
			sawFile = true
			vis, err := v.fileVisible(fp)
			if err != nil || vis {
				return vis, err
			}
		}
		return !sawFile, nil
	}()
	if err != nil {
		return false, err
	}
	if v.dirs == nil {
		v.dirs = map[string]bool{}
	}
	v.dirs[p] = ok
	return ok, nil
}

// listing returns the entries of directory dir (whose listing is entries)
// hidden from the principal, nil when none is, and fails with hidden when
// dir itself is.
func (v *view) listing(dir string, entries []fs.DirEntry) (map[string]bool, error) {
	if v.f.hook != nil || v.f.vis != nil {
		if ok, err := v.visible(dir, true); err != nil || !ok {
			if err == nil {
				err = hidden("readdir", dir)
			}
			return nil, err
		}
		if v.f.hook == nil {
			return v.f.vis.HiddenIn(v.ctx, v.pr, dir)
		}
	}
	var hiddenNames map[string]bool
	sawFile := false // a visible file among the entries
	for _, e := range entries {
		ok, err := v.visible(semfs.Join(dir, e.Name()), e.IsDir())
		if err != nil {
			return nil, err
		}
		sawFile = sawFile || (ok && !e.IsDir())
		if !ok {
			if hiddenNames == nil {
				hiddenNames = map[string]bool{}
			}
			hiddenNames[e.Name()] = true
		}
	}
	// From metadata, a visible file in dir shows that dir is visible;
	// otherwise it takes a scan of the files below.
	if v.f.hook == nil && !sawFile && dir != "/" {
		if ok, err := v.dirVisible(dir); err != nil || !ok {
			if err == nil {
				err = hidden("readdir", dir)
			}
			return nil, err
		}
	}
	return hiddenNames, nil
}

// absentBelow returns err, the wrapped tree's error for p, unless it says
// that a file is on the way to p (or is p, where a directory is wanted:
// not a directory) and that file is hidden from the principal: then it
// returns what a path below an absent name gets, ErrNotExist with the
// same operation and path and no detail, since "not a directory" (or a
// detail such as "a file exists at this path") would tell that the hidden
// file is there.
//
// A create below a hidden file gets ErrNotExist too, though below an
// absent name it succeeds (WriteFile and MkdirAll make the missing
// parents): it cannot succeed, since the parent cannot be made without
// replacing the file, and any other error names a file that is there.
// ErrNotExist is what a create gets where its parent directory is missing
// (Mkdir, OpenFile with O_CREATE), so it is the least telling answer.
func (f *FS) absentBelow(ctx context.Context, p string, err error) error {
	if err == nil || !errors.Is(err, semfs.ErrNotDir) {
		return err
	}
	v := f.view(ctx)
	if !v.active() {
		return err
	}
	if hid, herr := f.hiddenOnWay(ctx, v, p); herr != nil || !hid {
		return err
	}
	op := "stat"
	var pe *fs.PathError
	if errors.As(err, &pe) {
		op = pe.Op
	}
	return hidden(op, p)
}

// hiddenOnWay reports whether the first file on the way from the root to
// p (p included) is hidden from v's principal.
func (f *FS) hiddenOnWay(ctx context.Context, v *view, p string) (bool, error) {
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		q := p[:i]
		info, err := f.inner.Stat(ctx, q)
		if err != nil {
			return false, nil // absent on the way: nothing is hidden here
		}
		if !info.IsDir() {
			ok, err := v.visible(q, false)
			return !ok, err
		}
	}
	return false, nil
}
