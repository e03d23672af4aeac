package hostfs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/semfs/semfs"
)

// overlay holds the pending changes of an Overlay tree. The view of a path
// is, in order: an overlay file, an overlay directory, nothing if the path
// or one of its ancestors is whited out, else the host. A directory created
// where a whiteout stands is therefore opaque: the host entries that were
// below the removed path stay hidden.
type overlay struct {
	mu        sync.RWMutex
	files     map[string]*ofile
	dirs      map[string]odir
	whiteouts map[string]bool
}

// ofile is the contents of a file written in the overlay. Open handles
// share it, so a write through one handle is seen by the others, as on disk.
type ofile struct {
	mu    sync.RWMutex
	data  []byte
	perm  fs.FileMode
	mtime time.Time
}

type odir struct {
	perm  fs.FileMode
	mtime time.Time
}

func newOverlay() *overlay {
	return &overlay{files: map[string]*ofile{}, dirs: map[string]odir{}, whiteouts: map[string]bool{}}
}

func (o *overlay) discard() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.files = map[string]*ofile{}
	o.dirs = map[string]odir{}
	o.whiteouts = map[string]bool{}
}

// whitedOut reports whether p or an ancestor was removed in the overlay.
func (o *overlay) whitedOut(p string) bool {
	if len(o.whiteouts) == 0 {
		return false
	}
	if o.whiteouts[p] {
		return true
	}
	out := false
	semfs.Ancestors(p, func(a string) bool { out = o.whiteouts[a]; return !out })
	return out
}

// reachable fails if the host entry at p is hidden by the overlay: a file
// written over an ancestor, or a removal of p or an ancestor.
func (o *overlay) reachable(op, p string) error {
	var blocked string
	semfs.Ancestors(p, func(a string) bool {
		if _, ok := o.files[a]; ok {
			blocked = a
			return false
		}
		return true
	})
	if blocked != "" {
		return semfs.PathErr(op, p, semfs.ErrNotDir, blocked+" is a file")
	}
	if o.whitedOut(p) {
		return semfs.PathErr(op, p, semfs.ErrNotExist, "")
	}
	return nil
}

// statLocked describes p as the view sees it; o.mu is held.
func (o *overlay) statLocked(f *FS, op, p string) (fs.FileInfo, error) {
	if of, ok := o.files[p]; ok {
		return of.info(semfs.BaseName(p)), nil
	}
	if d, ok := o.dirs[p]; ok {
		return memInfo{name: semfs.BaseName(p), mode: fs.ModeDir | d.perm, mtime: d.mtime}, nil
	}
	if err := o.reachable(op, p); err != nil {
		return nil, err
	}
	return f.hostStat(op, p)
}

func (o *overlay) stat(f *FS, p string) (fs.FileInfo, error) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.statLocked(f, "stat", p)
}

func (o *overlay) open(f *FS, p string) (fs.File, error) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if of, ok := o.files[p]; ok {
		return &memHandle{of: of, path: p, readable: true}, nil
	}
	if _, ok := o.dirs[p]; ok {
		return nil, semfs.PathErr("open", p, semfs.ErrIsDir, "a directory cannot be opened as a file; list it instead")
	}
	if err := o.reachable("open", p); err != nil {
		return nil, err
	}
	return f.hostOpen("open", p, os.O_RDONLY, 0)
}

// readFile answers from the overlay when it can; ok is false when the host
// file is the answer.
func (o *overlay) readFile(f *FS, p string) (data []byte, ok bool, err error) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if of, found := o.files[p]; found {
		of.mu.RLock()
		defer of.mu.RUnlock()
		return slices.Clone(of.data), true, nil
	}
	if _, found := o.dirs[p]; found {
		return nil, false, semfs.PathErr("read", p, semfs.ErrIsDir, "a directory cannot be opened as a file; list it instead")
	}
	if err := o.reachable("read", p); err != nil {
		return nil, false, err
	}
	return nil, false, nil
}

