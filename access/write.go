package access

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/semfs/semfs"
)

// writable checks that p may be written: the rules give Write, and an
// existing p is visible. A hidden p fails with hiddenSentinel: ErrNotExist
// where "absent" is a consistent answer (remove, tag), ErrPermission where
// it is not (a create cannot pretend to succeed).
func (f *FS) writable(ctx context.Context, op, p string, hiddenSentinel error) error {
	if a, r := f.pol.access(p); a != Write {
		return refusal(op, p, a, r)
	}
	v := f.view(ctx)
	if !v.active() {
		return nil
	}
	info, err := f.inner.Stat(ctx, p)
	if err != nil {
		return nil // absent: the backend answers
	}
	ok, err := v.visible(p, info.IsDir())
	if err != nil {
		return semfs.RewritePath(err, op, p)
	}
	if !ok {
		if hiddenSentinel == semfs.ErrNotExist {
			return hidden(op, p)
		}
		return semfs.PathErr(op, p, hiddenSentinel, "not writable")
	}
	return nil
}

// quotaErr reports a write that would exceed the quota.
func (f *FS) quotaErr(op, p string, total, growth int64) error {
	return semfs.PathErr(op, p, semfs.ErrQuota, fmt.Sprintf(
		"writing would grow the tree by %d bytes to %d bytes; the quota is %d bytes (%d in use)",
		growth, total+growth, f.quota, total))
}

// checkGrowth fails if growing the tree by growth bytes exceeds the quota.
// Callers hold f.qmu.
func (f *FS) checkGrowth(ctx context.Context, op, p string, growth int64) error {
	if growth <= 0 {
		return nil
	}
	total, err := semfs.TotalSize(ctx, f.inner)
	if err != nil {
		return semfs.RewritePath(err, op, p)
	}
	if total+growth > f.quota {
		return f.quotaErr(op, p, total, growth)
	}
	return nil
}

// WriteFile writes a file where the rules give Write, within the quota
// (the new size replaces the old one in the count).
func (f *FS) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	p, err := clean("write", name)
	if err != nil {
		return err
	}
	if err := f.writable(ctx, "write", p, semfs.ErrPermission); err != nil {
		return err
	}
	if f.quota > 0 {
		f.qmu.Lock()
		defer f.qmu.Unlock()
		var old int64
		if info, err := f.inner.Stat(ctx, p); err == nil && info.Mode().IsRegular() {
			old = info.Size()
		}
		if err := f.checkGrowth(ctx, "write", p, int64(len(data))-old); err != nil {
			return err
		}
	}
	return f.absentBelow(ctx, p, semfs.WriteFile(ctx, f.inner, p, data, perm))
}

func isWriteFlag(flag int) bool {
	return flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0
}

// OpenFile opens a file: for reading where the rules give Read, for writing
// where they give Write. With a quota, the returned file refuses writes
// that would grow the tree past it.
func (f *FS) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	p, err := clean("open", name)
	if err != nil {
		return nil, err
	}
	write := isWriteFlag(flag)
	if write {
		err = f.writable(ctx, "open", p, semfs.ErrPermission)
	} else {
		err = f.readable(ctx, "open", p)
	}
	if err != nil {
		return nil, err
	}
	file, err := semfs.OpenFile(ctx, f.inner, p, flag, perm)
	if err != nil {
		return nil, f.absentBelow(ctx, p, err)
	}
	if !write || f.quota <= 0 {
		return file, nil
	}
	return &quotaFile{RWFile: file, f: f, ctx: ctx, path: p, appendMode: flag&os.O_APPEND != 0}, nil
}

// quotaFile checks each growth of an open file against the quota.
type quotaFile struct {
	semfs.RWFile
	f          *FS
	ctx        context.Context
	path       string
	appendMode bool
}

// grow runs write, which ends at end, if the growth past the file's current
// size fits the quota.
func (q *quotaFile) grow(op string, end func(size int64) int64, write func() error) error {
	q.f.qmu.Lock()
	defer q.f.qmu.Unlock()
	info, err := q.RWFile.Stat()
	if err != nil {
		return err
	}
	if err := q.f.checkGrowth(q.ctx, op, q.path, end(info.Size())-info.Size()); err != nil {
		return err
	}
	return write()
}

