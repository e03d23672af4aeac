package hostfs

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/semfs/semfs"
)

// Mode says what an [FS] may do to the host directory.
type Mode int

const (
	// ReadOnly refuses every write with ErrReadOnly. It is the zero Mode.
	ReadOnly Mode = iota
	// ReadWrite writes to the host directory directly.
	ReadWrite
	// Overlay keeps writes in memory until Commit.
	Overlay
)

func (m Mode) String() string {
	switch m {
	case ReadOnly:
		return "read-only"
	case ReadWrite:
		return "read-write"
	case Overlay:
		return "overlay"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// DefaultHide is the list of tree paths hidden when no [Hide] option is
// given: the index's bookkeeping directory.
var DefaultHide = []string{"/.semfs"}

// tmpPrefix starts the names of the temporary files of atomic writes.
const tmpPrefix = ".semfs-tmp-"

// Option configures [Open].
type Option func(*config)

type config struct {
	hide []string
}

// Hide sets the tree paths hidden from listings, Files and TotalSize and
// refused when named. It replaces [DefaultHide]; Hide() with no paths hides
// nothing but temporary files.
func Hide(paths ...string) Option {
	return func(c *config) { c.hide = slices.Clone(paths) }
}

// FS is a host directory seen as a semfs tree. It is safe for concurrent
// use. Close releases the directory handle.
type FS struct {
	root *os.Root
	fast *fastRoot // one-syscall path resolution where the kernel has it
	mode Mode
	hide []string
	ov   *overlay // Overlay mode only
}

// Compile-time declarations of the capabilities FS implements. In ReadOnly
// mode the writers refuse; use Tree for a view without them.
var (
	_ semfs.FS          = (*FS)(nil)
	_ semfs.ReadFileFS  = (*FS)(nil)
	_ semfs.WriteFileFS = (*FS)(nil)
	_ semfs.OpenFileFS  = (*FS)(nil)
	_ semfs.MkdirFS     = (*FS)(nil)
	_ semfs.MkdirAllFS  = (*FS)(nil)
	_ semfs.RemoveFS    = (*FS)(nil)
	_ semfs.RemoveAllFS = (*FS)(nil)
	_ semfs.RenameFS    = (*FS)(nil)
	_ semfs.FilesFS     = (*FS)(nil)
	_ semfs.SizeFS      = (*FS)(nil)
)

// Open serves the host directory dir as a tree in the given mode. Errors
// name the tree root "/", never dir.
func Open(dir string, mode Mode, opts ...Option) (*FS, error) {
	if mode != ReadOnly && mode != ReadWrite && mode != Overlay {
		return nil, semfs.PathErr("open", "/", semfs.ErrInvalid, fmt.Sprintf("unknown mode %d; use hostfs.ReadOnly, ReadWrite or Overlay", int(mode)))
	}
	c := config{hide: DefaultHide}
	for _, o := range opts {
		o(&c)
	}
	hide := make([]string, 0, len(c.hide))
	for _, h := range c.hide {
		p, err := semfs.Clean("open", h)
		if err != nil {
			return nil, err
		}
		if p == "/" {
			return nil, semfs.PathErr("open", "/", semfs.ErrInvalid, "the root cannot be hidden; hide a path below it")
		}
		hide = append(hide, p)
	}
	if dir == "" {
		return nil, semfs.PathErr("open", "/", semfs.ErrInvalid, "no host directory given")
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		switch e := mapErr("open", "/", err); {
		case errors.Is(e, semfs.ErrNotExist):
			return nil, semfs.PathErr("open", "/", semfs.ErrNotExist, "the host directory does not exist; create it or name another")
		case errors.Is(e, semfs.ErrNotDir):
			return nil, semfs.PathErr("open", "/", semfs.ErrNotDir, "the host path is not a directory; name a directory")
		default:
			return nil, e
		}
	}
	f := &FS{root: root, fast: newFastRoot(root), mode: mode, hide: hide}
	if mode == Overlay {
		f.ov = newOverlay()
	}
	return f, nil
}

// Close releases the host directory. Pending overlay changes are dropped.
func (f *FS) Close() error {
	if f.ov != nil {
		f.ov.discard()
	}
	f.fast.close()
	return mapErr("close", "/", f.root.Close())
}

// Mode reports the mode the tree was opened in.
func (f *FS) Mode() Mode { return f.mode }

// Tree returns the tree to hand to layers and front ends: f itself, or in
// ReadOnly mode a view that has no writer methods, so that capability
// detection (semfs.WriteFile's fallback, a tool list) sees a read-only tree.
func (f *FS) Tree() semfs.FS {
	if f.mode == ReadOnly {
		return roView{f}
	}
	return f
}

// rel turns a canonical tree path into a path relative to the root.
func rel(p string) string {
	if p == "/" {
		return "."
	}
	return p[1:]
}

// hidden reports whether canonical p is hidden bookkeeping.
func (f *FS) hidden(p string) bool {
	for _, h := range f.hide {
		if semfs.HasPrefix(p, h) {
			return true
		}
	}
	return strings.Contains(p, "/"+tmpPrefix)
}

// holdsHidden refuses to remove, move or replace a directory p (not the
// root) that has hidden bookkeeping below it: the change would destroy or
// carry along what the tree does not show.
func (f *FS) holdsHidden(op, p string) error {
	for _, h := range f.hide {
		if h != p && semfs.HasPrefix(h, p) {
			return semfs.PathErr(op, p, semfs.ErrPermission, "the directory holds semfs bookkeeping ("+h+"); change the entries beside it one by one")
		}
	}
	return nil
}

// check validates name and refuses hidden paths.
func (f *FS) check(op, name string) (string, error) {
	p, err := semfs.Clean(op, name)
	if err != nil {
		return "", err
	}
	if f.hidden(p) {
		return "", semfs.PathErr(op, p, semfs.ErrPermission, detailHidden)
	}
	return p, nil
}

// writable refuses writes in ReadOnly mode.
func (f *FS) writable(op, p string) error {
	if f.mode == ReadOnly {
		return semfs.PathErr(op, p, semfs.ErrReadOnly, detailReadOnly)
	}
	return nil
}

// Stat describes name. Symbolic links are followed within the tree.
func (f *FS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	p, err := f.check("stat", name)
	if err != nil {
		return nil, err
	}
	if f.ov != nil {
		return f.ov.stat(f, p)
	}
	return f.hostStat("stat", p)
}

func (f *FS) hostStat(op, p string) (fs.FileInfo, error) {
	if strings.IndexByte(p[1:], '/') >= 0 {
		// Deep paths: one openat2 instead of an openat per element.
		// A single element is one fstatat through os.Root already.
		info, errno := f.fast.stat(rel(p), semfs.BaseName(p))
		if info != nil && (info.Mode().IsRegular() || info.IsDir()) {
			return info, nil
		}
		if missing(errno, 0) {
			return nil, errnoErr(op, p, errno)
		}
	}
	info, err := f.root.Stat(rel(p))
	if err != nil {
		return nil, mapErr(op, p, err)
	}
	if p == "/" {
		return namedInfo{info, "/"}, nil
	}
	if !info.Mode().IsRegular() && !info.IsDir() {
		return nil, semfs.PathErr(op, p, semfs.ErrInvalid, detailNotFile)
	}
	return info, nil
}

// Open opens the regular file name for reading.
func (f *FS) Open(ctx context.Context, name string) (fs.File, error) {
	p, err := f.check("open", name)
	if err != nil {
		return nil, err
	}
	if f.ov != nil {
		return f.ov.open(f, p)
	}
	return f.hostOpen("open", p, os.O_RDONLY, 0)
}

// hostOpen opens p on the host and checks, on the open descriptor, that it
// is a regular file: whatever was swapped in between a Stat and this open,
// the check is on what was opened. O_NONBLOCK keeps a named pipe from
// blocking the open; it has no effect on regular files.
func (f *FS) hostOpen(op, p string, flag int, perm fs.FileMode) (*file, error) {
	if p == "/" {
		return nil, semfs.PathErr(op, p, semfs.ErrIsDir, "the root is a directory; list it instead")
	}
	var h *os.File
	if fastFlags(flag, perm) {
		var mode uint32
		if flag&os.O_CREATE != 0 {
			mode = uint32(perm)
		}
		fd, errno := f.fast.open(rel(p), flag|syscall.O_NONBLOCK, mode)
		if fd >= 0 {
			h = os.NewFile(uintptr(fd), p)
		} else if missing(errno, flag) {
			return nil, errnoErr(op, p, errno)
		}
	}
	if h == nil {
		var err error
		h, err = f.root.OpenFile(rel(p), flag|syscall.O_NONBLOCK, perm)
		if err != nil {
			return nil, mapErr(op, p, err)
		}
	}
	info, err := h.Stat()
	if err != nil {
		h.Close()
		return nil, mapErr(op, p, err)
	}
	switch {
	case info.IsDir():
		h.Close()
		return nil, semfs.PathErr(op, p, semfs.ErrIsDir, "a directory cannot be opened as a file; list it instead")
	case !info.Mode().IsRegular():
		h.Close()
		return nil, semfs.PathErr(op, p, semfs.ErrInvalid, detailNotFile)
	}
	// In Overlay mode a path's later opens may be overlay files, which have
	// no descriptor: handing out the host's would let a front end mix the
	// two for one file.
	return &file{f: h, path: p, writable: flag&(os.O_WRONLY|os.O_RDWR) != 0, hostFd: f.ov == nil}, nil
}

// fastFlags reports whether an open with flag and perm may take the
// openat2 fast path: the kernel then does what os.Root.OpenFile does.
// O_APPEND is left to os.Root, whose File refuses WriteAt on it; a perm
// os.Root refuses goes there for its error.
func fastFlags(flag int, perm fs.FileMode) bool {
	const allowed = syscall.O_ACCMODE | os.O_CREATE | os.O_EXCL | os.O_TRUNC
	return flag&^allowed == 0 && perm&0o777 == perm
}

// ReadFile reads the whole file name.
func (f *FS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	p, err := f.check("read", name)
	if err != nil {
		return nil, err
	}
	if f.ov != nil {
		if data, ok, err := f.ov.readFile(f, p); ok || err != nil {
			return data, err
		}
	}
	return f.hostReadFile(p)
}

func (f *FS) hostReadFile(p string) ([]byte, error) {
	data, ok, errno := f.fast.readFile(rel(p))
	if ok {
		return data, nil
	}
	if missing(errno, 0) {
		return nil, errnoErr("read", p, errno)
	}
	h, err := f.hostOpen("read", p, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer h.f.Close()
	info, err := h.f.Stat()
	if err != nil {
		return nil, mapErr("read", p, err)
	}
	buf := make([]byte, 0, info.Size()+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := h.f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			if err == io.EOF {
				return buf, nil
			}
			return nil, mapErr("read", p, err)
		}
	}
}

// ReadDir lists the directory name, sorted by name. Hidden paths, entries
// semfs does not model and links that escape, dangle, loop or point above
// themselves are left out. Files and directories come with their type
// only; an entry's Info stats it when asked (and fails with ErrNotExist if
// it was removed since), so a listing that needs names and types — the FUSE
// mount's READDIR, a walk by type — costs no stat per entry.
func (f *FS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	p, err := f.check("readdir", name)
	if err != nil {
		return nil, err
	}
	if f.ov != nil {
		return f.ov.readDir(f, p)
	}
	return f.hostReadDir("readdir", p, false)
}

// hostReadDir lists p on the host. A directory opened through os.Root
// reads each entry's FileInfo with fstatat on the directory's descriptor as
// it lists, so the entries' Info never touches the host by path. With infos
// false (a walk that needs only names and types), the directory is opened
// with the fast path when it can be and files and directories come back as
// lazyEntry, whose Info goes through the tree: os.File's own lazy Info
// would stat by a path name, which for a descriptor opened with openat2 is
// not a host path.
func (f *FS) hostReadDir(op, p string, infos bool) ([]fs.DirEntry, error) {
	var d *os.File
	if !infos {
		if fd, _ := f.fast.open(rel(p), syscall.O_RDONLY|syscall.O_DIRECTORY, 0); fd >= 0 {
			d = os.NewFile(uintptr(fd), p)
		}
	}
	if d == nil {
		var err error
		if d, err = f.root.Open(rel(p)); err != nil {
			return nil, mapErr(op, p, err)
		}
	}
	ents, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return nil, mapErr(op, p, err)
	}
	out := make([]fs.DirEntry, 0, len(ents))
	var above map[devIno]bool // directories a link must not point to; built on first need
	for _, e := range ents {
		child := semfs.Join(p, e.Name())
		if f.hidden(child) || !semfs.ValidPath(child) {
			continue
		}
		var info fs.FileInfo
		switch t := e.Type(); {
		case (t.IsDir() || t.IsRegular()) && !infos:
			out = append(out, lazyEntry{f: f, path: child, typ: t})
			continue
		case t.IsDir() || t.IsRegular():
			info, err = e.Info()
			if err != nil {
				continue // removed while we listed
			}
		case t&fs.ModeSymlink != 0:
			info, err = f.root.Stat(rel(child))
			if err != nil || (!info.Mode().IsRegular() && !info.IsDir()) {
				continue // escapes, dangles, loops, or is special
			}
			if info.IsDir() {
				if above == nil {
					above = f.dirsAbove(p)
				}
				if id, ok := idOf(info); ok && above[id] {
					continue
				}
			}
		default:
			continue
		}
		out = append(out, fs.FileInfoToDirEntry(info))
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// lazyEntry is a listed file or directory whose FileInfo is read on
// demand, through the tree.
type lazyEntry struct {
	f    *FS
	path string
	typ  fs.FileMode
}

func (e lazyEntry) Name() string               { return semfs.BaseName(e.path) }
func (e lazyEntry) IsDir() bool                { return e.typ.IsDir() }
func (e lazyEntry) Type() fs.FileMode          { return e.typ }
func (e lazyEntry) Info() (fs.FileInfo, error) { return e.f.hostStat("stat", e.path) }

// devIno identifies a host directory.
type devIno struct{ dev, ino uint64 }

func idOf(info fs.FileInfo) (devIno, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return devIno{}, false
	}
	return devIno{uint64(st.Dev), uint64(st.Ino)}, true
}

// dirsAbove returns the identities of p, its ancestors and the hidden
// directories: a link to one of them would make a walk endless or expose
// bookkeeping.
func (f *FS) dirsAbove(p string) map[devIno]bool {
	set := map[devIno]bool{}
	add := func(q string) {
		if info, err := f.root.Stat(rel(q)); err == nil {
			if id, ok := idOf(info); ok {
				set[id] = true
			}
		}
	}
	semfs.Ancestors(p, func(dir string) bool { add(dir); return true })
	add(p)
	for _, h := range f.hide {
		add(h)
	}
	return set
}

// Files yields every regular file below root, sorted by path.
func (f *FS) Files(ctx context.Context, root string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		var files []string
		err := f.walk(ctx, "files", root, false, func(p string, _ fs.FileInfo) {
			files = append(files, p)
		})
		if err != nil {
			yield("", err)
			return
		}
		slices.Sort(files)
		for _, p := range files {
			if !yield(p, nil) {
				return
			}
		}
	}
}

// TotalSize returns the bytes in all visible regular files.
func (f *FS) TotalSize(ctx context.Context) (int64, error) {
	var total int64
	err := f.walk(ctx, "size", "/", true, func(_ string, info fs.FileInfo) { total += info.Size() })
	return total, err
}

// walk calls fn for every regular file at or below name; info is nil
// unless needInfo.
func (f *FS) walk(ctx context.Context, op, name string, needInfo bool, fn func(p string, info fs.FileInfo)) error {
	p, err := f.check(op, name)
	if err != nil {
		return err
	}
	info, err := f.Stat(ctx, p)
	if err != nil {
		return semfs.RewritePath(err, op, p)
	}
	if !info.IsDir() {
		fn(p, info)
		return nil
	}
	var rec func(dir string) error
	rec = func(dir string) error {
		if err := ctx.Err(); err != nil {
			return semfs.PathErr(op, dir, err, "")
		}
		var ents []fs.DirEntry
		if f.ov != nil {
			ents, err = f.ReadDir(ctx, dir)
		} else {
			ents, err = f.hostReadDir(op, dir, needInfo)
		}
		if err != nil {
			return semfs.RewritePath(err, op, dir)
		}
		for _, e := range ents {
			child := semfs.Join(dir, e.Name())
			if e.IsDir() {
				err := rec(child)
				if err != nil && !errors.Is(err, semfs.ErrNotExist) && !errors.Is(err, semfs.ErrNotDir) {
					return err
				}
				// A directory removed or replaced while we walk is
				// simply no longer part of the answer.
				continue
			}
			var info fs.FileInfo
			if needInfo {
				if info, err = e.Info(); err != nil {
					if errors.Is(err, semfs.ErrNotExist) {
						continue // removed while we walk
					}
					return mapErr(op, child, err)
				}
			}
			fn(child, info)
		}
		return nil
	}
	return rec(p)
}

// WriteFile replaces name with data, creating missing parents. In
// ReadWrite mode the replacement is atomic and durable: a temporary file in
// the same directory is written, fsynced and renamed over name, then the
// directory is fsynced. An existing file keeps its permission bits. A
// symbolic link at name is replaced by the file, not written through.
func (f *FS) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	p, err := f.check("write", name)
	if err != nil {
		return err
	}
	if err := f.writable("write", p); err != nil {
		return err
	}
	if p == "/" {
		return semfs.PathErr("write", p, semfs.ErrIsDir, "the root is a directory")
	}
	if f.ov != nil {
		return f.ov.writeFile(f, p, data, perm)
	}
	if err := f.hostMkdirAll("write", semfs.Dir(p), 0o755); err != nil {
		return semfs.RewritePath(err, "write", p)
	}
	return f.writeAtomic(p, data, perm)
}

