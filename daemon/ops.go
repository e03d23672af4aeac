package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"golang.org/x/sys/unix"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/wire"
)

// handlers returns the op table of the control socket.
func (m *Main) handlers() map[string]handler {
	return map[string]handler{
		wire.OpHealth:   m.opHealth,
		wire.OpRegister: m.opRegister,
		wire.OpTag:      m.opTag,
		wire.OpQuery:    m.opQuery,
		wire.OpSearch:   m.opSearch,
		wire.OpRelated:  m.opRelated,
		wire.OpStat:     m.opStat,
		wire.OpList:     m.opList,
		wire.OpRead:     m.opRead,
		wire.OpWrite:    m.opWrite,
		wire.OpOpen:     m.opOpen,
		wire.OpTruncate: m.opTruncate,
		wire.OpSync:     m.opSync,
		wire.OpMkdir:    m.opMkdir,
		wire.OpRemove:   m.opRemove,
		wire.OpRename:   m.opRename,
		wire.OpSnapshot: m.opSnapshot,
		wire.OpDoctor:   m.opDoctor,
	}
}

func unsupported(op, what string) error {
	return &wire.Error{Code: wire.CodeUnsupported, Message: op + ": this daemon's tree has no " + what}
}

func (m *Main) opHealth(ctx context.Context, p *peer, args json.RawMessage) (any, error) {
	return m.Health(), nil
}

// validApp reports whether app is an acceptable app name: 1–128 printable
// characters.
func validApp(app string) bool {
	if app == "" || len(app) > 128 {
		return false
	}
	return strings.IndexFunc(app, func(r rune) bool { return !unicode.IsPrint(r) }) < 0
}

func (m *Main) opRegister(ctx context.Context, p *peer, args json.RawMessage) (any, error) {
	var a wire.RegisterArgs
	if err := decode("register", args, &a); err != nil {
		return nil, err
	}
	reg := registration{app: a.App}
	if a.Token != "" {
		g := m.access.lookup(a.Token)
		switch {
		case g == nil && m.Config.Tokens == "":
			return nil, semfs.PathErr("register", "/", semfs.ErrPermission, "this daemon has no tokens file (-tokens), so no token is valid; register without one")
		case g == nil:
			return nil, semfs.PathErr("register", "/", semfs.ErrPermission, "unknown token: it is not in the daemon's tokens file; nothing was registered")
		case g.app != "" && a.App == "":
			reg.app = g.app
		case g.app != "" && a.App != g.app:
			return nil, semfs.PathErr("register", "/", semfs.ErrPermission, fmt.Sprintf("token %q is for app %q, not %q; register as %q", g.id, g.app, a.App, g.app))
		}
		reg.grant = g
		if reg.app == "" {
			reg.app = g.id // a token without an app, registered without one
		}
	}
	if !validApp(reg.app) {
		return nil, semfs.PathErr("register", "/", semfs.ErrInvalid, "app must be 1 to 128 printable characters")
	}
	if p.gone {
		return nil, semfs.PathErr("register", "/", semfs.ErrPermission, errGone.Error())
	}
	if err := m.apps.register(p.proc, reg); err != nil {
		if errors.Is(err, errGone) {
			return nil, semfs.PathErr("register", "/", semfs.ErrPermission, err.Error())
		}
		return nil, err
	}
	pr := m.sock.principal(p)
	m.log.Info("registered app", "app", reg.app, "pid", p.pid, "uid", p.uid, "principal", pr.ID)
	return wire.RegisterResult{Pid: p.pid, App: reg.app, Principal: pr.ID, Groups: pr.Groups}, nil
}

func (m *Main) opTag(ctx context.Context, p *peer, args json.RawMessage) (any, error) {
	var a wire.TagArgs
	if err := decode("tag", args, &a); err != nil {
		return nil, err
	}
	return nil, semfs.SetTags(ctx, m.served, a.Path, a.Tags)
}

