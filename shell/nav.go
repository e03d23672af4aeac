package shell

import (
	"context"
	"errors"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/semfs/semfs"
)

// fsNav answers stat and list questions with the FS itself (sessions
// without a View).
type fsNav struct{ fsys semfs.FS }

func (n fsNav) stat(ctx context.Context, p string) (fs.FileInfo, error) {
	return semfs.Stat(ctx, n.fsys, p)
}

func (n fsNav) readDir(ctx context.Context, p string) ([]fs.FileInfo, error) {
	ents, err := semfs.ReadDir(ctx, n.fsys, p)
	if err != nil {
		return nil, err
	}
	out := make([]fs.FileInfo, 0, len(ents))
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			if semfs.IsAbsence(err) {
				continue // removed meanwhile
			}
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

func (fsNav) added(context.Context, string) {}
func (fsNav) hidden(string) bool            { return false }

// viewNav answers from a View, plus an overlay of the paths this session
// wrote since the View's tree was built.
type viewNav struct {
	v    *View
	fsys semfs.FS

	mu      sync.Mutex
	overlay map[string]fs.FileInfo
}

func newViewNav(v *View, fsys semfs.FS) *viewNav { return &viewNav{v: v, fsys: fsys} }

func (n *viewNav) stat(ctx context.Context, p string) (fs.FileInfo, error) {
	n.mu.Lock()
	if fi, ok := n.overlay[p]; ok {
		n.mu.Unlock()
		return fi, nil
	}
	n.mu.Unlock()
	return n.v.Stat(p)
}

func (n *viewNav) readDir(ctx context.Context, p string) ([]fs.FileInfo, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	base, err := n.v.ReadDir(p)
	if err != nil {
		if _, ok := n.overlay[p]; !ok {
			return nil, err
		}
	}
	if len(n.overlay) == 0 {
		return base, nil
	}
	var extra []fs.FileInfo
	for q, fi := range n.overlay {
		if q != "/" && semfs.Dir(q) == p {
			extra = append(extra, fi)
		}
	}
	if len(extra) == 0 {
		return base, nil
	}
	out := make([]fs.FileInfo, 0, len(base)+len(extra))
	seen := map[string]bool{}
	for _, fi := range extra {
		seen[fi.Name()] = true
		out = append(out, fi)
	}
	for _, fi := range base {
		if !seen[fi.Name()] {
			out = append(out, fi)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

func (n *viewNav) hidden(p string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for q := p; ; q = semfs.Dir(q) {
		if _, ok := n.overlay[q]; !ok {
			if i, ok := n.v.t.index[q]; ok && !n.v.vis.has(i) {
				return true
			}
		}
		if q == "/" {
			return false
		}
	}
}

// added records p and the parents the write created.
func (n *viewNav) added(ctx context.Context, p string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.overlay == nil {
		n.overlay = map[string]fs.FileInfo{}
	}
	for q := p; q != "/"; q = semfs.Dir(q) {
		if q != p {
			if _, ok := n.overlay[q]; ok {
				break
			}
			if _, err := n.v.Stat(q); err == nil {
				break
			}
		}
		fi, err := n.fsys.Stat(ctx, q)
		if err != nil {
			return
		}
		n.overlay[q] = fi
	}
}

// fileInfo is a plain fs.FileInfo.
type fileInfo struct {
	name string
	size int64
	mode fs.FileMode
	mod  time.Time
}

func (f *fileInfo) Name() string       { return f.name }
func (f *fileInfo) Size() int64        { return f.size }
func (f *fileInfo) Mode() fs.FileMode  { return f.mode }
func (f *fileInfo) ModTime() time.Time { return f.mod }
func (f *fileInfo) IsDir() bool        { return f.mode.IsDir() }
func (f *fileInfo) Sys() any           { return nil }

// errText is the strerror-style text GNU tools print for err.
func errText(err error) string {
	switch {
	case errors.Is(err, semfs.ErrNotExist), errors.Is(err, semfs.ErrInvalid):
		return "No such file or directory"
	case errors.Is(err, semfs.ErrNotDir):
		return "Not a directory"
	case errors.Is(err, semfs.ErrIsDir):
		return "Is a directory"
	case errors.Is(err, semfs.ErrPermission):
		return "Permission denied"
	case errors.Is(err, semfs.ErrReadOnly):
		return "Read-only file system"
	case errors.Is(err, semfs.ErrExist):
		return "File exists"
	case errors.Is(err, semfs.ErrNotEmpty):
		return "Directory not empty"
	case errors.Is(err, semfs.ErrQuota):
		return "Disk quota exceeded"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "Interrupted"
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}