func (o *overlay) readDir(f *FS, p string) ([]fs.DirEntry, error) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.readDirLocked(f, "readdir", p)
}

func (o *overlay) readDirLocked(f *FS, op, p string) ([]fs.DirEntry, error) {
	info, err := o.statLocked(f, op, p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, semfs.PathErr(op, p, semfs.ErrNotDir, "")
	}
	byName := map[string]fs.DirEntry{}
	_, created := o.dirs[p]
	if !created && !o.whitedOut(p) {
		ents, err := f.hostReadDir(op, p, true)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if !o.whiteouts[semfs.Join(p, e.Name())] {
				byName[e.Name()] = e
			}
		}
	}
	for k, of := range o.files {
		if k != "/" && semfs.Dir(k) == p {
			byName[semfs.BaseName(k)] = fs.FileInfoToDirEntry(of.info(semfs.BaseName(k)))
		}
	}
	for k, d := range o.dirs {
		if k != "/" && semfs.Dir(k) == p {
			byName[semfs.BaseName(k)] = fs.FileInfoToDirEntry(memInfo{name: semfs.BaseName(k), mode: fs.ModeDir | d.perm, mtime: d.mtime})
		}
	}
	out := make([]fs.DirEntry, 0, len(byName))
	for _, e := range byName {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// ensureParents creates, in the overlay, the missing ancestors of p.
func (o *overlay) ensureParents(f *FS, op, p string) error {
	var out error
	semfs.Ancestors(p, func(a string) bool {
		if a == "/" {
			return true
		}
		info, err := o.statLocked(f, op, a)
		switch {
		case err == nil && info.IsDir():
			return true
		case err == nil:
			out = semfs.PathErr(op, p, semfs.ErrNotDir, a+" is a file")
		case errors.Is(err, semfs.ErrNotExist):
			o.dirs[a] = odir{perm: 0o755, mtime: time.Now()}
			return true
		default:
			out = semfs.RewritePath(err, op, p)
		}
		return false
	})
	return out
}

func (o *overlay) writeFile(f *FS, p string, data []byte, perm fs.FileMode) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.ensureParents(f, "write", p); err != nil {
		return err
	}
	info, err := o.statLocked(f, "write", p)
	switch {
	case err == nil && info.IsDir():
		return semfs.PathErr("write", p, semfs.ErrIsDir, "a directory exists at this path")
	case err == nil:
		perm = info.Mode().Perm() // an existing file keeps its permissions
	case !errors.Is(err, semfs.ErrNotExist):
		return err
	}
	o.files[p] = &ofile{data: slices.Clone(data), perm: perm.Perm(), mtime: time.Now()}
	return nil
}

// parentDir checks that the parent of p is a directory in the view.
func (o *overlay) parentDir(f *FS, op, p string) error {
	info, err := o.statLocked(f, op, semfs.Dir(p))
	if err != nil {
		if errors.Is(err, semfs.ErrNotExist) {
			return semfs.PathErr(op, p, semfs.ErrNotExist, "the parent directory does not exist")
		}
		return semfs.RewritePath(err, op, p)
	}
	if !info.IsDir() {
		return semfs.PathErr(op, p, semfs.ErrNotDir, semfs.Dir(p)+" is a file")
	}
	return nil
}