// writeAtomic writes data to p through a temporary file; p's parent exists.
func (f *FS) writeAtomic(p string, data []byte, perm fs.FileMode) error {
	dirPath, base := semfs.Split(p)
	dir, err := f.root.OpenRoot(rel(dirPath))
	if err != nil {
		return mapErr("write", p, err)
	}
	defer dir.Close()
	if old, err := dir.Lstat(base); err == nil {
		switch {
		case old.IsDir():
			return semfs.PathErr("write", p, semfs.ErrIsDir, "a directory exists at this path")
		case old.Mode().IsRegular():
			perm = old.Mode().Perm()
		}
	}
	tmp := tmpPrefix + rand.Text()[:16]
	h, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm.Perm())
	if err != nil {
		return mapErr("write", p, err)
	}
	fail := func(err error) error {
		h.Close()
		dir.Remove(tmp)
		return mapErr("write", p, err)
	}
	if _, err := h.Write(data); err != nil {
		return fail(err)
	}
	if err := h.Chmod(perm.Perm()); err != nil { // umask would narrow it
		return fail(err)
	}
	if err := h.Sync(); err != nil {
		return fail(err)
	}
	if err := h.Close(); err != nil {
		dir.Remove(tmp)
		return mapErr("write", p, err)
	}
	if err := dir.Rename(tmp, base); err != nil {
		dir.Remove(tmp)
		return mapErr("write", p, err)
	}
	return syncDir(dir, p)
}

