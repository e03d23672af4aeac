package mount

import (
	"context"
	"io/fs"
	"iter"
	"os"

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

// Open opens a regular file in the mount covering name.
func (f *FS) Open(ctx context.Context, name string) (fs.File, error) {
	p, err := semfs.Clean("open", name)
	if err != nil {
		return nil, err
	}
	if f.structural(p) {
		return nil, semfs.PathErr("open", p, semfs.ErrIsDir, "")
	}
	m := f.resolve(p)
	if m == nil {
		return nil, semfs.PathErr("open", p, semfs.ErrNotExist, "")
	}
	file, err := m.FS.Open(ctx, m.inner(p))
	if err != nil {
		return nil, m.err(err, "open", p)
	}
	return wrapFile(m, p, file), nil
}

// ReadFile reads a whole file from the mount covering name.
func (f *FS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	p, err := semfs.Clean("read", name)
	if err != nil {
		return nil, err
	}
	if f.structural(p) {
		return nil, semfs.PathErr("read", p, semfs.ErrIsDir, "")
	}
	m := f.resolve(p)
	if m == nil {
		return nil, semfs.PathErr("read", p, semfs.ErrNotExist, "")
	}
	var data []byte
	if r, ok := m.FS.(semfs.ReadFileFS); ok {
		data, err = r.ReadFile(ctx, m.inner(p)) // p is clean already
	} else {
		data, err = semfs.ReadFile(ctx, m.FS, m.inner(p))
	}
	return data, m.err(err, "read", p)
}

// Stat describes name. Mount points and the directories above them always
// exist as directories.
func (f *FS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	p, err := semfs.Clean("stat", name)
	if err != nil {
		return nil, err
	}
	m := f.resolve(p)
	if !f.structural(p) {
		if m == nil {
			return nil, semfs.PathErr("stat", p, semfs.ErrNotExist, "")
		}
		info, err := m.FS.Stat(ctx, m.inner(p))
		if err != nil {
			return nil, m.err(err, "stat", p)
		}
		return info, nil
	}
	base := semfs.BaseName(p)
	if m != nil {
		info, err := m.FS.Stat(ctx, m.inner(p))
		if err == nil && info.IsDir() {
			if p != "/" && info.Name() != base {
				return renamedInfo{info, base}, nil
			}
			return info, nil
		}
		if err != nil && !semfs.IsAbsence(err) {
			return nil, m.err(err, "stat", p)
		}
	}
	return synthInfo{name: base, modTime: f.modTime}, nil
}

// ReadDir lists name: the covering backend's entries merged with the names
// leading to deeper mount points (which shadow a backend entry of the same
// name).
func (f *FS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	p, err := semfs.Clean("readdir", name)
	if err != nil {
		return nil, err
	}
	var kids []string
	structural := f.structural(p)
	if structural {
		kids = f.dirs[p]
	}
	m := f.resolve(p)
	var entries []fs.DirEntry
	if m != nil {
		entries, err = m.FS.ReadDir(ctx, m.inner(p))
		if err != nil {
			if !structural || !semfs.IsAbsence(err) {
				return nil, m.err(err, "readdir", p)
			}
			entries = nil
		}
	} else if !structural {
		return nil, semfs.PathErr("readdir", p, semfs.ErrNotExist, "")
	}
	if len(kids) == 0 {
		return entries, nil
	}
	out := make([]fs.DirEntry, 0, len(entries)+len(kids))
	i, j := 0, 0
	for i < len(entries) || j < len(kids) {
		switch {
		case j == len(kids) || i < len(entries) && entries[i].Name() < kids[j]:
			out = append(out, entries[i])
			i++
		default:
			if i < len(entries) && entries[i].Name() == kids[j] {
				i++ // shadowed by the mount table
			}
			out = append(out, synthEntry{f: f, ctx: ctx, path: semfs.Join(p, kids[j])})
			j++
		}
	}
	return out, nil
}

// Exists reports whether name exists in the table.
func (f *FS) Exists(ctx context.Context, name string) (bool, error) {
	p, err := semfs.Clean("exists", name)
	if err != nil {
		return false, nil
	}
	if f.structural(p) {
		return true, nil
	}
	m := f.resolve(p)
	if m == nil {
		return false, nil
	}
	ok, err := semfs.Exists(ctx, m.FS, m.inner(p))
	return ok, m.err(err, "exists", p)
}

// WriteFile writes a whole file into the mount covering name.
func (f *FS) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	p, err := semfs.Clean("write", name)
	if err != nil {
		return err
	}
	if f.structural(p) {
		return semfs.PathErr("write", p, semfs.ErrIsDir, "a mount point or a directory above one")
	}
	m, err := f.writeTarget("write", p)
	if err != nil {
		return err
	}
	return m.err(semfs.WriteFile(ctx, m.FS, m.inner(p), data, perm), "write", p)
}

