package meta_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/meta"
)

// TestFailedStoreRenameIsUndone: a rename the store cannot record is
// undone and fails, so that the file and its restriction stay together
// (before, the file moved, the restriction moved in memory only, and a
// restart loaded it from the store at the old path: the moved file was
// public). A retry once the store works moves both.
func TestFailedStoreRenameIsUndone(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	host := hostDir(t, filepath.Join(dir, "data"))
	db := filepath.Join(dir, "index.db")
	open := func(fail *atomic.Bool) (*meta.FS, func()) {
		return openLayer(t, host, db, flaky(fail), meta.Options{})
	}
	var fail atomic.Bool
	m, closeM := open(&fail)
	financeFile(t, m)
	fail.Store(true)
	err := m.Rename(ctx, "/q3.txt", "/q4.txt")
	if err == nil || !strings.Contains(err.Error(), "undone") || !strings.Contains(err.Error(), "retry") {
		t.Fatalf("rename the store could not record: %v (want an error saying it was undone)", err)
	}
	finance := semfs.WithPrincipal(ctx, semfs.Principal{ID: "fay", Groups: []string{"finance"}})
	check := func(when string, m *meta.FS) {
		t.Helper()
		acc := access.New(m, access.Policy{})
		if b, err := acc.ReadFile(finance, "/q3.txt"); err != nil || string(b) != "zanzibar revenue numbers\n" {
			t.Errorf("%s: finance reads /q3.txt: %q, %v", when, b, err)
		}
		if _, err := m.Stat(ctx, "/q4.txt"); !errors.Is(err, semfs.ErrNotExist) {
			t.Errorf("%s: /q4.txt: %v (want not-exist: the rename was undone)", when, err)
		}
		for _, p := range []string{"/q3.txt", "/q4.txt"} {
			if b, err := acc.ReadFile(bob, p); err == nil {
				t.Errorf("%s: bob reads %s: %q", when, p, b)
			}
		}
	}
	check("after the failed rename", m)
	closeM()
	var works atomic.Bool
	m, closeM = open(&works)
	defer func() { closeM() }()
	check("after a restart", m)
	if err := m.Rename(ctx, "/q3.txt", "/q4.txt"); err != nil {
		t.Fatalf("retry: %v", err)
	}
	closeM()
	m, closeM = open(&works)
	acc := access.New(m, access.Policy{})
	if b, err := acc.ReadFile(bob, "/q4.txt"); err == nil {
		t.Errorf("after the retried rename and a restart bob reads /q4.txt: %q", b)
	}
	if b, err := acc.ReadFile(finance, "/q4.txt"); err != nil || string(b) != "zanzibar revenue numbers\n" {
		t.Errorf("finance reads /q4.txt: %q, %v", b, err)
	}
}

// stuckRenames is a host tree whose renames from a path fail once told
// to, as the undo of a rename may.
type stuckRenames struct {
	*hostfs.FS
	from *atomic.Value // string
}

func (s stuckRenames) Rename(ctx context.Context, o, n string) error {
	if p, _ := s.from.Load().(string); p == o {
		return semfs.PathErr("rename", o, semfs.ErrPermission, "refused by the test")
	}
	return s.FS.Rename(ctx, o, n)
}

// TestFailedStoreRenameNotUndoneKeepsBothRestricted: when neither the
// store nor the undo works, the file at the new path stays hidden (in
// this process) and the error says where its tags are.
func TestFailedStoreRenameNotUndoneKeepsBothRestricted(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var from atomic.Value
	from.Store("")
	host := stuckRenames{hostDir(t, filepath.Join(dir, "data")), &from}
	var fail atomic.Bool
	m, closeM := openLayer(t, host, filepath.Join(dir, "index.db"), flaky(&fail), meta.Options{})
	defer closeM()
	financeFile(t, m)
	fail.Store(true)
	from.Store("/q4.txt")
	err := m.Rename(ctx, "/q3.txt", "/q4.txt")
	if err == nil || !strings.Contains(err.Error(), "moving it back failed") {
		t.Fatalf("rename neither recorded nor undone: %v", err)
	}
	if _, err := m.Stat(ctx, "/q4.txt"); err != nil {
		t.Fatalf("the test needs the file left at /q4.txt: %v", err)
	}
	acc := access.New(m, access.Policy{})
	if b, err := acc.ReadFile(bob, "/q4.txt"); err == nil {
		t.Errorf("bob reads the moved finance-only file: %q", b)
	}
	if h := searchAs(t, acc, bob, "zanzibar"); len(h) != 0 {
		t.Errorf("bob finds the finance-only file: %v", h)
	}
}

