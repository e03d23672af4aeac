package mount

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/semfs/semfs"
)

// Mount is one entry of the mount table.
type Mount struct {
	// At is where the backend appears in the tree ("/", "/memory").
	At string
	// FS is the backend.
	FS semfs.FS
	// KeepAbsolute calls the backend with full tree paths (/memory/notes/x.md)
	// instead of translated ones (/notes/x.md). Seed 004 calls this
	// "rooted: false".
	KeepAbsolute bool
	// ReadOnly refuses every write into the mount with semfs.ErrReadOnly.
	ReadOnly bool
}

// ErrCrossMount is wrapped, together with semfs.ErrPermission, by the error
// of a rename from one mount into another.
var ErrCrossMount = errors.New("rename across mounts")

// Option configures New.
type Option func(*config)

type config struct {
	modTime time.Time
}

// WithModTime sets the modification time reported for synthesised
// directories (the ancestors of mount points that no backend holds). The
// default is the time New was called.
func WithModTime(t time.Time) Option { return func(c *config) { c.modTime = t } }

// FS is a mount table. It is safe for concurrent use; the table itself is
// fixed at New.
type FS struct {
	mounts    []*mnt              // longest At first
	points    map[string]*mnt     // mount point -> mount
	dirs      map[string][]string // proper ancestor of a mount point -> sorted child names leading to mount points
	writable  string              // "/memory, /work" for error details
	structLen int                 // length of the longest mount point
	modTime   time.Time
}

// mnt is a mount with its path translation.
type mnt struct {
	Mount
	identity bool // backend paths equal tree paths
}

// inner maps a tree path inside m to the backend's path.
func (m *mnt) inner(p string) string {
	if m.identity {
		return p
	}
	return semfs.Rel(p, m.At)
}

// outer maps a backend path to the tree path.
func (m *mnt) outer(bp string) string {
	if m.identity {
		return bp
	}
	if bp == "/" {
		return m.At
	}
	return m.At + bp
}

// err rewrites a backend error to the tree's view of paths. A path the
// backend reports is mapped back into the tree; anything else is reported
// at treePath.
func (m *mnt) err(err error, op, treePath string) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return &fs.PathError{Op: op, Path: treePath, Err: err}
	}
	if m.identity && pe == err {
		return err
	}
	path := treePath
	if pe.Path != "" && pe.Path[0] == '/' && semfs.ValidPath(pe.Path) {
		path = m.outer(pe.Path)
	}
	return &fs.PathError{Op: pe.Op, Path: path, Err: pe.Err}
}

// New builds a mount table. Mount points must be valid paths, distinct, with
// a non-nil FS; the order of mounts does not matter.
func New(mounts []Mount, opts ...Option) (*FS, error) {
	cfg := config{modTime: time.Now()}
	for _, o := range opts {
		o(&cfg)
	}
	f := &FS{points: map[string]*mnt{}, dirs: map[string][]string{}, modTime: cfg.modTime, structLen: 1}
	for _, m := range mounts {
		at, err := semfs.Clean("mount", m.At)
		if err != nil {
			return nil, err
		}
		if m.FS == nil {
			return nil, semfs.PathErr("mount", at, semfs.ErrInvalid, "mount has no file system")
		}
		if f.points[at] != nil {
			return nil, semfs.PathErr("mount", at, semfs.ErrInvalid, "two mounts at the same path")
		}
		m.At = at
		f.structLen = max(f.structLen, len(at))
		e := &mnt{Mount: m, identity: m.KeepAbsolute || at == "/"}
		f.points[at] = e
		f.mounts = append(f.mounts, e)
	}
	// Longest prefix first, then by path so the order is deterministic.
	slices.SortFunc(f.mounts, func(a, b *mnt) int {
		if len(a.At) != len(b.At) {
			return len(b.At) - len(a.At)
		}
		return strings.Compare(a.At, b.At)
	})
	var writable []string
	for _, m := range f.mounts {
		if !m.ReadOnly {
			writable = append(writable, m.At)
		}
		// Record every proper ancestor with the child name leading down.
		child := m.At
		for child != "/" {
			dir, name := semfs.Split(child)
			if !slices.Contains(f.dirs[dir], name) {
				f.dirs[dir] = append(f.dirs[dir], name)
			}
			child = dir
		}
	}
	for _, names := range f.dirs {
		slices.Sort(names)
	}
	slices.Sort(writable)
	if len(writable) == 0 {
		f.writable = "none"
	} else {
		f.writable = strings.Join(writable, ", ")
	}
	return f, nil
}

// Mounts returns the mount table, longest mount point first.
func (f *FS) Mounts() []Mount {
	out := make([]Mount, len(f.mounts))
	for i, m := range f.mounts {
		out[i] = m.Mount
	}
	return out
}