func (m *Main) opQuery(ctx context.Context, p *peer, args json.RawMessage) (any, error) {
	var a wire.QueryArgs
	if err := decode("query", args, &a); err != nil {
		return nil, err
	}
	q, ok := m.served.(semfs.QueryFS)
	if !ok {
		return nil, unsupported("query", "tag index")
	}
	res, err := q.Query(ctx, a.Text, a.Limit)
	if res == nil {
		res = []semfs.QueryResult{}
	}
	return res, err
}

func (m *Main) opSearch(ctx context.Context, p *peer, args json.RawMessage) (any, error) {
	var a semfs.SearchRequest
	if err := decode("search", args, &a); err != nil {
		return nil, err
	}
	s, ok := m.served.(semfs.SearchFS)
	if !ok {
		return nil, unsupported("search", "content index")
	}
	out := wire.SearchResult{Hits: []semfs.SearchHit{}}
	next, err := s.Search(ctx, a, func(h semfs.SearchHit) error {
		out.Hits = append(out.Hits, h)
		return nil
	})
	out.Next = next
	return out, err
}

func (m *Main) opRelated(ctx context.Context, p *peer, args json.RawMessage) (any, error) {
	var a wire.RelatedArgs
	if err := decode("related", args, &a); err != nil {
		return nil, err
	}
	r, ok := m.served.(semfs.RelatedFS)
	if !ok {
		return nil, unsupported("related", "content index")
	}
	name, err := semfs.Clean("related", a.Path)
	if err != nil {
		return nil, err
	}
	res, err := r.Related(ctx, name, a.Limit)
	if res == nil {
		res = []semfs.Candidate{}
	}
	return res, err
}

func statOf(p string, info fs.FileInfo) wire.Stat {
	return wire.Stat{Path: p, Name: semfs.BaseName(p), IsDir: info.IsDir(), Size: info.Size(), Mode: info.Mode(), ModTime: info.ModTime()}
}

func (m *Main) opStat(ctx context.Context, p *peer, args json.RawMessage) (any, error) {
	var a wire.PathArgs
	if err := decode("stat", args, &a); err != nil {
		return nil, err
	}
	name, err := semfs.Clean("stat", a.Path)
	if err != nil {
		return nil, err
	}
	info, err := m.served.Stat(ctx, name)
	if err != nil {
		return nil, err
	}
	st := statOf(name, info)
	if mf, ok := m.served.(semfs.MetaFS); ok && !info.IsDir() {
		if meta, err := mf.Meta(ctx, name); err == nil {
			st.Meta = &meta
		}
	}
	return st, nil
}

func (m *Main) opList(ctx context.Context, p *peer, args json.RawMessage) (any, error) {
	var a wire.PathArgs
	if err := decode("list", args, &a); err != nil {
		return nil, err
	}
	name, err := semfs.Clean("readdir", a.Path)
	if err != nil {
		return nil, err
	}
	entries, err := m.served.ReadDir(ctx, name)
	if err != nil {
		return nil, err
	}
	out := make([]wire.Stat, 0, len(entries))
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue // removed since the listing
		}
		out = append(out, statOf(semfs.Join(name, e.Name()), info))
	}
	return out, nil
}

func (m *Main) opRead(ctx context.Context, p *peer, args json.RawMessage) (any, error) {
	var a wire.ReadArgs
	if err := decode("read", args, &a); err != nil {
		return nil, err
	}
	name, err := semfs.Clean("read", a.Path)
	if err != nil {
		return nil, err
	}
	if a.Length <= 0 || a.Length > wire.MaxChunk {
		a.Length = wire.MaxChunk
	}
	if a.Offset < 0 {
		return nil, semfs.PathErr("read", name, semfs.ErrInvalid, "negative offset")
	}
	f, err := m.served.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, semfs.RewritePath(err, "read", name)
	}
	size := info.Size()
	want := min(int64(a.Length), max(size-a.Offset, 0))
	buf := make([]byte, want)
	var n int
	if ra, ok := f.(io.ReaderAt); ok {
		n, err = ra.ReadAt(buf, a.Offset)
	} else {
		if _, err = io.CopyN(io.Discard, f, a.Offset); err == nil {
			n, err = io.ReadFull(f, buf)
		}
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, semfs.RewritePath(err, "read", name)
	}
	return wire.ReadResult{Data: buf[:n], EOF: a.Offset+int64(n) >= size, Size: size}, nil
}

