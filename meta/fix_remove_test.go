package meta_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/meta"
)

// A file written at the path of a file whose row the store failed to
// remove starts a row of its own: it does not take the removed file's
// groups (which hid it from its writer) nor its created_by, before or
// after a restart (review 6, R4).
func TestRecreateAfterFailedRemoveOwnRow(t *testing.T) {
	for _, closeDelay := range []bool{false, true} {
		t.Run(map[bool]string{false: "write", true: "deferred-close"}[closeDelay], func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			host := hostDir(t, filepath.Join(dir, "data"))
			db := filepath.Join(dir, "index.db")
			var fail atomic.Bool
			opts := meta.Options{}
			if closeDelay {
				opts.CloseDelay = meta.DefaultCloseDelay
			}
			m, closeAll := openLayer(t, host, db, flaky(&fail), opts)
			financeFile(t, m)
			fail.Store(true)
			if err := m.Remove(ctx, "/q3.txt"); err != nil {
				t.Fatal(err)
			}
			fail.Store(false)
			acc := access.New(m, access.Policy{})
			if closeDelay {
				h, err := acc.OpenFile(bob, "/q3.txt", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := h.Write([]byte("bob's own\n")); err != nil {
					t.Fatal(err)
				}
				if err := h.Close(); err != nil {
					t.Fatal(err)
				}
			} else if err := acc.WriteFile(bob, "/q3.txt", []byte("bob's own\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := m.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if b, err := acc.ReadFile(bob, "/q3.txt"); err != nil || string(b) != "bob's own\n" {
				t.Errorf("bob reads the file he wrote at a free name: %q, %v", b, err)
			}
			row, err := m.Meta(ctx, "/q3.txt")
			if err != nil {
				t.Fatal(err)
			}
			if row.CreatedBy != "bob" || len(row.Groups) != 0 || row.Public {
				t.Errorf("row of bob's new file: created_by=%q groups=%v public=%v, want bob and no groups", row.CreatedBy, row.Groups, row.Public)
			}
			closeAll()

			m, closeAll = openLayer(t, host, db, nil, meta.Options{})
			defer closeAll()
			acc = access.New(m, access.Policy{})
			if b, err := acc.ReadFile(bob, "/q3.txt"); err != nil || string(b) != "bob's own\n" {
				t.Errorf("after a restart bob reads his file: %q, %v", b, err)
			}
		})
	}
}

// A directory whose rows the store failed to remove: a file renamed to a
// removed file's path there keeps its own tags, a file written there then
// does not remove the renamed file's row, and a tag set on a new file
// there is the only tag it has.
func TestFailedRemoveAllThenRenameAndTag(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	host := hostDir(t, filepath.Join(dir, "data"))
	var fail atomic.Bool
	m, closeAll := openLayer(t, host, filepath.Join(dir, "index.db"), flaky(&fail), meta.Options{})
	defer closeAll()
	for _, p := range []string{"/d/a.txt", "/d/b.txt"} {
		if err := m.MkdirAll(ctx, "/d", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := m.WriteFile(as("app"), p, []byte("secret "+p+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := m.SetTags(ctx, p, semfs.Tags{Groups: []string{"finance"}, Task: "old"}); err != nil {
			t.Fatal(err)
		}
	}
	fail.Store(true)
	if err := m.RemoveAll(ctx, "/d"); err != nil {
		t.Fatal(err)
	}
	fail.Store(false)

	if err := m.MkdirAll(ctx, "/d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteFile(as("bob"), "/draft.txt", []byte("draft\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.SetTags(ctx, "/draft.txt", semfs.Tags{Task: "mine"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Rename(ctx, "/draft.txt", "/d/a.txt"); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteFile(as("carol"), "/d/c.txt", []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	a, err := m.Meta(ctx, "/d/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if a.CreatedBy != "bob" || a.Task != "mine" || len(a.Groups) != 0 {
		t.Errorf("/d/a.txt after the rename: created_by=%q task=%q groups=%v, want bob, mine, none", a.CreatedBy, a.Task, a.Groups)
	}
	acc := access.New(m, access.Policy{})
	if b, err := acc.ReadFile(bob, "/d/a.txt"); err != nil || string(b) != "draft\n" {
		t.Errorf("bob reads the file he renamed into /d: %q, %v", b, err)
	}
	c, err := m.Meta(ctx, "/d/c.txt")
	if err != nil || c.CreatedBy != "carol" || len(c.Groups) != 0 {
		t.Errorf("/d/c.txt: %+v, %v", c, err)
	}
	// The removed /d/b.txt's row is gone: nothing of it comes back.
	if err := m.WriteFile(as("dave"), "/d/b.txt", []byte("again\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.SetTags(ctx, "/d/b.txt", semfs.Tags{Extra: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	b, err := m.Meta(ctx, "/d/b.txt")
	if err != nil || b.CreatedBy != "dave" || b.Task != "" || len(b.Groups) != 0 || b.Extra["k"] != "v" {
		t.Errorf("/d/b.txt written again and tagged: %+v, %v", b, err)
	}
}

// While the store still cannot remove a removed file's rows, a tag or a
// rename onto its path fails with an error that says so, instead of
// building on the removed file's row.
func TestFailedRemoveStillFailing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	host := hostDir(t, filepath.Join(dir, "data"))
	var fail atomic.Bool
	m, closeAll := openLayer(t, host, filepath.Join(dir, "index.db"), flaky(&fail), meta.Options{})
	defer closeAll()
	financeFile(t, m)
	fail.Store(true)
	if err := m.Remove(ctx, "/q3.txt"); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteFile(as("bob"), "/q3.txt", []byte("bob's\n"), 0o644); err != nil {
		t.Fatal(err) // the bytes are written; the row waits
	}
	err := m.SetTags(ctx, "/q3.txt", semfs.Tags{Task: "x"})
	var pe *fs.PathError
	if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), "removed") {
		t.Errorf("tag while the removed file's row stays: %v, want a path error about the removed file's rows", err)
	}
	row, err := m.Meta(ctx, "/q3.txt")
	if err != nil {
		t.Fatal(err)
	}
	if row.CreatedBy == "bob" || row.Task == "x" {
		t.Errorf("bob's file was stored over the removed file's row: %+v", row)
	}
	// The store recovers: the next write stores bob's row.
	fail.Store(false)
	if err := m.WriteFile(as("bob"), "/q3.txt", []byte("bob's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	row, err = m.Meta(ctx, "/q3.txt")
	if err != nil || row.CreatedBy != "bob" || len(row.Groups) != 0 {
		t.Errorf("after the store recovered: %+v, %v", row, err)
	}
}