// OpenFile opens a file in the mount covering name. Opening for writing in a
// read-only mount fails with ErrReadOnly.
func (f *FS) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	p, err := semfs.Clean("open", name)
	if err != nil {
		return nil, err
	}
	if f.structural(p) {
		return nil, semfs.PathErr("open", p, semfs.ErrIsDir, "a mount point or a directory above one")
	}
	var m *mnt
	if isWriteFlag(flag) {
		if m, err = f.writeTarget("open", p); err != nil {
			return nil, err
		}
		if flag&os.O_CREATE != 0 {
			if err := f.ensureParent(ctx, "open", m, p); err != nil {
				return nil, err
			}
		}
	} else if m = f.resolve(p); m == nil {
		return nil, semfs.PathErr("open", p, semfs.ErrNotExist, "")
	}
	file, err := semfs.OpenFile(ctx, m.FS, m.inner(p), flag, perm)
	if err != nil {
		return nil, m.err(err, "open", p)
	}
	if m.identity {
		return file, nil
	}
	return &rwFile{RWFile: file, path: p}, nil
}

// Mkdir creates a directory in the mount covering name.
func (f *FS) Mkdir(ctx context.Context, name string, perm fs.FileMode) error {
	p, err := semfs.Clean("mkdir", name)
	if err != nil {
		return err
	}
	if f.structural(p) {
		return semfs.PathErr("mkdir", p, semfs.ErrExist, "")
	}
	m, err := f.writeTarget("mkdir", p)
	if err != nil {
		return err
	}
	if err := f.ensureParent(ctx, "mkdir", m, p); err != nil {
		return err
	}
	return m.err(semfs.Mkdir(ctx, m.FS, m.inner(p), perm), "mkdir", p)
}

// MkdirAll creates a directory and its missing parents in the mount
// covering name; mount points and the directories above them already exist.
func (f *FS) MkdirAll(ctx context.Context, name string, perm fs.FileMode) error {
	p, err := semfs.Clean("mkdir", name)
	if err != nil {
		return err
	}
	if f.structural(p) {
		return nil
	}
	m, err := f.writeTarget("mkdir", p)
	if err != nil {
		return err
	}
	return m.err(semfs.MkdirAll(ctx, m.FS, m.inner(p), perm), "mkdir", p)
}

// Remove removes a file or an empty directory. Mount points and the
// directories above them cannot be removed.
func (f *FS) Remove(ctx context.Context, name string) error {
	p, err := semfs.Clean("remove", name)
	if err != nil {
		return err
	}
	if p == "/" {
		return semfs.PathErr("remove", p, semfs.ErrInvalid, "the root cannot be removed")
	}
	if f.structural(p) {
		return f.structuralErr("remove", p)
	}
	m := f.resolve(p)
	if m == nil {
		return semfs.PathErr("remove", p, semfs.ErrNotExist, "")
	}
	if m.ReadOnly {
		return semfs.PathErr("remove", p, semfs.ErrReadOnly, "mount "+m.At+" is read-only; writable mounts: "+f.writable)
	}
	return m.err(semfs.Remove(ctx, m.FS, m.inner(p)), "remove", p)
}

// RemoveAll removes a subtree. On a mount point it empties the mount, which
// stays (as the root stays after RemoveAll of "/"); a subtree holding a
// mount point below it is refused whole, before anything is removed.
func (f *FS) RemoveAll(ctx context.Context, name string) error {
	p, err := semfs.Clean("removeall", name)
	if err != nil {
		return err
	}
	if _, isPoint := f.points[p]; f.structural(p) && !(isPoint && len(f.dirs[p]) == 0) {
		return f.structuralErr("removeall", p)
	}
	m := f.resolve(p)
	if m == nil {
		return nil // nothing is there
	}
	if m.ReadOnly {
		return semfs.PathErr("removeall", p, semfs.ErrReadOnly, "mount "+m.At+" is read-only; writable mounts: "+f.writable)
	}
	return m.err(semfs.RemoveAll(ctx, m.FS, m.inner(p)), "removeall", p)
}

