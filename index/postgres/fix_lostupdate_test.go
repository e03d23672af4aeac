package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/internal/testserver"
	"github.com/semfs/semfs/meta"
)

// gatedRows runs hook once, after the rows of a read-modify-write were
// read and before they are written: after File or Files (a read outside
// the write) or inside Update's build (a read in the write's transaction).
type gatedRows struct {
	*Index
	hook atomic.Pointer[func()]
}

func (g *gatedRows) run() {
	if h := g.hook.Swap(nil); h != nil {
		(*h)()
	}
}

func (g *gatedRows) File(ctx context.Context, p string) (index.File, error) {
	row, err := g.Index.File(ctx, p)
	g.run()
	return row, err
}

func (g *gatedRows) Files(ctx context.Context, paths []string) (map[string]index.File, error) {
	rows, err := g.Index.Files(ctx, paths)
	g.run()
	return rows, err
}

func (g *gatedRows) Update(ctx context.Context, paths []string, build func(map[string]index.File) ([]index.Item, error)) error {
	return g.Index.Update(ctx, paths, func(stored map[string]index.File) ([]index.Item, error) {
		g.run()
		return build(stored)
	})
}

// testNoLostUpdateBetweenDaemons: two daemons' meta layers over one
// database and one tree. While one builds a file's row from the stored
// one, the other changes that row: the save must not write back the
// groups the other daemon set (which exposed a file it restricted), and
// the tag must not write back the bytes' fields of the other daemon's
// save (its hash and size went stale).
func testNoLostUpdateBetweenDaemons(t *testing.T, pg *testserver.Postgres) {
	for _, gatedSaves := range []bool{true, false} {
		name := map[bool]string{true: "save-reads-then-other-tags", false: "tag-reads-then-other-saves"}[gatedSaves]
		t.Run(name, func(t *testing.T) {
			dsn := freshDB(t, pg)
			ctx := context.Background()
			dir := t.TempDir()
			layer := func(store index.Store) *meta.FS {
				t.Helper()
				host, err := hostfs.Open(dir, hostfs.ReadWrite)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { host.Close() })
				m, err := meta.New(host, store, meta.Options{PeerPoll: -1, Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { m.Close() })
				return m
			}
			g := &gatedRows{Index: openStore(t, dsn)}
			gated, other := layer(g), layer(openStore(t, dsn))
			app := semfs.WithPrincipal(ctx, semfs.Principal{ID: "app"})
			if err := gated.WriteFile(app, "/x.md", []byte("v1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			v2 := []byte("v2, longer\n")
			save := func(m *meta.FS) error { return m.WriteFile(app, "/x.md", v2, 0o644) }
			tag := func(m *meta.FS) error {
				return m.SetTags(ctx, "/x.md", semfs.Tags{Task: "audit", Groups: []string{"finance"}})
			}
			first, second := save, tag
			if !gatedSaves {
				first, second = tag, save
			}
			// The other daemon's change, while the gated one holds the
			// row it read. Where the gated write holds the row locked,
			// the change waits for it: let it run 300 ms, then go on.
			done := make(chan error, 1)
			hook := func() {
				go func() { done <- second(other) }()
				select {
				case err := <-done:
					done <- err
				case <-time.After(300 * time.Millisecond):
				}
			}
			g.hook.Store(&hook)
			if err := first(gated); err != nil {
				t.Fatal(err)
			}
			if g.hook.Load() != nil {
				t.Fatal("the gated layer did not read the row")
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			row, err := openStore(t, dsn).File(ctx, "/x.md")
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(v2)
			if !slices.Equal(row.Groups, []string{"finance"}) || row.Task != "audit" ||
				row.Hash != hex.EncodeToString(sum[:]) || row.Size != int64(len(v2)) || row.CreatedBy != "app" {
				t.Errorf("row after a save and a tag by two daemons: groups=%v task=%q size=%d created_by=%q hash current=%v; want both changes",
					row.Groups, row.Task, row.Size, row.CreatedBy, row.Hash == hex.EncodeToString(sum[:]))
			}
		})
	}
}
