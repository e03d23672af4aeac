package indextest

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
	"github.com/semfs/semfs/meta"
)

// NoLostUpdate runs two processes' meta layers over one tree and one
// index (two daemons, or a daemon and `semfs tag` beside it). While one
// builds a file's row from the stored one, the other changes that row:
// the save must not write back the groups the other set (that exposed a
// file it restricted), and the tag must not write back the bytes' fields
// of the other's save. fresh makes a new, empty shared index for a case
// and returns what opens a handle of its own on it (closed when the case
// ends).
func NoLostUpdate(t *testing.T, fresh func(t *testing.T) (open func() index.Store)) {
	for _, gatedSaves := range []bool{true, false} {
		name := map[bool]string{true: "save-reads-then-other-tags", false: "tag-reads-then-other-saves"}[gatedSaves]
		t.Run(name, func(t *testing.T) {
			open := fresh(t)
			ctx := context.Background()
			dir := t.TempDir()
			layer := func(store index.Store) *meta.FS { return Layer(t, dir, store) }
			g := Gate(open())
			gated, other := layer(g), layer(open())
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
			// The other process's change, while the gated one holds the
			// row it read. Where the gated write holds the row or the
			// store's write lock, the change waits for it: let it run
			// 300 ms, then go on.
			done := make(chan error, 1)
			hook := func() {
				go func() { done <- second(other) }()
				select {
				case err := <-done:
					done <- err
				case <-time.After(300 * time.Millisecond):
				}
			}
			g.Hook(hook)
			if err := first(gated); err != nil {
				t.Fatal(err)
			}
			if g.Pending() {
				t.Fatal("the gated layer did not read the row")
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			row, err := open().File(ctx, "/x.md")
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(v2)
			if !slices.Equal(row.Groups, []string{"finance"}) || row.Task != "audit" ||
				row.Hash != hex.EncodeToString(sum[:]) || row.Size != int64(len(v2)) || row.CreatedBy != "app" {
				t.Errorf("row after a save and a tag by two processes: groups=%v task=%q size=%d created_by=%q hash current=%v; want both changes",
					row.Groups, row.Task, row.Size, row.CreatedBy, row.Hash == hex.EncodeToString(sum[:]))
			}
		})
	}
}

// Layer opens a meta layer, as one process's, over the host directory
// dir and store, closed when the test ends; it polls no peers.
func Layer(t *testing.T, dir string, store index.Store) *meta.FS {
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

// Gate wraps store in a GatedRows.
func Gate(store index.Store) *GatedRows { return &GatedRows{Store: store} }

// GatedRows runs a hook once, after the rows of a read-modify-write were
// read and before they are written: after File or Files (a read outside
// the write), or inside Update's build (a read in the write's
// transaction) when the store is an index.UpdatingStore.
type GatedRows struct {
	index.Store
	hook atomic.Pointer[func()]
}

// Hook sets the hook the next read runs.
func (g *GatedRows) Hook(h func()) { g.hook.Store(&h) }

// Pending reports whether the hook is set and no read has run it yet.
func (g *GatedRows) Pending() bool { return g.hook.Load() != nil }

func (g *GatedRows) run() {
	if h := g.hook.Swap(nil); h != nil {
		(*h)()
	}
}

func (g *GatedRows) File(ctx context.Context, p string) (index.File, error) {
	row, err := g.Store.File(ctx, p)
	g.run()
	return row, err
}

func (g *GatedRows) Files(ctx context.Context, paths []string) (map[string]index.File, error) {
	rows, err := g.Store.Files(ctx, paths)
	g.run()
	return rows, err
}

func (g *GatedRows) Update(ctx context.Context, paths []string, build func(map[string]index.File) ([]index.Item, error)) error {
	u, ok := g.Store.(index.UpdatingStore)
	if !ok { // what meta does over such a store
		stored, err := g.Files(ctx, paths)
		if err != nil {
			return err
		}
		items, err := build(stored)
		if err != nil || len(items) == 0 {
			return err
		}
		return g.Put(ctx, items...)
	}
	return u.Update(ctx, paths, func(stored map[string]index.File) ([]index.Item, error) {
		g.run()
		return build(stored)
	})
}

var _ index.PreparingStore = (*GatedRows)(nil)

// PrepareUpdate runs the hook inside build, as Update does; over a store
// that does not prepare its updates, the update is Update.
func (g *GatedRows) PrepareUpdate(items []index.Item) func(context.Context, []string, func(map[string]index.File) ([]index.Item, error)) error {
	p, ok := g.Store.(index.PreparingStore)
	if !ok {
		return g.Update
	}
	update := p.PrepareUpdate(items)
	return func(ctx context.Context, paths []string, build func(map[string]index.File) ([]index.Item, error)) error {
		return update(ctx, paths, func(stored map[string]index.File) ([]index.Item, error) {
			g.run()
			return build(stored)
		})
	}
}
