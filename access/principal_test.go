package access_test

import (
	"context"
	"io/fs"
	"iter"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/semfstest"
)

// session runs every call as a session principal, the way a front end
// does, so the suite exercises visibility checks through tags.
type session struct {
	f  *access.FS
	pr semfs.Principal
}

func (s session) c(ctx context.Context) context.Context { return semfs.WithPrincipal(ctx, s.pr) }

func (s session) Open(ctx context.Context, n string) (fs.File, error) { return s.f.Open(s.c(ctx), n) }
func (s session) Stat(ctx context.Context, n string) (fs.FileInfo, error) {
	return s.f.Stat(s.c(ctx), n)
}
func (s session) ReadDir(ctx context.Context, n string) ([]fs.DirEntry, error) {
	return s.f.ReadDir(s.c(ctx), n)
}
func (s session) ReadFile(ctx context.Context, n string) ([]byte, error) {
	return s.f.ReadFile(s.c(ctx), n)
}
func (s session) WriteFile(ctx context.Context, n string, d []byte, p fs.FileMode) error {
	return s.f.WriteFile(s.c(ctx), n, d, p)
}
func (s session) OpenFile(ctx context.Context, n string, flag int, p fs.FileMode) (semfs.RWFile, error) {
	return s.f.OpenFile(s.c(ctx), n, flag, p)
}
func (s session) Mkdir(ctx context.Context, n string, p fs.FileMode) error {
	return s.f.Mkdir(s.c(ctx), n, p)
}
func (s session) MkdirAll(ctx context.Context, n string, p fs.FileMode) error {
	return s.f.MkdirAll(s.c(ctx), n, p)
}
func (s session) Remove(ctx context.Context, n string) error    { return s.f.Remove(s.c(ctx), n) }
func (s session) RemoveAll(ctx context.Context, n string) error { return s.f.RemoveAll(s.c(ctx), n) }
func (s session) Rename(ctx context.Context, o, n string) error { return s.f.Rename(s.c(ctx), o, n) }
func (s session) Files(ctx context.Context, root string) iter.Seq2[string, error] {
	return s.f.Files(s.c(ctx), root)
}
func (s session) TotalSize(ctx context.Context) (int64, error) { return s.f.TotalSize(s.c(ctx)) }
func (s session) Exists(ctx context.Context, n string) (bool, error) {
	return s.f.Exists(s.c(ctx), n)
}

var (
	_ semfs.WriteFileFS = session{}
	_ semfs.OpenFileFS  = session{}
	_ semfs.MkdirAllFS  = session{}
	_ semfs.RemoveAllFS = session{}
	_ semfs.RenameFS    = session{}
	_ semfs.FilesFS     = session{}
	_ semfs.SizeFS      = session{}
	_ semfs.ExistsFS    = session{}
)

// The suite's files carry no groups, so a session sees them all; what is
// exercised is the Meta lookup per file and the scan per directory.
func TestConformanceSessionOverTags(t *testing.T) {
	semfstest.Run(t, func(t *testing.T) semfs.FS {
		return session{f: access.New(newTagged(nil), access.Policy{Quota: 1 << 40}), pr: semfs.Principal{ID: "agent", Groups: []string{"support"}}}
	})
}