// TestFailedStoreRenameOverRestrictedKeepsIt: a rename over a restricted
// file that the store cannot record leaves the destination's restriction
// as it was once undone.
func TestFailedStoreRenameOverRestrictedKeepsIt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	host := hostDir(t, filepath.Join(dir, "data"))
	var fail atomic.Bool
	m, closeM := openLayer(t, host, filepath.Join(dir, "index.db"), flaky(&fail), meta.Options{})
	defer closeM()
	financeFile(t, m)
	if err := m.WriteFile(as("app"), "/pub.txt", []byte("public\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	if err := m.Rename(ctx, "/pub.txt", "/q3.txt"); err == nil {
		t.Fatal("rename over /q3.txt the store could not record: no error")
	}
	fail.Store(false)
	// The replaced file is gone; a file written at /q3.txt again still
	// finds the row (and restriction) the store kept there.
	if err := m.WriteFile(as("app"), "/q3.txt", []byte("zanzibar again\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	acc := access.New(m, access.Policy{})
	if b, err := acc.ReadFile(bob, "/q3.txt"); err == nil {
		t.Errorf("bob reads /q3.txt, restricted in the store: %q", b)
	}
	if b, err := acc.ReadFile(bob, "/pub.txt"); err != nil || string(b) != "public\n" {
		t.Errorf("bob reads /pub.txt, moved back: %q, %v", b, err)
	}
}

// TestFailedStoreRenameUndoneWithPendingClose: a close waiting for its row
// (CloseDelay) when a rename fails in the store follows the file back:
// its row is stored at the old path.
func TestFailedStoreRenameUndoneWithPendingClose(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	host := hostDir(t, filepath.Join(dir, "data"))
	var fail atomic.Bool
	m, closeM := openLayer(t, host, filepath.Join(dir, "index.db"), flaky(&fail), meta.Options{CloseDelay: time.Hour})
	defer closeM()
	financeFile(t, m)
	w, err := m.OpenFile(as("app"), "/q3.txt", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("more\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	if err := m.Rename(ctx, "/q3.txt", "/q4.txt"); err == nil {
		t.Fatal("rename the store could not record: no error")
	}
	fail.Store(false)
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := m.Store().File(ctx, "/q3.txt")
	if err != nil || r.Size != int64(len("zanzibar revenue numbers\nmore\n")) || len(r.Groups) != 1 {
		t.Errorf("row of /q3.txt after the undone rename: %+v, %v", r, err)
	}
	if _, err := m.Store().File(ctx, "/q4.txt"); !errors.Is(err, semfs.ErrNotExist) {
		t.Errorf("row at /q4.txt after the undone rename: %v", err)
	}
	if b, err := access.New(m, access.Policy{}).ReadFile(bob, "/q3.txt"); err == nil {
		t.Errorf("bob reads /q3.txt: %q", b)
	}
}

// TestRenameOverRestrictedKeepsRestriction: a file saved the way editors
// and agents save (a temporary file renamed over it) keeps the replaced
// file's groups when the temporary file has none (before, the
// destination's row, groups included, was replaced: the save made the
// file public); a source with groups of its own keeps them. Also after a
// restart, and with closes deferred.
func TestRenameOverRestrictedKeepsRestriction(t *testing.T) {
	for _, delay := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprint("delay=", delay), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			host := hostDir(t, filepath.Join(dir, "data"))
			db := filepath.Join(dir, "index.db")
			open := func() (*meta.FS, func()) {
				return openLayer(t, host, db, nil, meta.Options{CloseDelay: delay})
			}
			m, closeM := open()
			ann := as("ann")
			write := func(p, data string) {
				t.Helper()
				w, err := m.OpenFile(ann, p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.Write([]byte(data)); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			}
			write("/q3.txt", "v1\n")
			if err := m.SetTags(ctx, "/q3.txt", semfs.Tags{Task: "quarter", Groups: []string{"finance"}}); err != nil {
				t.Fatal(err)
			}
			write("/q4.txt", "v1\n")
			if err := m.SetTags(ctx, "/q4.txt", semfs.Tags{Groups: []string{"finance"}}); err != nil {
				t.Fatal(err)
			}
			// The atomic save of /q3.txt: the temporary file has no tags.
			write("/.q3.txt.swp", "v2 zanzibar\n")
			if err := m.Rename(ann, "/.q3.txt.swp", "/q3.txt"); err != nil {
				t.Fatal(err)
			}
			// A source with groups of its own keeps them.
			write("/hr.txt", "salaries\n")
			if err := m.SetTags(ctx, "/hr.txt", semfs.Tags{Groups: []string{"hr"}}); err != nil {
				t.Fatal(err)
			}
			if err := m.Rename(ann, "/hr.txt", "/q4.txt"); err != nil {
				t.Fatal(err)
			}
			fin := semfs.WithPrincipal(ctx, semfs.Principal{ID: "fay", Groups: []string{"finance"}})
			hr := semfs.WithPrincipal(ctx, semfs.Principal{ID: "hal", Groups: []string{"hr"}})
			check := func(when string, m *meta.FS) {
				t.Helper()
				acc := access.New(m, access.Policy{})
				if b, err := acc.ReadFile(bob, "/q3.txt"); err == nil {
					t.Errorf("%s: bob reads /q3.txt after its atomic save: %q", when, b)
				}
				if h := searchAs(t, acc, bob, "zanzibar"); len(h) != 0 {
					t.Errorf("%s: bob finds the saved file: %v", when, h)
				}
				if b, err := acc.ReadFile(fin, "/q3.txt"); err != nil || string(b) != "v2 zanzibar\n" {
					t.Errorf("%s: finance reads /q3.txt: %q, %v", when, b, err)
				}
				r, err := m.Meta(ctx, "/q3.txt")
				if err != nil || len(r.Groups) != 1 || r.Groups[0] != "finance" || r.Public || r.Task != "" || r.CreatedBy != "ann" {
					t.Errorf("%s: meta of /q3.txt: %+v, %v (want the save's row with finance's groups)", when, r, err)
				}
				if b, err := acc.ReadFile(fin, "/q4.txt"); err == nil {
					t.Errorf("%s: finance reads /q4.txt, replaced by hr's file: %q", when, b)
				}
				if b, err := acc.ReadFile(hr, "/q4.txt"); err != nil || string(b) != "salaries\n" {
					t.Errorf("%s: hr reads /q4.txt: %q, %v", when, b, err)
				}
			}
			check("after the saves", m)
			closeM()
			m, closeM = open()
			defer func() { closeM() }()
			check("after a restart", m)
		})
	}
}

// TestRenameOverPublicTaggedFileStaysPublic: a destination with groups
// and the public flag keeps both (the file stays public).
func TestRenameOverPublicTaggedFileStaysPublic(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	host := hostDir(t, filepath.Join(dir, "data"))
	m, closeM := openLayer(t, host, filepath.Join(dir, "index.db"), nil, meta.Options{})
	defer closeM()
	if err := m.WriteFile(as("ann"), "/a.txt", []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.SetTags(ctx, "/a.txt", semfs.Tags{Groups: []string{"finance"}, Public: true}); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteFile(as("ann"), "/a.tmp", []byte("v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.Rename(ctx, "/a.tmp", "/a.txt"); err != nil {
		t.Fatal(err)
	}
	if r, err := m.Meta(ctx, "/a.txt"); err != nil || !r.Public || len(r.Groups) != 1 {
		t.Errorf("meta of /a.txt: %+v, %v", r, err)
	}
	if b, err := access.New(m, access.Policy{}).ReadFile(bob, "/a.txt"); err != nil || string(b) != "v2\n" {
		t.Errorf("bob reads the public /a.txt: %q, %v", b, err)
	}
}

// TestRenameUnindexedOverRestricted: a source the layer has no row for
// (written behind it) renamed over a restricted file gets a row with the
// replaced file's groups, its bytes indexed, the renamer as creator; a
// rename the store then fails to record leaves the source's row as it was.
func TestRenameUnindexedOverRestricted(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	host := hostDir(t, filepath.Join(dir, "data"))
	var fail atomic.Bool
	m, closeM := openLayer(t, host, filepath.Join(dir, "index.db"), flaky(&fail), meta.Options{})
	defer closeM()
	financeFile(t, m)
	if err := host.WriteFile(ctx, "/.q3.swp", []byte("v2 zanzibar\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.Rename(as("ann"), "/.q3.swp", "/q3.txt"); err != nil {
		t.Fatal(err)
	}
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := m.Store().File(ctx, "/q3.txt")
	if err != nil || len(r.Groups) != 1 || r.Groups[0] != "finance" || r.CreatedBy != "ann" || r.Size != int64(len("v2 zanzibar\n")) {
		t.Errorf("row of /q3.txt: %+v, %v", r, err)
	}
	acc := access.New(m, access.Policy{})
	if b, err := acc.ReadFile(bob, "/q3.txt"); err == nil {
		t.Errorf("bob reads /q3.txt: %q", b)
	}

	// The store keeps the groups put on the source if it cannot move it.
	if err := m.WriteFile(as("ann"), "/.q3.swp", []byte("v3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	if err := m.Rename(as("ann"), "/.q3.swp", "/q3.txt"); err == nil {
		t.Fatal("rename the store could not record: no error")
	}
	fail.Store(false)
	if r, err := m.Store().File(ctx, "/.q3.swp"); err != nil || len(r.Groups) != 0 {
		t.Errorf("row of the source after the failed rename: %+v, %v (want its own, without groups)", r, err)
	}
	if b, err := acc.ReadFile(bob, "/.q3.swp"); err != nil || string(b) != "v3\n" {
		t.Errorf("bob reads the source after the failed rename: %q, %v", b, err)
	}
}

// TestFailedStoreDirRenameKeepsRestrictionsBelow: a directory rename the
// store cannot record is undone, and while it is not, both places keep
// the restrictions of the files below.
func TestFailedStoreDirRenameKeepsRestrictionsBelow(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var from atomic.Value
	from.Store("")
	host := stuckRenames{hostDir(t, filepath.Join(dir, "data")), &from}
	var fail atomic.Bool
	m, closeM := openLayer(t, host, filepath.Join(dir, "index.db"), flaky(&fail), meta.Options{})
	defer closeM()
	for _, p := range []string{"/fin/q3.txt", "/fin/pub.txt", "/fin/deep/q4.txt"} {
		if err := m.WriteFile(as("app"), p, []byte("zanzibar "+p+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"/fin/q3.txt", "/fin/deep/q4.txt"} {
		if err := m.SetTags(ctx, p, semfs.Tags{Groups: []string{"finance"}}); err != nil {
			t.Fatal(err)
		}
	}
	acc := access.New(m, access.Policy{})
	hiddenFromBob := func(when string, paths ...string) {
		t.Helper()
		for _, p := range paths {
			if b, err := acc.ReadFile(bob, p); err == nil {
				t.Errorf("%s: bob reads %s: %q", when, p, b)
			}
		}
	}
	fail.Store(true)
	if err := m.Rename(ctx, "/fin", "/fin2"); err == nil {
		t.Fatal("directory rename the store could not record: no error")
	}
	if _, err := m.Stat(ctx, "/fin2"); !errors.Is(err, semfs.ErrNotExist) {
		t.Errorf("/fin2 after the undone rename: %v", err)
	}
	hiddenFromBob("undone", "/fin/q3.txt", "/fin/deep/q4.txt")
	if b, err := acc.ReadFile(bob, "/fin/pub.txt"); err != nil {
		t.Errorf("bob reads /fin/pub.txt: %q, %v", b, err)
	}
	from.Store("/fin2")
	if err := m.Rename(ctx, "/fin", "/fin2"); err == nil {
		t.Fatal("directory rename neither recorded nor undone: no error")
	}
	hiddenFromBob("not undone", "/fin2/q3.txt", "/fin2/deep/q4.txt")
	if h := searchAs(t, acc, bob, "zanzibar"); len(h) != 1 || h[0] != "/fin/pub.txt" {
		t.Errorf("bob's hits: %v (want only the public file's, under its stored path)", h)
	}
}
