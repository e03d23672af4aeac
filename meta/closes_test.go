package meta_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/meta"
	"github.com/semfs/semfs/semfstest"
)

// A long delay, so that nothing is committed behind a test's back unless
// a flush asks for it (the committer waits a twentieth of it, 3 s, after
// the last close).
const longDelay = time.Minute

func deferred(d time.Duration) func(*meta.Options) {
	return func(o *meta.Options) { o.CloseDelay = d }
}

// closeWrite creates p (and its directory) through OpenFile, writes data
// and closes it.
func closeWrite(t *testing.T, f *meta.FS, ctx context.Context, p, data string) {
	t.Helper()
	if err := f.MkdirAll(ctx, path.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := f.OpenFile(ctx, p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
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

func noRow(t *testing.T, ix index.Store, p, when string) {
	t.Helper()
	if r, err := ix.File(context.Background(), p); !errors.Is(err, semfs.ErrNotExist) {
		t.Fatalf("%s: %s has a row %+v (err %v)", when, p, r, err)
	}
}

func TestConformanceDeferredCloses(t *testing.T) {
	semfstest.Run(t, func(t *testing.T) semfs.FS {
		f, _ := newFSOpts(t, nil, deferred(meta.DefaultCloseDelay))
		return f
	}, semfstest.Writers(2))
}

// TestDeferredCloseReadYourWrites: a close returns before the file's row
// is stored, yet every surface asked afterwards sees the file with its
// writer as created_by.
func TestDeferredCloseReadYourWrites(t *testing.T) {
	f, ix := newFSOpts(t, nil, deferred(longDelay))
	ctx := as("scribe")
	surfaces := []struct {
		name  string
		check func(p string) error
	}{
		{"Meta", func(p string) error {
			m, err := f.Meta(context.Background(), p)
			if err == nil && (m.CreatedBy != "scribe" || m.Hash == "") {
				err = fmt.Errorf("meta %+v", m)
			}
			return err
		}},
		{"Query", func(p string) error {
			res, err := f.Query(context.Background(), filepath.Base(p), 0)
			if err == nil && (len(res) == 0 || res[0].Path != p || res[0].CreatedBy != "scribe") {
				err = fmt.Errorf("query results %+v", res)
			}
			return err
		}},
		{"Search", func(p string) error {
			var hits []string
			_, err := f.Search(context.Background(), semfs.SearchRequest{Query: "zebracorn" + filepath.Base(p)[:4]}, func(h semfs.SearchHit) error {
				hits = append(hits, h.Path)
				return nil
			})
			if err == nil && (len(hits) == 0 || hits[0] != p) {
				err = fmt.Errorf("search hits %v", hits)
			}
			return err
		}},
		{"SetTags", func(p string) error {
			if err := f.SetTags(context.Background(), p, semfs.Tags{Task: "filing"}); err != nil {
				return err
			}
			m, err := f.Meta(context.Background(), p)
			if err == nil && (m.CreatedBy != "scribe" || m.Task != "filing" || m.Hash == "") {
				err = fmt.Errorf("meta after tagging %+v", m)
			}
			return err
		}},
		{"GrepCandidates", func(p string) error {
			paths, ok, err := f.GrepCandidates(context.Background(), "/notes", "zebracorn"+filepath.Base(p)[:4], semfs.GrepOptions{Fixed: true})
			if err == nil && (!ok || !slices.Contains(paths, p)) {
				err = fmt.Errorf("grep candidates %v (ok %v)", paths, ok)
			}
			return err
		}},
		{"Related", func(p string) error {
			_, err := f.Related(context.Background(), p, 5)
			return err
		}},
	}
	for i, s := range surfaces {
		p := fmt.Sprintf("/notes/n%d%s.txt", i, s.name)
		closeWrite(t, f, ctx, p, fmt.Sprintf("a note about zebracorn%s\n", filepath.Base(p)[:4]))
		noRow(t, ix, p, "right after the close") // deferred, not stored inline
		if got := f.Unflushed(); got != 1 {
			t.Fatalf("Unflushed() = %d after one close; want 1", got)
		}
		if err := s.check(p); err != nil {
			t.Fatalf("%s right after the close of %s: %v", s.name, p, err)
		}
		if got := f.Unflushed(); got != 0 {
			t.Fatalf("Unflushed() = %d after %s; want 0", got, s.name)
		}
	}
}

// countingStore counts the Put calls that store rows with content (the
// saves of writes, not tag updates).
type countingStore struct {
	index.Store
	puts, rows atomic.Int64
}

func (s *countingStore) Put(ctx context.Context, items ...index.Item) error {
	s.puts.Add(1)
	s.rows.Add(int64(len(items)))
	return s.Store.Put(ctx, items...)
}

// TestDeferredClosesBatched: a stream of closes is stored in a few
// transactions, not one per file, each file with its own writer, and
// within the delay without anyone asking.
func TestDeferredClosesBatched(t *testing.T) {
	ix, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	cs := &countingStore{Store: ix}
	const delay = 400 * time.Millisecond
	f, err := meta.New(memfs.New(), cs, meta.Options{Logger: quiet, CloseDelay: delay})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close(); ix.Close() })
	const files = 600
	start := time.Now()
	for i := range files {
		closeWrite(t, f, as(fmt.Sprintf("app%d", i%3)), fmt.Sprintf("/s/f%04d.txt", i), fmt.Sprintf("file %d\n", i))
	}
	streamed := time.Since(start)
	for f.Unflushed() > 0 {
		if time.Since(start) > streamed+10*delay {
			t.Fatalf("%d closes still unstored %v after the stream ended (delay %v)", f.Unflushed(), time.Since(start)-streamed, delay)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if puts := cs.puts.Load(); puts > files/50 {
		t.Errorf("%d closes stored in %d transactions; want batches (at most %d)", files, puts, files/50)
	}
	if rows := cs.rows.Load(); rows != files {
		t.Errorf("%d rows put for %d closes", rows, files)
	}
	for i := range files {
		p := fmt.Sprintf("/s/f%04d.txt", i)
		r, err := ix.File(context.Background(), p)
		if err != nil || r.CreatedBy != fmt.Sprintf("app%d", i%3) || r.Hash != hashHex(fmt.Sprintf("file %d\n", i)) {
			t.Fatalf("%s: row %+v, %v", p, r, err)
		}
	}
	t.Logf("%d closes in %v, stored in %d transactions", files, streamed, cs.puts.Load())
}

// TestDeferredCloseRenameRemove: a file renamed or removed after its close
// and before its row was stored ends with the right row (its bytes and
// writer, under the new path) and no row at the old path; so does a file
// whose directory is renamed, and a closed file renamed over another.
func TestDeferredCloseRenameRemove(t *testing.T) {
	f, ix := newFSOpts(t, nil, deferred(longDelay))
	ctx := as("writer")
	bg := context.Background()

	closeWrite(t, f, ctx, "/r/a.txt", "alpha\n")
	if err := f.Rename(as("mover"), "/r/a.txt", "/r/b.txt"); err != nil {
		t.Fatal(err)
	}
	closeWrite(t, f, ctx, "/dir/x/inner.txt", "inner\n")
	if err := f.Rename(as("mover"), "/dir", "/moved"); err != nil {
		t.Fatal(err)
	}
	write(t, f, as("old"), "/r/target", "old target\n") // stored at once
	closeWrite(t, f, ctx, "/r/.target.tmp", "new target\n")
	if err := f.Rename(as("mover"), "/r/.target.tmp", "/r/target"); err != nil {
		t.Fatal(err)
	}
	closeWrite(t, f, ctx, "/r/gone.txt", "gone\n")
	if err := f.Remove(bg, "/r/gone.txt"); err != nil {
		t.Fatal(err)
	}
	if err := f.Flush(bg); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"/r/b.txt": "alpha\n", "/moved/x/inner.txt": "inner\n", "/r/target": "new target\n"} {
		r, err := ix.File(bg, p)
		if err != nil || r.Hash != hashHex(want) || r.CreatedBy != "writer" {
			t.Errorf("%s: row %+v, %v; want the bytes %q written by writer", p, r, err, want)
		}
	}
	for _, p := range []string{"/r/a.txt", "/dir/x/inner.txt", "/r/.target.tmp", "/r/gone.txt"} {
		noRow(t, ix, p, "after the rename or remove")
	}
}

// TestDeferredCloseRacesRename is TestCloseRacesRename with deferred
// closes: the close of each temp file races the rename over the target.
func TestDeferredCloseRacesRename(t *testing.T) {
	f, ix := newFSOpts(t, nil, deferred(20*time.Millisecond))
	closeRacesRename(t, f, ix)
}

// TestDeferredClosesStoredOnClose: closing the layer stores what is
// pending, and a file closed after the layer was closed is stored by its
// own close.
func TestDeferredClosesStoredOnClose(t *testing.T) {
	f, ix := newFSOpts(t, nil, deferred(longDelay))
	ctx := as("late")
	closeWrite(t, f, ctx, "/p/one.txt", "one\n")
	w, err := f.OpenFile(ctx, "/p/two.txt", os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("two\n")); err != nil {
		t.Fatal(err)
	}
	noRow(t, ix, "/p/one.txt", "before the layer was closed")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if r, err := ix.File(context.Background(), "/p/one.txt"); err != nil || r.CreatedBy != "late" || r.Hash != hashHex("one\n") {
		t.Fatalf("/p/one.txt after the layer's Close: row %+v, %v", r, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if r, err := ix.File(context.Background(), "/p/two.txt"); err != nil || r.CreatedBy != "late" || r.Hash != hashHex("two\n") {
		t.Fatalf("/p/two.txt closed after the layer: row %+v, %v", r, err)
	}
}

// TestDeferredCloseCrash: a process that dies with closes not yet stored
// leaves the index consistent once the next one reconciles: the files
// have rows matching their bytes. What is lost is their created_by (the
// writer was known only to the dead process); this test pins that down.
func TestDeferredCloseCrash(t *testing.T) {
	dir := t.TempDir()
	base := memfs.New()
	ix, err := sqlite.Open(context.Background(), filepath.Join(dir, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	dead, err := meta.New(base, ix, meta.Options{Logger: quiet, CloseDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	closeWrite(t, dead, as("ghost"), "/c/kept.txt", "written just before the crash\n")
	noRow(t, ix, "/c/kept.txt", "before the crash")
	// The crash: the dead layer is never closed (its committer would
	// wait an hour), and the next one starts on the same store and base.
	next, err := meta.New(base, ix, meta.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if _, err := next.Reconcile(context.Background(), meta.ReconcileOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := ix.File(context.Background(), "/c/kept.txt")
	if err != nil || r.Hash != hashHex("written just before the crash\n") || r.State != index.StateIndexed {
		t.Fatalf("after reconciling: row %+v, %v; want the file's bytes indexed", r, err)
	}
	if r.CreatedBy != "" {
		t.Fatalf("created_by %q: the dead process's writer cannot be known; a change that keeps it must update this test", r.CreatedBy)
	}
}

// TestDeferredCloseCrashJournal: with a close journal, the next process
// stores the closes a killed one left unstored, with their writers as
// created_by — also for a file renamed after its close — and skips those
// of files gone since.
func TestDeferredCloseCrashJournal(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, "closes.journal")
	base := memfs.New()
	ix, err := sqlite.Open(context.Background(), filepath.Join(dir, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	dead, err := meta.New(base, ix, meta.Options{Logger: quiet, CloseDelay: time.Hour, CloseJournal: journal})
	if err != nil {
		t.Fatal(err)
	}
	closeWrite(t, dead, as("ghost"), "/c/kept.txt", "kept\n")
	closeWrite(t, dead, as("mover"), "/c/before.txt", "moved\n")
	if err := dead.Rename(context.Background(), "/c/before.txt", "/c/after.txt"); err != nil {
		t.Fatal(err)
	}
	closeWrite(t, dead, as("ghost"), "/c/removed.txt", "removed\n")
	if err := base.Remove(context.Background(), "/c/removed.txt"); err != nil { // behind the layer, as a crash's loss would
		t.Fatal(err)
	}
	closeWrite(t, dead, as("ghost"), "/c/late.txt", "late\n")
	noRow(t, ix, "/c/late.txt", "before the crash")
	// The crash: the dead layer is never closed; the next one opens the
	// same journal, store and base.
	next, err := meta.New(base, ix, meta.Options{Logger: quiet, CloseDelay: time.Hour, CloseJournal: journal})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	for p, want := range map[string]string{"/c/kept.txt": "kept\n", "/c/late.txt": "late\n"} {
		if r, err := ix.File(context.Background(), p); err != nil || r.CreatedBy != "ghost" || r.Hash != hashHex(want) {
			t.Errorf("%s after the restart: row %+v, %v; want created_by ghost and its bytes", p, r, err)
		}
	}
	// The rename stored /c/before.txt's row before moving it.
	if r, err := ix.File(context.Background(), "/c/after.txt"); err != nil || r.CreatedBy != "mover" || r.Hash != hashHex("moved\n") {
		t.Errorf("/c/after.txt after the restart: row %+v, %v", r, err)
	}
	noRow(t, ix, "/c/removed.txt", "after the restart")
	noRow(t, ix, "/c/before.txt", "after the restart")
	if data, err := os.ReadFile(journal); err != nil || len(data) != 0 {
		t.Errorf("journal after the restart holds %q (%v); want it emptied", data, err)
	}
	// The next process's own deferred closes are journalled again.
	closeWrite(t, next, as("third"), "/c/new.txt", "new\n")
	if data, err := os.ReadFile(journal); err != nil || len(data) == 0 {
		t.Errorf("journal after a deferred close holds %q (%v)", data, err)
	}
	if err := next.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(journal); err != nil || len(data) != 0 {
		t.Errorf("journal after a flush holds %q (%v); want it emptied", data, err)
	}
}