func (m *Main) opWrite(ctx context.Context, p *peer, args json.RawMessage) (any, error) {
	var a wire.WriteArgs
	if err := decode("write", args, &a); err != nil {
		return nil, err
	}
	perm := a.Perm
	if perm == 0 {
		perm = 0o644
	}
	if a.Whole {
		return nil, semfs.WriteFile(ctx, m.served, a.Path, a.Data, perm)
	}
	flag := os.O_WRONLY
	if a.Append {
		flag |= os.O_APPEND
	}
	f, err := semfs.OpenFile(ctx, m.served, a.Path, flag, perm)
	if err != nil {
		return nil, err
	}
	if a.Append {
		_, err = f.Write(a.Data)
	} else {
		_, err = f.WriteAt(a.Data, a.Offset)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return nil, err
}

func (m *Main) opOpen(ctx context.Context, p *peer, args json.RawMessage) (any, error) {
	var a wire.OpenArgs
	if err := decode("open", args, &a); err != nil {
		return nil, err
	}
	name, err := semfs.Clean("open", a.Path)
	if err != nil {
		return nil, err
	}
	var info fs.FileInfo
	if a.Flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC) == 0 {
		f, err := m.served.Open(ctx, name)
		if err != nil {
			return nil, err
		}
		info, err = f.Stat()
		f.Close()
		if err != nil {
			return nil, err
		}
	} else {
		perm := a.Perm
		if perm == 0 {
			perm = 0o644
		}
		f, err := semfs.OpenFile(ctx, m.served, name, a.Flag&^os.O_APPEND, perm)
		if err != nil {
			return nil, err
		}
		info, err = f.Stat()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	return statOf(name, info), nil
}

func (m *Main) opTruncate(ctx context.Context, p *peer, args json.RawMessage) (any, error) {
	var a wire.TruncateArgs
	if err := decode("truncate", args, &a); err != nil {
		return nil, err
	}
	f, err := semfs.OpenFile(ctx, m.served, a.Path, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	err = f.Truncate(a.Size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return nil, err
}

func (m *Main) opSync(ctx context.Context, p *peer, args json.RawMessage) (any, error) {
	var a wire.PathArgs
	if err := decode("sync", args, &a); err != nil {
		return nil, err
	}
	f, err := semfs.OpenFile(ctx, m.served, a.Path, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return nil, err
}

func (m *Main) opMkdir(ctx context.Context, p *peer, args json.RawMessage) (any, error) {
	var a wire.MkdirArgs
	if err := decode("mkdir", args, &a); err != nil {
		return nil, err
	}
	perm := a.Perm
	if perm == 0 {
		perm = 0o755
	}
	if a.All {
		return nil, semfs.MkdirAll(ctx, m.served, a.Path, perm)
	}
	return nil, semfs.Mkdir(ctx, m.served, a.Path, perm)
}

func (m *Main) opRemove(ctx context.Context, p *peer, args json.RawMessage) (any, error) {
	var a wire.RemoveArgs
	if err := decode("remove", args, &a); err != nil {
		return nil, err
	}
	if a.All {
		return nil, semfs.RemoveAll(ctx, m.served, a.Path)
	}
	return nil, semfs.Remove(ctx, m.served, a.Path)
}

func (m *Main) opRename(ctx context.Context, p *peer, args json.RawMessage) (any, error) {
	var a wire.RenameArgs
	if err := decode("rename", args, &a); err != nil {
		return nil, err
	}
	return nil, semfs.Rename(ctx, m.served, a.Old, a.New)
}

// opSnapshot writes an archive of the whole tree, every file whoever may
// see it, so only a caller that may read everything gets one: a principal
// of an admin token, or a caller of uid 0 or the daemon's own uid (which
// can read the backing directory anyway) that did not register with a
// token without admin. The archive goes into a descriptor the caller
// passed (args.FD), which the daemon never opens by name; or, for a
// caller of uid 0 or the daemon's uid only, to the path args.Out. Never
// into the mount, where the daemon's own write would make it a public
// file.
func (m *Main) opSnapshot(ctx context.Context, p *peer, args json.RawMessage) (any, error) {
	var a wire.SnapshotArgs
	if err := decode("snapshot", args, &a); err != nil {
		return nil, err
	}
	var out *os.File
	if a.FD {
		fd := p.takeFD()
		if fd < 0 {
			return nil, badArgs("snapshot", errors.New("fd is set but no descriptor came with the request; send it as SCM_RIGHTS with the request line"))
		}
		out = os.NewFile(uintptr(fd), "snapshot output")
		defer out.Close()
	} else if a.Out == "" {
		return nil, badArgs("snapshot", errors.New("out is required (or fd with a descriptor)"))
	}
	if m.stack == nil {
		return nil, unsupported("snapshot", "backing directory (it serves a tree given in code)")
	}
	if err := m.snapshottable(); err != nil {
		return nil, err
	}
	pr, _ := semfs.PrincipalFrom(ctx)
	host := p.uid == 0 || p.uid == uint32(os.Getuid())
	if !pr.Admin && !(host && pr.ID == uidID(p.uid)) {
		return nil, semfs.PathErr("snapshot", "/", semfs.ErrPermission,
			"an archive holds every file, whoever may see it: it needs an admin token (register with one), or a caller of uid 0 or the daemon's own uid registered without a token")
	}
	if err := m.flushCloses(ctx); err != nil {
		return nil, err
	}
	if out == nil {
		if !host {
			return nil, semfs.PathErr("snapshot", "/", semfs.ErrPermission,
				"the daemon writes an archive to a path only for a caller of uid 0 or its own uid; open the output file yourself and pass its descriptor (fd), as the Go client's Snapshot and `semfs snapshot` do")
		}
		abs, err := filepath.Abs(a.Out)
		if err != nil {
			return nil, badArgs("snapshot", err)
		}
		var st unix.Stat_t
		if err := unix.Stat(filepath.Dir(abs), &st); err != nil {
			return nil, semfs.PathErr("snapshot", "/", semfs.ErrNotExist, fmt.Sprintf("the directory of %s: %v", abs, err))
		}
		if err := m.outsideMount(st.Dev); err != nil {
			return nil, err
		}
		return m.Snapshot(ctx, abs)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(out.Fd()), &st); err != nil {
		return nil, err
	}
	mode, err := unix.FcntlInt(out.Fd(), unix.F_GETFL, 0)
	if err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || mode&unix.O_ACCMODE == unix.O_RDONLY {
		return nil, semfs.PathErr("snapshot", "/", semfs.ErrInvalid, "the descriptor passed must be a regular file open for writing")
	}
	if err := m.outsideMount(st.Dev); err != nil {
		return nil, err
	}
	res, err := writeArchive(ctx, out, m.Config.Data, m.Config.Index)
	if err == nil {
		err = out.Sync()
	}
	if err != nil {
		return nil, err
	}
	res.Out = a.Out
	return res, nil
}

// outsideMount refuses an archive on device dev when that is the mount's.
func (m *Main) outsideMount(dev uint64) error {
	dir := m.mountDir()
	if dir == "" {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil || st.Dev != dev {
		return nil
	}
	return semfs.PathErr("snapshot", "/", semfs.ErrInvalid, fmt.Sprintf(
		"the archive would be written into the mount %s, where it would be an ordinary file other callers may read; write it outside the mount (e.g. /var/backups/semfs)", dir))
}

func (m *Main) opDoctor(ctx context.Context, p *peer, args json.RawMessage) (any, error) {
	return m.Doctor(ctx), nil
}
