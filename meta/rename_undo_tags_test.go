package meta_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/meta"
)

// taggedThenFailingRenames fails a Rename of the store when armed, after
// another writer of the index (a CLI `semfs tag` beside the daemon, say)
// set a task on the source's row — between the rename's keepRestriction
// and its undo.
type taggedThenFailingRenames struct {
	*sqlite.Index
	armed *atomic.Bool
}

func (s taggedThenFailingRenames) Rename(ctx context.Context, o, n string) error {
	if !s.armed.Load() {
		return s.Index.Rename(ctx, o, n)
	}
	err := s.Index.Update(ctx, []string{o}, func(stored map[string]index.File) ([]index.Item, error) {
		r := stored[o]
		r.Tags = r.Tags.Clone()
		r.Task = "set by another writer"
		return []index.Item{{File: r, TagText: index.TagText(r.Meta)}}, nil
	})
	if err != nil {
		return err
	}
	return errors.New("database is locked (test)")
}

// TestFailedRenameUndoKeepsOthersTags: a save by rename over a restricted
// file gives the source's row the target's groups before the store
// records the move; when the store then fails and the rename is undone,
// the source gets its own restriction back and keeps a tag another writer
// set on it meanwhile (the undo used to write back the whole row as it was
// before the rename).
func TestFailedRenameUndoKeepsOthersTags(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var armed atomic.Bool
	m, closeM := openLayer(t, hostDir(t, filepath.Join(dir, "data")), filepath.Join(dir, "index.db"),
		func(ix *sqlite.Index) index.Store { return taggedThenFailingRenames{ix, &armed} }, meta.Options{})
	defer closeM()
	financeFile(t, m)
	if err := m.WriteFile(as("app"), "/draft.txt", []byte("new numbers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	if err := m.Rename(ctx, "/draft.txt", "/q3.txt"); err == nil {
		t.Fatal("rename the store could not record: no error")
	}
	armed.Store(false)
	r, err := m.Stat(ctx, "/draft.txt")
	if err != nil {
		t.Fatalf("/draft.txt after the undone rename: %v", err)
	}
	tags, err := m.Meta(ctx, "/draft.txt")
	if err != nil {
		t.Fatal(err)
	}
	if tags.Task != "set by another writer" {
		t.Errorf("task of /draft.txt after the undo: %q, want the other writer's (the undo wrote an older row back)", tags.Task)
	}
	if len(tags.Groups) != 0 {
		t.Errorf("groups of /draft.txt after the undo: %v, want none (its own)", tags.Groups)
	}
	if r.Size() != int64(len("new numbers\n")) {
		t.Errorf("/draft.txt size %d after the undo", r.Size())
	}
	if b, err := semfs.ReadFile(ctx, m, "/draft.txt"); err != nil || string(b) != "new numbers\n" {
		t.Errorf("/draft.txt after the undone rename: %q, %v", b, err)
	}
}