func (o *overlay) openFile(f *FS, p string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	acc := flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
	writes := acc != os.O_RDONLY || flag&(os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0
	if !writes {
		o.mu.RLock()
		defer o.mu.RUnlock()
		if of, ok := o.files[p]; ok {
			return &memHandle{of: of, path: p, readable: true}, nil
		}
		if _, ok := o.dirs[p]; ok {
			return nil, semfs.PathErr("open", p, semfs.ErrIsDir, "a directory cannot be opened as a file; list it instead")
		}
		if err := o.reachable("open", p); err != nil {
			return nil, err
		}
		return f.hostOpen("open", p, os.O_RDONLY, 0)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	info, err := o.statLocked(f, "open", p)
	var of *ofile
	switch {
	case err == nil && info.IsDir():
		return nil, semfs.PathErr("open", p, semfs.ErrIsDir, "a directory cannot be opened as a file; list it instead")
	case err == nil && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, semfs.PathErr("open", p, semfs.ErrExist, "")
	case err != nil && !errors.Is(err, semfs.ErrNotExist):
		return nil, err
	case err != nil:
		if flag&os.O_CREATE == 0 {
			return nil, err
		}
		if err := o.parentDir(f, "open", p); err != nil {
			return nil, err
		}
		of = &ofile{perm: perm.Perm(), mtime: time.Now()}
		o.files[p] = of
	default:
		of = o.files[p]
		if of == nil {
			// First write to a host file: copy it up, unless it is
			// about to be truncated anyway.
			var data []byte
			if flag&os.O_TRUNC == 0 {
				data, err = f.hostReadFile(p)
				if err != nil {
					return nil, semfs.RewritePath(err, "open", p)
				}
			}
			of = &ofile{data: data, perm: info.Mode().Perm(), mtime: info.ModTime()}
			o.files[p] = of
		}
	}
	if flag&os.O_TRUNC != 0 {
		of.mu.Lock()
		of.data = of.data[:0:0]
		of.mtime = time.Now()
		of.mu.Unlock()
	}
	return &memHandle{of: of, path: p, readable: acc != os.O_WRONLY, writable: acc != os.O_RDONLY, append: flag&os.O_APPEND != 0}, nil
}

func (o *overlay) mkdir(f *FS, p string, perm fs.FileMode) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.parentDir(f, "mkdir", p); err != nil {
		return err
	}
	if _, err := o.statLocked(f, "mkdir", p); err == nil {
		return semfs.PathErr("mkdir", p, semfs.ErrExist, "")
	} else if !errors.Is(err, semfs.ErrNotExist) {
		return err
	}
	o.dirs[p] = odir{perm: perm.Perm(), mtime: time.Now()}
	return nil
}

func (o *overlay) mkdirAll(f *FS, p string, perm fs.FileMode) error {
	if p == "/" {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.ensureParents(f, "mkdir", p); err != nil {
		return err
	}
	info, err := o.statLocked(f, "mkdir", p)
	switch {
	case err == nil && info.IsDir():
		return nil
	case err == nil:
		return semfs.PathErr("mkdir", p, semfs.ErrNotDir, "a file exists at this path")
	case !errors.Is(err, semfs.ErrNotExist):
		return err
	}
	o.dirs[p] = odir{perm: perm.Perm(), mtime: time.Now()}
	return nil
}

// deleteLocked removes p and everything below it from the view: overlay
// entries are dropped and the host entry, if any, is whited out.
func (o *overlay) deleteLocked(f *FS, p string) {
	for k := range o.files {
		if semfs.HasPrefix(k, p) {
			delete(o.files, k)
		}
	}
	for k := range o.dirs {
		if semfs.HasPrefix(k, p) {
			delete(o.dirs, k)
		}
	}
	for k := range o.whiteouts {
		if k != p && semfs.HasPrefix(k, p) {
			delete(o.whiteouts, k) // the new whiteout covers it
		}
	}
	if o.whitedOut(p) {
		return
	}
	if _, err := f.root.Lstat(rel(p)); err == nil {
		o.whiteouts[p] = true
	}
}

func (o *overlay) remove(f *FS, p string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	info, err := o.statLocked(f, "remove", p)
	if err != nil {
		return err
	}
	if info.IsDir() {
		kids, err := o.readDirLocked(f, "remove", p)
		if err != nil {
			return err
		}
		if len(kids) > 0 {
			return semfs.PathErr("remove", p, semfs.ErrNotEmpty, "remove its contents first, or remove it recursively")
		}
	}
	o.deleteLocked(f, p)
	return nil
}

func (o *overlay) removeAll(f *FS, p string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if p == "/" {
		kids, err := o.readDirLocked(f, "removeall", p)
		if err != nil {
			return err
		}
		for _, k := range kids {
			o.deleteLocked(f, semfs.Join(p, k.Name()))
		}
		return nil
	}
	if _, err := o.statLocked(f, "removeall", p); err != nil {
		if errors.Is(err, semfs.ErrNotExist) {
			return nil
		}
		return err
	}
	o.deleteLocked(f, p)
	return nil
}

// moved is one entry of a subtree being renamed, relative to its root.
type moved struct {
	rel  string
	dir  *odir
	file *ofile
}

func (o *overlay) rename(f *FS, from, to string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	oi, err := o.statLocked(f, "rename", from)
	if err != nil {
		return err
	}
	if from == to {
		return nil
	}
	if err := o.parentDir(f, "rename", to); err != nil {
		return err
	}
	if oi.IsDir() && semfs.HasPrefix(to, from) {
		return semfs.PathErr("rename", from, semfs.ErrInvalid, "a directory cannot move below itself")
	}
	ni, err := o.statLocked(f, "rename", to)
	switch {
	case err == nil && ni.IsDir() && !oi.IsDir():
		return semfs.PathErr("rename", to, semfs.ErrIsDir, "a file cannot replace a directory")
	case err == nil && !ni.IsDir() && oi.IsDir():
		return semfs.PathErr("rename", to, semfs.ErrNotDir, "a directory cannot replace a file")
	case err == nil && ni.IsDir():
		kids, err := o.readDirLocked(f, "rename", to)
		if err != nil {
			return err
		}
		if len(kids) > 0 {
			return semfs.PathErr("rename", to, semfs.ErrNotEmpty, "the destination is a directory that is not empty")
		}
	case err != nil && !errors.Is(err, semfs.ErrNotExist):
		return err
	}
	// Capture the subtree (host files are copied into memory), then
	// remove both ends and re-insert the capture at the destination.
	var items []moved
	if err := o.capture(f, from, "", oi, &items); err != nil {
		return err
	}
	o.deleteLocked(f, to)
	o.deleteLocked(f, from)
	for _, it := range items {
		p := to + it.rel
		if it.dir != nil {
			o.dirs[p] = *it.dir
		} else {
			o.files[p] = it.file
		}
	}
	return nil
}

func (o *overlay) capture(f *FS, p, relp string, info fs.FileInfo, items *[]moved) error {
	if !info.IsDir() {
		of := o.files[p]
		if of == nil {
			data, err := f.hostReadFile(p)
			if err != nil {
				return semfs.RewritePath(err, "rename", p)
			}
			of = &ofile{data: data, perm: info.Mode().Perm(), mtime: info.ModTime()}
		}
		*items = append(*items, moved{rel: relp, file: of})
		return nil
	}
	*items = append(*items, moved{rel: relp, dir: &odir{perm: info.Mode().Perm(), mtime: info.ModTime()}})
	kids, err := o.readDirLocked(f, "rename", p)
	if err != nil {
		return err
	}
	for _, k := range kids {
		ki, err := k.Info()
		if err != nil {
			return mapErr("rename", semfs.Join(p, k.Name()), err)
		}
		if err := o.capture(f, semfs.Join(p, k.Name()), relp+"/"+k.Name(), ki, items); err != nil {
			return err
		}
	}
	return nil
}

// Change is one pending change of an Overlay tree.
type Change struct {
	// Kind is "remove" (the host path and everything below it will be
	// removed), "mkdir" or "write".
	Kind string `json:"kind"`
	Path string `json:"path"`
	// Size is the length of the file to be written (Kind "write").
	Size int64 `json:"size,omitempty"`
}

var kindOrder = map[string]int{"remove": 0, "mkdir": 1, "write": 2}

// Changes lists the pending changes of an Overlay tree in the order Commit
// applies them: removals, then directories, then files, each sorted by
// path. It returns nil in the other modes.
func (f *FS) Changes() []Change {
	if f.ov == nil {
		return nil
	}
	o := f.ov
	o.mu.RLock()
	defer o.mu.RUnlock()
	var out []Change
	for p := range o.whiteouts {
		out = append(out, Change{Kind: "remove", Path: p})
	}
	for p := range o.dirs {
		out = append(out, Change{Kind: "mkdir", Path: p})
	}
	for p, of := range o.files {
		of.mu.RLock()
		out = append(out, Change{Kind: "write", Path: p, Size: int64(len(of.data))})
		of.mu.RUnlock()
	}
	slices.SortFunc(out, func(a, b Change) int {
		if d := kindOrder[a.Kind] - kindOrder[b.Kind]; d != 0 {
			return d
		}
		return strings.Compare(a.Path, b.Path)
	})
	return out
}

// Discard drops every pending change of an Overlay tree; the view is the
// host directory again. Files opened for writing before Discard keep
// writing into the dropped copy.
func (f *FS) Discard() error {
	if f.ov == nil {
		return semfs.PathErr("discard", "/", semfs.ErrInvalid, "only a tree opened in Overlay mode has changes to discard")
	}
	f.ov.discard()
	return nil
}

// Commit applies the pending changes of an Overlay tree to the host
// directory: removals, then directory creations, then each file written
// atomically (temporary file, fsync, rename, directory fsync). Each step
// that succeeds leaves the overlay, so after a failure Changes lists what
// is still pending and Commit can be retried. Files opened for writing
// before Commit keep writing into the committed copy, not the host file:
// close them first.
func (f *FS) Commit(ctx context.Context) error {
	if f.ov == nil {
		return semfs.PathErr("commit", "/", semfs.ErrInvalid, "only a tree opened in Overlay mode has changes to commit")
	}
	o := f.ov
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, w := range sortedKeys(o.whiteouts) {
		if err := ctx.Err(); err != nil {
			return semfs.PathErr("commit", w, err, "")
		}
		// A regular file about to be replaced by a written file is left
		// for the atomic rename, so it never disappears in between.
		if _, ok := o.files[w]; ok {
			if info, err := f.root.Lstat(rel(w)); err == nil && info.Mode().IsRegular() {
				delete(o.whiteouts, w)
				continue
			}
		}
		if err := f.root.RemoveAll(rel(w)); err != nil {
			return mapErr("commit", w, err)
		}
		delete(o.whiteouts, w)
		if err := f.syncParent(w); err != nil {
			return err
		}
	}
	for _, d := range sortedKeys(o.dirs) {
		if err := ctx.Err(); err != nil {
			return semfs.PathErr("commit", d, err, "")
		}
		if err := f.root.Mkdir(rel(d), o.dirs[d].perm); err != nil {
			if info, serr := f.root.Stat(rel(d)); serr != nil || !info.IsDir() {
				return mapErr("commit", d, err)
			}
		}
		delete(o.dirs, d)
		if err := f.syncParent(d); err != nil {
			return err
		}
	}
	for _, p := range sortedKeys(o.files) {
		if err := ctx.Err(); err != nil {
			return semfs.PathErr("commit", p, err, "")
		}
		of := o.files[p]
		of.mu.RLock()
		data, perm := of.data, of.perm
		err := f.writeAtomic(p, data, perm)
		of.mu.RUnlock()
		if err != nil {
			return semfs.RewritePath(err, "commit", p)
		}
		delete(o.files, p)
	}
	return nil
}

// syncParent fsyncs the host directory holding p.
func (f *FS) syncParent(p string) error {
	dir, err := f.root.OpenRoot(rel(semfs.Dir(p)))
	if err != nil {
		return mapErr("commit", p, err)
	}
	defer dir.Close()
	return semfs.RewritePath(syncDir(dir, p), "commit", p)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