// syncDir fsyncs an open directory so that entries created or renamed in it
// survive a crash.
func syncDir(dir *os.Root, p string) error {
	d, err := dir.Open(".")
	if err != nil {
		return mapErr("sync", p, err)
	}
	defer d.Close()
	return mapErr("sync", p, d.Sync())
}

// OpenFile opens name with flag (os.O_* flags). It does not create missing
// parents. In ReadWrite mode the file is the host file itself; Sync is
// fsync.
func (f *FS) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	p, err := f.check("open", name)
	if err != nil {
		return nil, err
	}
	writes := flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0
	if writes {
		if err := f.writable("open", p); err != nil {
			return nil, err
		}
	}
	if f.ov != nil {
		return f.ov.openFile(f, p, flag, perm)
	}
	h, err := f.hostOpen("open", p, flag, perm)
	if err != nil {
		return nil, err
	}
	return h, nil
}

// Mkdir creates the directory name; its parent must exist.
func (f *FS) Mkdir(ctx context.Context, name string, perm fs.FileMode) error {
	p, err := f.check("mkdir", name)
	if err != nil {
		return err
	}
	if err := f.writable("mkdir", p); err != nil {
		return err
	}
	if p == "/" {
		return semfs.PathErr("mkdir", p, semfs.ErrExist, "the root always exists")
	}
	if f.ov != nil {
		return f.ov.mkdir(f, p, perm)
	}
	return mapErr("mkdir", p, f.root.Mkdir(rel(p), perm.Perm()))
}