// Unwrap returns the only backend when the table has exactly one mount, so
// that semfs.Base reaches it for snapshots, and nil otherwise (a table of
// several backends has no single child: snapshot each of Mounts).
func (f *FS) Unwrap() semfs.FS {
	if len(f.mounts) == 1 {
		return f.mounts[0].FS
	}
	return nil
}

// resolve returns the mount covering canonical p (longest prefix), or nil.
func (f *FS) resolve(p string) *mnt {
	for _, m := range f.mounts {
		if semfs.HasPrefix(p, m.At) {
			return m
		}
	}
	return nil
}

// structural reports whether p is a mount point or a directory above one
// (the root always is: it exists even in an empty table).
func (f *FS) structural(p string) bool {
	if len(p) > f.structLen {
		return false // the common case, without hashing p
	}
	if p == "/" {
		return true
	}
	if _, ok := f.points[p]; ok {
		return true
	}
	_, ok := f.dirs[p]
	return ok
}

// pointsBelow lists the mount points at or below p.
func (f *FS) pointsBelow(p string) []string {
	var out []string
	for _, m := range f.mounts {
		if semfs.HasPrefix(m.At, p) {
			out = append(out, m.At)
		}
	}
	slices.Sort(out)
	return out
}

// notInMount is the refusal of a write at a path no mount covers.
func (f *FS) notInMount(op, p string) error {
	return semfs.PathErr(op, p, semfs.ErrPermission,
		p+" is not inside a mount; writable mounts: "+f.writable)
}

// structuralErr is the refusal to remove or rename a mount point or a
// directory holding one.
func (f *FS) structuralErr(op, p string) error {
	if _, ok := f.points[p]; ok {
		return semfs.PathErr(op, p, semfs.ErrPermission,
			p+" is a mount point; mounting and unmounting is a host decision")
	}
	return semfs.PathErr(op, p, semfs.ErrPermission,
		p+" holds mount points ("+strings.Join(f.pointsBelow(p), ", ")+"); mounting and unmounting is a host decision")
}

// writeTarget returns the mount a write at p goes to, or the refusal.
func (f *FS) writeTarget(op, p string) (*mnt, error) {
	m := f.resolve(p)
	if m == nil {
		return nil, f.notInMount(op, p)
	}
	if m.ReadOnly {
		return nil, semfs.PathErr(op, p, semfs.ErrReadOnly, "mount "+m.At+" is read-only; writable mounts: "+f.writable)
	}
	return m, nil
}

// ensureParent creates, in m's backend, the parent of p when that parent is
// a directory only the mount table knows (a mount point or an ancestor of
// one), so that operations that need an existing parent work there.
func (f *FS) ensureParent(ctx context.Context, op string, m *mnt, p string) error {
	d := semfs.Dir(p)
	if !f.structural(d) {
		return nil
	}
	bd := m.inner(d)
	if bd == "/" {
		return nil
	}
	return m.err(semfs.MkdirAll(ctx, m.FS, bd, 0o755), op, d)
}

// isWriteFlag reports whether an OpenFile flag asks for more than reading.
func isWriteFlag(flag int) bool {
	return flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0
}

// sameFS reports whether a and b are the same backend value.
func sameFS(a, b semfs.FS) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	if ta != tb || !ta.Comparable() {
		return false
	}
	return a == b
}

// synthInfo describes a directory only the mount table knows.
type synthInfo struct {
	name    string
	modTime time.Time
}

func (s synthInfo) Name() string       { return s.name }
func (s synthInfo) Size() int64        { return 0 }
func (s synthInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o555 }
func (s synthInfo) ModTime() time.Time { return s.modTime }
func (s synthInfo) IsDir() bool        { return true }
func (s synthInfo) Sys() any           { return nil }

// renamedInfo reports a backend's info under the tree's name (a translated
// mount's root is the backend's "/").
type renamedInfo struct {
	fs.FileInfo
	name string
}

func (r renamedInfo) Name() string { return r.name }

// synthEntry is a listing entry for a mount point or a directory above one;
// Info stats it through the table, so the entry and Stat agree.
type synthEntry struct {
	f    *FS
	ctx  context.Context
	path string
}

func (e synthEntry) Name() string               { return semfs.BaseName(e.path) }
func (e synthEntry) IsDir() bool                { return true }
func (e synthEntry) Type() fs.FileMode          { return fs.ModeDir }
func (e synthEntry) Info() (fs.FileInfo, error) { return e.f.Stat(e.ctx, e.path) }
func (e synthEntry) String() string             { return fmt.Sprintf("d %s/", e.Name()) }