func (q *quotaFile) Write(b []byte) (n int, err error) {
	err = q.grow("write", func(size int64) int64 {
		if q.appendMode {
			return size + int64(len(b))
		}
		pos, err := q.RWFile.Seek(0, io.SeekCurrent)
		if err != nil {
			return size + int64(len(b)) // assume the worst
		}
		return pos + int64(len(b))
	}, func() error {
		var werr error
		n, werr = q.RWFile.Write(b)
		return werr
	})
	return n, err
}

func (q *quotaFile) WriteAt(b []byte, off int64) (n int, err error) {
	err = q.grow("write", func(int64) int64 { return off + int64(len(b)) }, func() error {
		var werr error
		n, werr = q.RWFile.WriteAt(b, off)
		return werr
	})
	return n, err
}

func (q *quotaFile) Truncate(size int64) error {
	return q.grow("truncate", func(int64) int64 { return size }, func() error {
		return q.RWFile.Truncate(size)
	})
}

// Mkdir creates a directory where the rules give Write.
func (f *FS) Mkdir(ctx context.Context, name string, perm fs.FileMode) error {
	p, err := clean("mkdir", name)
	if err != nil {
		return err
	}
	if err := f.writable(ctx, "mkdir", p, semfs.ErrPermission); err != nil {
		return err
	}
	return f.absentBelow(ctx, p, semfs.Mkdir(ctx, f.inner, p, perm))
}

// MkdirAll creates a directory and its missing parents where the rules
// give Write on the directory.
func (f *FS) MkdirAll(ctx context.Context, name string, perm fs.FileMode) error {
	p, err := clean("mkdir", name)
	if err != nil {
		return err
	}
	if err := f.writable(ctx, "mkdir", p, semfs.ErrPermission); err != nil {
		return err
	}
	return f.absentBelow(ctx, p, semfs.MkdirAll(ctx, f.inner, p, perm))
}

// Remove removes a file or empty directory where the rules give Write; a
// hidden path does not exist.
func (f *FS) Remove(ctx context.Context, name string) error {
	p, err := clean("remove", name)
	if err != nil {
		return err
	}
	if err := f.writable(ctx, "remove", p, semfs.ErrNotExist); err != nil {
		return err
	}
	return f.absentBelow(ctx, p, semfs.Remove(ctx, f.inner, p))
}

// errProtected stops a subtree scan.
var errProtected = errors.New("protected path")

// scanSubtree checks, before a recursive remove or a rename of a
// directory, that every path below root may be written, and (for a rename)
// that it may be written at its destination too. The refusal names a path
// only if the principal can read it.
func (f *FS) scanSubtree(ctx context.Context, v *view, op, root, dest string) error {
	var named string
	err := semfs.WalkDir(ctx, f.inner, root, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		a, _ := f.pol.access(q)
		if a != Write {
			if a == Read && v.visibleOrFalse(q, d.IsDir()) {
				named = q
			}
			return errProtected
		}
		if dest != "" {
			dq := dest + q[len(root):]
			if a, _ := f.pol.access(dq); a != Write {
				if a == Read {
					named = dq
				}
				return errProtected
			}
		}
		if v.active() && !d.IsDir() {
			ok, err := v.visible(q, false)
			if err != nil {
				return err
			}
			if !ok {
				return errProtected
			}
		}
		return nil
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errProtected):
		detail := "it holds paths you may not change; nothing was changed"
		if named != "" {
			detail = named + " is read-only by the access policy; nothing was changed"
		}
		return semfs.PathErr(op, root, semfs.ErrPermission, detail)
	default:
		return semfs.RewritePath(err, op, root)
	}
}

// visibleOrFalse is visible with errors read as "not visible".
func (v *view) visibleOrFalse(p string, isDir bool) bool {
	ok, err := v.visible(p, isDir)
	return err == nil && ok
}

// RemoveAll removes a subtree where the rules give Write on every path of
// it and every file is visible; otherwise it refuses the whole removal
// before removing anything. A hidden root does not exist, so removing it
// succeeds without effect.
func (f *FS) RemoveAll(ctx context.Context, name string) error {
	p, err := clean("removeall", name)
	if err != nil {
		return err
	}
	var buf [16]uint64
	s := f.pol.walk(p, buf[:0])
	if a, r := f.pol.decide(s); a != Write {
		return refusal("removeall", p, a, r)
	}
	v := f.view(ctx)
	if f.pol.restrictsBelow(s) || v.active() {
		info, err := f.inner.Stat(ctx, p)
		if err != nil {
			// Below a hidden file as below an absent name.
			if err = f.absentBelow(ctx, p, err); errors.Is(err, semfs.ErrNotExist) {
				return nil
			}
			return err
		}
		if v.active() && p != "/" {
			ok, err := v.visible(p, info.IsDir())
			if err != nil {
				return semfs.RewritePath(err, "removeall", p)
			}
			if !ok {
				return nil
			}
		}
		if err := f.scanSubtree(ctx, v, "removeall", p, ""); err != nil {
			return err
		}
	}
	return semfs.RemoveAll(ctx, f.inner, p)
}