// MkdirAll creates name and its missing parents.
func (f *FS) MkdirAll(ctx context.Context, name string, perm fs.FileMode) error {
	p, err := f.check("mkdir", name)
	if err != nil {
		return err
	}
	if err := f.writable("mkdir", p); err != nil {
		return err
	}
	if f.ov != nil {
		return f.ov.mkdirAll(f, p, perm)
	}
	return f.hostMkdirAll("mkdir", p, perm)
}

func (f *FS) hostMkdirAll(op, p string, perm fs.FileMode) error {
	if p == "/" {
		return nil
	}
	err := f.root.MkdirAll(rel(p), perm.Perm())
	if err == nil {
		return nil
	}
	e := mapErr(op, p, err)
	if errors.Is(e, semfs.ErrExist) {
		// MkdirAll reports EEXIST when a file sits at p.
		if info, serr := f.root.Stat(rel(p)); serr == nil && info.IsDir() {
			return nil
		}
		return semfs.PathErr(op, p, semfs.ErrNotDir, "a file exists at this path")
	}
	if errors.Is(e, semfs.ErrNotDir) {
		return semfs.PathErr(op, p, semfs.ErrNotDir, "a file sits on the way to this path")
	}
	return e
}

// Remove removes a file or an empty directory.
func (f *FS) Remove(ctx context.Context, name string) error {
	p, err := f.check("remove", name)
	if err != nil {
		return err
	}
	if err := f.writable("remove", p); err != nil {
		return err
	}
	if p == "/" {
		return semfs.PathErr("remove", p, semfs.ErrInvalid, "the root cannot be removed; remove what is in it")
	}
	if err := f.holdsHidden("remove", p); err != nil {
		return err
	}
	if f.ov != nil {
		return f.ov.remove(f, p)
	}
	err = f.root.Remove(rel(p))
	if err != nil {
		e := mapErr("remove", p, err)
		if errors.Is(e, semfs.ErrExist) { // some systems say EEXIST for ENOTEMPTY
			return semfs.PathErr("remove", p, semfs.ErrNotEmpty, "")
		}
		return e
	}
	return nil
}

