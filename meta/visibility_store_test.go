package meta_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/meta"
)

// flakyStore fails Remove and Rename while fail is set, as a busy or full
// disk makes the store do.
type flakyStore struct {
	index.Store
	fail *atomic.Bool
}

func (s flakyStore) Remove(ctx context.Context, p string, subtree bool) error {
	if s.fail.Load() {
		return errors.New("disk I/O error (test)")
	}
	return s.Store.Remove(ctx, p, subtree)
}

func (s flakyStore) Rename(ctx context.Context, o, n string) error {
	if s.fail.Load() {
		return errors.New("disk I/O error (test)")
	}
	return s.Store.Rename(ctx, o, n)
}

// hostDir opens a host directory tree at dir, creating it.
func hostDir(t *testing.T, dir string) *hostfs.FS {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	h, err := hostfs.Open(dir, hostfs.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// financeFile writes /q3.txt through m and restricts it to finance.
func financeFile(t *testing.T, m *meta.FS) {
	t.Helper()
	if err := m.WriteFile(as("app"), "/q3.txt", []byte("zanzibar revenue numbers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.SetTags(context.Background(), "/q3.txt", semfs.Tags{Groups: []string{"finance"}}); err != nil {
		t.Fatal(err)
	}
	if err := m.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

var bob = semfs.WithPrincipal(context.Background(), semfs.Principal{ID: "bob", Groups: []string{"eng"}})

// searchAs returns the paths of the hits of query that fsys gives ctx.
func searchAs(t *testing.T, fsys semfs.SearchFS, ctx context.Context, query string) []string {
	t.Helper()
	var paths []string
	if _, err := fsys.Search(ctx, semfs.SearchRequest{Query: query}, func(h semfs.SearchHit) error {
		paths = append(paths, h.Path)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return paths
}

// TestFailedStoreRemoveKeepsRowHidden: when the store keeps the row of a
// removed restricted file (its Remove failed), the row's search hit, with
// its snippet, must stay hidden from those outside its groups, in this
// process and after a restart.
func TestFailedStoreRemoveKeepsRowHidden(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	host := hostDir(t, filepath.Join(dir, "data"))
	db := filepath.Join(dir, "index.db")
	var fail atomic.Bool
	m, closeM := openLayer(t, host, db, flaky(&fail), meta.Options{})
	financeFile(t, m)
	acc := access.New(m, access.Policy{})
	if h := searchAs(t, acc, bob, "zanzibar"); len(h) != 0 {
		t.Fatalf("bob finds the finance file before the removal: %v", h)
	}
	finance := semfs.WithPrincipal(ctx, semfs.Principal{ID: "fay", Groups: []string{"finance"}})
	if h := searchAs(t, acc, finance, "zanzibar"); len(h) != 1 {
		t.Fatalf("finance does not find its file: %v", h)
	}
	fail.Store(true)
	if err := m.Remove(ctx, "/q3.txt"); err != nil {
		t.Fatal(err) // the bytes are gone; the index failure is logged
	}
	if _, err := m.Store().File(ctx, "/q3.txt"); err != nil {
		t.Fatalf("the test needs the row kept by the failed removal: %v", err)
	}
	if h := searchAs(t, acc, bob, "zanzibar"); len(h) != 0 {
		t.Errorf("bob finds the removed finance-only file: %v", h)
	}
	if ok, err := m.VisibleTo(ctx, semfs.Principal{ID: "bob", Groups: []string{"eng"}}, "/q3.txt"); err != nil || ok {
		t.Errorf("VisibleTo(bob, removed finance file whose row stayed) = %v, %v; want false", ok, err)
	}
	closeM()

	m2, closeM2 := openLayer(t, host, db, nil, meta.Options{})
	defer closeM2()
	if h := searchAs(t, access.New(m2, access.Policy{}), bob, "zanzibar"); len(h) != 0 {
		t.Errorf("after a restart bob finds the removed finance-only file: %v", h)
	}
}

// TestStoreRemoveDropsRestriction: once the store removed the row, the path
// is no longer restricted, so a file written there again is public.
func TestStoreRemoveDropsRestriction(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	host := hostDir(t, filepath.Join(dir, "data"))
	var fail atomic.Bool
	m, closeM := openLayer(t, host, filepath.Join(dir, "index.db"), flaky(&fail), meta.Options{})
	defer closeM()
	financeFile(t, m)
	if err := m.Remove(ctx, "/q3.txt"); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteFile(as("app"), "/q3.txt", []byte("public now\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := access.New(m, access.Policy{}).ReadFile(bob, "/q3.txt"); err != nil || string(b) != "public now\n" {
		t.Errorf("bob reads the new public file: %q, %v", b, err)
	}
}

// openLayer opens the metadata layer over host with the SQLite index at
// db, its store wrapped by wrap (nil: the index itself), with opts (a
// quiet logger unless opts has one); close closes both, for a test that
// reopens them (a restart) or defers it.
func openLayer(t *testing.T, host semfs.FS, db string, wrap func(*sqlite.Index) index.Store, opts meta.Options) (m *meta.FS, close func()) {
	t.Helper()
	ix, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	var store index.Store = ix
	if wrap != nil {
		store = wrap(ix)
	}
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	m, err = meta.New(host, store, opts)
	if err != nil {
		ix.Close()
		t.Fatal(err)
	}
	return m, func() { m.Close(); ix.Close() }
}

// flaky wraps an index in a flakyStore that fails while fail is set.
func flaky(fail *atomic.Bool) func(*sqlite.Index) index.Store {
	return func(ix *sqlite.Index) index.Store { return flakyStore{ix, fail} }
}