// Rename moves a file or directory within one mount. A rename across mounts
// is refused with ErrPermission and ErrCrossMount; mount points and the
// directories above them cannot be renamed or replaced.
func (f *FS) Rename(ctx context.Context, oldname, newname string) error {
	o, err := semfs.Clean("rename", oldname)
	if err != nil {
		return err
	}
	n, err := semfs.Clean("rename", newname)
	if err != nil {
		return err
	}
	if o == "/" || n == "/" {
		return semfs.PathErr("rename", o, semfs.ErrInvalid, "the root cannot be moved or replaced")
	}
	if f.structural(o) {
		return f.structuralErr("rename", o)
	}
	if f.structural(n) {
		return f.structuralErr("rename", n)
	}
	mo := f.resolve(o)
	if mo == nil {
		return semfs.PathErr("rename", o, semfs.ErrNotExist, "")
	}
	if mo.ReadOnly {
		return semfs.PathErr("rename", o, semfs.ErrReadOnly, "mount "+mo.At+" is read-only; writable mounts: "+f.writable)
	}
	mn, err := f.writeTarget("rename", n)
	if err != nil {
		return err
	}
	if mo != mn {
		return &fs.PathError{Op: "rename", Path: o, Err: crossMountError{
			detail: o + " is in mount " + mo.At + ", " + n + " in mount " + mn.At + "; copy the data, then remove the source",
		}}
	}
	if err := f.ensureParent(ctx, "rename", mn, n); err != nil {
		return err
	}
	return mo.err(semfs.Rename(ctx, mo.FS, mo.inner(o), mo.inner(n)), "rename", o)
}

// crossMountError wraps both ErrPermission (the contract's sentinel) and
// ErrCrossMount (for front ends that map it to EXDEV).
type crossMountError struct{ detail string }

func (e crossMountError) Error() string {
	return semfs.ErrPermission.Error() + ": " + ErrCrossMount.Error() + ": " + e.detail
}
func (e crossMountError) Unwrap() []error { return []error{semfs.ErrPermission, ErrCrossMount} }

// TotalSize is the sum of the sizes of the distinct backends, shadowed
// parts included (they are stored bytes).
func (f *FS) TotalSize(ctx context.Context) (int64, error) {
	var total int64
	for i, m := range f.mounts {
		dup := false
		for _, prev := range f.mounts[:i] {
			if sameFS(prev.FS, m.FS) {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		n, err := semfs.TotalSize(ctx, m.FS)
		if err != nil {
			return 0, m.err(err, "totalsize", m.At)
		}
		total += n
	}
	return total, nil
}

// Files yields every regular file below root across the mounts, in path
// order. Files a deeper mount shadows are skipped.
func (f *FS) Files(ctx context.Context, root string) iter.Seq2[string, error] {
	p, err := semfs.Clean("files", root)
	if err != nil {
		return func(yield func(string, error) bool) { yield("", err) }
	}
	return func(yield func(string, error) bool) {
		cover := f.resolve(p)
		structural := f.structural(p)
		if cover == nil && !structural {
			yield("", semfs.PathErr("files", p, semfs.ErrNotExist, ""))
			return
		}
		var seqs []iter.Seq2[string, error]
		for _, m := range f.mounts {
			var broot string
			switch {
			case m == cover:
				broot = m.inner(p)
			case m.At != p && semfs.HasPrefix(m.At, p):
				broot = m.inner(m.At)
			default:
				continue
			}
			seqs = append(seqs, f.mountFiles(ctx, m, broot, structural || m != cover))
		}
		mergeSorted(seqs, yield)
	}
}

// mountFiles yields m's files below backend path broot as tree paths,
// skipping those another mount shadows. tolerant makes an absent broot an
// empty sequence (it is a directory the table synthesises).
func (f *FS) mountFiles(ctx context.Context, m *mnt, broot string, tolerant bool) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for bp, err := range semfs.Files(ctx, m.FS, broot) {
			if err != nil {
				if tolerant && semfs.IsAbsence(err) {
					return
				}
				yield("", m.err(err, "files", m.outer(broot)))
				return
			}
			tp := m.outer(bp)
			if !semfs.HasPrefix(tp, m.At) || f.resolve(tp) != m {
				continue
			}
			if !yield(tp, nil) {
				return
			}
		}
	}
}

// mergeSorted merges sorted sequences into yield; the first error ends it.
func mergeSorted(seqs []iter.Seq2[string, error], yield func(string, error) bool) {
	if len(seqs) == 1 {
		for p, err := range seqs[0] {
			if !yield(p, err) || err != nil {
				return
			}
		}
		return
	}
	type head struct {
		next func() (string, error, bool)
		stop func()
		path string
		ok   bool
	}
	heads := make([]*head, len(seqs))
	for i, s := range seqs {
		next, stop := iter.Pull2(s)
		heads[i] = &head{next: next, stop: stop}
		defer stop()
	}
	advance := func(h *head) error {
		p, err, ok := h.next()
		if ok && err != nil {
			return err
		}
		h.path, h.ok = p, ok
		return nil
	}
	for _, h := range heads {
		if err := advance(h); err != nil {
			yield("", err)
			return
		}
	}
	for {
		var best *head
		for _, h := range heads {
			if h.ok && (best == nil || h.path < best.path) {
				best = h
			}
		}
		if best == nil {
			return
		}
		if !yield(best.path, nil) {
			return
		}
		if err := advance(best); err != nil {
			yield("", err)
			return
		}
	}
}