// RemoveAll removes name and everything below it; it succeeds if name does
// not exist. Removing "/" removes every visible child of the root. A subtree
// holding a hidden path is refused whole.
func (f *FS) RemoveAll(ctx context.Context, name string) error {
	p, err := f.check("removeall", name)
	if err != nil {
		return err
	}
	if err := f.writable("removeall", p); err != nil {
		return err
	}
	if p != "/" {
		if err := f.holdsHidden("removeall", p); err != nil {
			return err
		}
	}
	if f.ov != nil {
		return f.ov.removeAll(f, p)
	}
	if p != "/" {
		return mapErr("removeall", p, f.root.RemoveAll(rel(p)))
	}
	d, err := f.root.Open(".")
	if err != nil {
		return mapErr("removeall", p, err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return mapErr("removeall", p, err)
	}
	for _, n := range names {
		child := "/" + n
		if f.hidden(child) && !strings.HasPrefix(n, tmpPrefix) {
			continue
		}
		if err := f.root.RemoveAll(n); err != nil {
			return mapErr("removeall", semfs.Join("/", printableName(n)), err)
		}
	}
	return nil
}

// printableName makes a host name safe to show in an error.
func printableName(n string) string {
	if semfs.ValidPath("/" + n) {
		return n
	}
	return "(unprintable name)"
}

// Rename moves oldname to newname with rename(2) semantics.
func (f *FS) Rename(ctx context.Context, oldname, newname string) error {
	o, err := f.check("rename", oldname)
	if err != nil {
		return err
	}
	n, err := f.check("rename", newname)
	if err != nil {
		return err
	}
	if err := f.writable("rename", o); err != nil {
		return err
	}
	if o == "/" || n == "/" {
		return semfs.PathErr("rename", o, semfs.ErrInvalid, "the root cannot be moved or replaced")
	}
	if err := f.holdsHidden("rename", o); err != nil {
		return err
	}
	if err := f.holdsHidden("rename", n); err != nil {
		return err
	}
	if f.ov != nil {
		return f.ov.rename(f, o, n)
	}
	err = f.renameHost(o, n)
	if err == nil {
		return nil
	}
	if errors.Is(err, errDestParent) {
		return semfs.PathErr("rename", n, semfs.ErrNotExist, "the destination's parent directory does not exist")
	}
	e := mapErr("rename", o, err)
	switch {
	case errors.Is(e, semfs.ErrExist):
		return semfs.PathErr("rename", n, semfs.ErrNotEmpty, "the destination is a directory that is not empty")
	case errors.Is(e, semfs.ErrNotEmpty):
		return semfs.PathErr("rename", n, semfs.ErrNotEmpty, "the destination is a directory that is not empty")
	case errors.Is(e, semfs.ErrInvalid) && semfs.HasPrefix(n, o):
		return semfs.PathErr("rename", o, semfs.ErrInvalid, "a directory cannot move below itself")
	case errors.Is(e, semfs.ErrIsDir):
		return semfs.PathErr("rename", n, semfs.ErrIsDir, "a file cannot replace a directory")
	case errors.Is(e, semfs.ErrNotDir):
		if info, serr := f.root.Lstat(rel(o)); serr == nil && info.IsDir() {
			return semfs.PathErr("rename", n, semfs.ErrNotDir, "a directory cannot replace a file")
		}
		if info, serr := f.root.Stat(rel(semfs.Dir(n))); serr == nil && !info.IsDir() {
			return semfs.PathErr("rename", n, semfs.ErrNotDir, semfs.Dir(n)+" is a file")
		}
	}
	return e
}

// errDestParent reports a missing destination parent from renameHost.
var errDestParent = errors.New("destination parent missing")

// namedInfo renames a FileInfo (the root is called "/").
type namedInfo struct {
	fs.FileInfo
	name string
}

func (n namedInfo) Name() string { return n.name }

// roView is the ReadOnly tree without writer methods.
type roView struct{ f *FS }

var (
	_ semfs.FS         = roView{}
	_ semfs.ReadFileFS = roView{}
	_ semfs.FilesFS    = roView{}
	_ semfs.SizeFS     = roView{}
)

func (v roView) Open(ctx context.Context, name string) (fs.File, error) { return v.f.Open(ctx, name) }
func (v roView) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	return v.f.Stat(ctx, name)
}
func (v roView) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	return v.f.ReadDir(ctx, name)
}
func (v roView) ReadFile(ctx context.Context, name string) ([]byte, error) {
	return v.f.ReadFile(ctx, name)
}
func (v roView) Files(ctx context.Context, root string) iter.Seq2[string, error] {
	return v.f.Files(ctx, root)
}
func (v roView) TotalSize(ctx context.Context) (int64, error) { return v.f.TotalSize(ctx) }
