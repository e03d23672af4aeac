package meta_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/meta"
)

// gatedRows runs hook once, after the rows of a read-modify-write were
// read and before they are written: after File or Files (a read outside
// the write), or inside Update's build (a read in the write's
// transaction) when the store is an index.UpdatingStore.
type gatedRows struct {
	index.Store
	hook atomic.Pointer[func()]
}

func (g *gatedRows) run() {
	if h := g.hook.Swap(nil); h != nil {
		(*h)()
	}
}

func (g *gatedRows) File(ctx context.Context, p string) (index.File, error) {
	row, err := g.Store.File(ctx, p)
	g.run()
	return row, err
}

func (g *gatedRows) Files(ctx context.Context, paths []string) (map[string]index.File, error) {
	rows, err := g.Store.Files(ctx, paths)
	g.run()
	return rows, err
}

func (g *gatedRows) Update(ctx context.Context, paths []string, build func(map[string]index.File) ([]index.Item, error)) error {
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

// Two processes' meta layers over one SQLite file and one tree (a daemon
// and `semfs tag` beside it). While one builds a file's row from the
// stored one, the other changes that row: the save must not write back
// the groups the other process set (that exposed a file it restricted),
// and the tag must not write back the bytes' fields of the other's save.
func TestNoLostUpdateBetweenProcesses(t *testing.T) {
	for _, gatedSaves := range []bool{true, false} {
		name := map[bool]string{true: "save-reads-then-other-tags", false: "tag-reads-then-other-saves"}[gatedSaves]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			data, db := filepath.Join(dir, "data"), filepath.Join(dir, "index.db")
			var g *gatedRows
			gated, closeGated := openLayer(t, hostDir(t, data), db, func(ix *sqlite.Index) index.Store {
				g = &gatedRows{Store: ix}
				return g
			}, meta.Options{PeerPoll: -1})
			defer closeGated()
			other, closeOther := openLayer(t, hostDir(t, data), db, nil, meta.Options{PeerPoll: -1})
			defer closeOther()
			if err := gated.WriteFile(as("app"), "/x.md", []byte("v1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			v2 := []byte("v2, longer\n")
			save := func(m *meta.FS) error { return m.WriteFile(as("app"), "/x.md", v2, 0o644) }
			tag := func(m *meta.FS) error {
				return m.SetTags(ctx, "/x.md", semfs.Tags{Task: "audit", Groups: []string{"finance"}})
			}
			first, second := save, tag
			if !gatedSaves {
				first, second = tag, save
			}
			// Where the gated write holds the store's write lock, the
			// other's change waits for it: let it run 300 ms, then go on.
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
			row, err := other.Meta(ctx, "/x.md")
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