// Rename moves a path where the rules give Write on the source and the
// destination; a directory moves only if every path below it may be
// written at both places and every file in it is visible.
func (f *FS) Rename(ctx context.Context, oldname, newname string) error {
	o, err := clean("rename", oldname)
	if err != nil {
		return err
	}
	n, err := clean("rename", newname)
	if err != nil {
		return err
	}
	var obuf, nbuf [16]uint64
	so := f.pol.walk(o, obuf[:0])
	if a, r := f.pol.decide(so); a != Write {
		return refusal("rename", o, a, r)
	}
	sn := f.pol.walk(n, nbuf[:0])
	if a, r := f.pol.decide(sn); a != Write {
		return refusal("rename", n, a, r)
	}
	v := f.view(ctx)
	if v.active() || f.pol.restrictsBelow(so) || f.pol.restrictsBelow(sn) {
		info, err := f.inner.Stat(ctx, o)
		if err != nil {
			return f.absentBelow(ctx, o, err)
		}
		if v.active() {
			if ok, err := v.visible(o, info.IsDir()); err != nil || !ok {
				if err != nil {
					return semfs.RewritePath(err, "rename", o)
				}
				return hidden("rename", o)
			}
			if err := f.writable(ctx, "rename", n, semfs.ErrPermission); err != nil {
				return err
			}
		}
		if info.IsDir() && o != n && !semfs.HasPrefix(n, o) {
			if err := f.scanSubtree(ctx, v, "rename", o, n); err != nil {
				return err
			}
		}
	}
	if err := f.checkBacklinks(ctx, v, o); err != nil {
		return err
	}
	err = semfs.Rename(ctx, f.inner, o, n)
	if err != nil && v.active() && o != n {
		// The source is there (it was looked up above), so a destination
		// whose parent is missing, or is a file hidden from the
		// principal, gets one answer whatever the wrapped tree says.
		var pe *fs.PathError
		if e := f.absentBelow(ctx, n, err); e != err ||
			(errors.Is(err, semfs.ErrNotExist) && errors.As(err, &pe) && pe.Path == n) {
			return semfs.PathErr("rename", n, semfs.ErrNotExist, "the destination's parent directory does not exist")
		}
	}
	return err
}

// BacklinksFS is implemented by metadata layers that rewrite links when a
// file moves (semfs.Tags.Links). Backlinks returns the files whose links
// point at name or below it. With it, the access layer refuses a rename
// whole if a file holding such a link may not be written by the principal
// (or is hidden from it), the way a recursive remove is refused: moving a
// file must not rewrite the metadata of a file the mover was not granted.
type BacklinksFS interface {
	semfs.FS
	Backlinks(ctx context.Context, name string) ([]string, error)
}

// checkBacklinks refuses a move of o if a file linking to it is fenced.
func (f *FS) checkBacklinks(ctx context.Context, v *view, o string) error {
	b, ok := f.inner.(BacklinksFS)
	if !ok {
		return nil
	}
	holders, err := b.Backlinks(ctx, o)
	if err != nil {
		return semfs.RewritePath(err, "rename", o)
	}
	for _, h := range holders {
		if a, _ := f.pol.access(h); a != Write {
			detail := "a file you may not change links to it; nothing was changed"
			if a == Read && v.visibleOrFalse(h, false) {
				detail = h + " links to it and is read-only by the access policy; nothing was changed"
			}
			return semfs.PathErr("rename", o, semfs.ErrPermission, detail)
		}
		if ok, err := v.visible(h, false); err != nil || !ok {
			if err != nil {
				return semfs.RewritePath(err, "rename", o)
			}
			return semfs.PathErr("rename", o, semfs.ErrPermission, "a file you may not change links to it; nothing was changed")
		}
	}
	return nil
}
