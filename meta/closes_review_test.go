package meta_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/meta"
)

// A close pending when its file is removed is dropped: a file created
// again at that path by another writer is stored with its own writer.
func TestDeferredCloseDroppedByRemove(t *testing.T) {
	f, ix := newFSOpts(t, nil, deferred(longDelay))
	bg := context.Background()
	closeWrite(t, f, as("first"), "/r/x.txt", "old\n")
	if err := f.Remove(bg, "/r/x.txt"); err != nil {
		t.Fatal(err)
	}
	closeWrite(t, f, as("second"), "/r/x.txt", "new\n")
	if err := f.Flush(bg); err != nil {
		t.Fatal(err)
	}
	r, err := ix.File(bg, "/r/x.txt")
	if err != nil || r.CreatedBy != "second" || r.Hash != hashHex("new\n") {
		t.Fatalf("re-created file: row created_by=%q hash ok=%v err=%v; want created_by second (the removed file's writer was first)",
			r.CreatedBy, r.Hash == hashHex("new\n"), err)
	}
}

// A deferred close by A, then a synchronous WriteFile by B (socket, HTTP,
// MCP, shell): A created the file, so A stays its created_by.
func TestDeferredCloseBeforeWriteFile(t *testing.T) {
	f, ix := newFSOpts(t, nil, deferred(longDelay))
	bg := context.Background()
	closeWrite(t, f, as("first"), "/w/x.txt", "one\n")
	write(t, f, as("second"), "/w/x.txt", "two\n")
	if err := f.Flush(bg); err != nil {
		t.Fatal(err)
	}
	r, err := ix.File(bg, "/w/x.txt")
	if err != nil || r.CreatedBy != "first" {
		t.Fatalf("row created_by=%q err=%v; want first (it created the file)", r.CreatedBy, err)
	}
}

// putFailStore fails every Put while fail is set.
type putFailStore struct {
	index.Store
	fail atomic.Bool
}

func (s *putFailStore) Put(ctx context.Context, items ...index.Item) error {
	if s.fail.Load() {
		return errors.New("disk full")
	}
	return s.Store.Put(ctx, items...)
}

// A batch whose commit fails is kept: Flush reports the error, the
// journal keeps the close, and the next start stores it with its writer.
func TestDeferredCloseFailedCommitKept(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, "closes.journal")
	ix, err := sqlite.Open(context.Background(), filepath.Join(dir, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	fs := &putFailStore{Store: ix}
	base := memfs.New()
	f, err := meta.New(base, fs, meta.Options{Logger: quiet, CloseDelay: longDelay, CloseJournal: journal})
	if err != nil {
		t.Fatal(err)
	}
	closeWrite(t, f, as("writer"), "/f/x.txt", "x\n")
	fs.fail.Store(true)
	if err := f.Flush(context.Background()); err == nil {
		t.Error("Flush returned nil though the row could not be stored")
	}
	if f.Unflushed() != 1 {
		t.Errorf("Unflushed() = %d after a failed commit; want 1 (kept for a retry)", f.Unflushed())
	}
	fs.fail.Store(false)
	data, _ := os.ReadFile(journal)
	f.Close()
	g, err := meta.New(base, ix, meta.Options{Logger: quiet, CloseDelay: longDelay, CloseJournal: journal})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if r, err := ix.File(context.Background(), "/f/x.txt"); err != nil || r.CreatedBy != "writer" {
		t.Fatalf("after a failed commit and a restart: row %q err=%v (journal after the failure held %q); want created_by writer kept somewhere",
			r.CreatedBy, err, data)
	}
}

// Under a constant stream the journal is never empty, yet it must hold
// about what is pending, not every close ever made.
func TestCloseJournalBoundedUnderStream(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, "closes.journal")
	f, _ := newFSOpts(t, nil, func(o *meta.Options) { o.CloseDelay = 20 * time.Millisecond; o.CloseJournal = journal })
	ctx := as("stream")
	deadline := time.Now().Add(4 * time.Second)
	n := 0
	maxLines, maxPending := 0, 0
	for time.Now().Before(deadline) {
		closeWrite(t, f, ctx, fmt.Sprintf("/s/%d.txt", n), "x\n")
		n++
		time.Sleep(300 * time.Microsecond) // a paced stream the committer keeps up with
		if n%100 == 0 {
			data, _ := os.ReadFile(journal)
			lines := strings.Count(string(data), "\n")
			maxLines = max(maxLines, lines)
			maxPending = max(maxPending, f.Unflushed())
		}
	}
	t.Logf("%d closes; journal peaked at %d lines, pending peaked at %d", n, maxLines, maxPending)
	if maxLines > 4*max(maxPending, 256) {
		t.Fatalf("journal held %d lines while at most %d closes were pending", maxLines, maxPending)
	}
}

// hookFS runs hook when a handle of a path opened through Open is closed.
type hookFS struct {
	*memfs.FS
	hook atomic.Pointer[func(string)]
}

type hookFile struct {
	fs.File
	name string
	h    *hookFS
}

func (f *hookFile) Read(p []byte) (int, error) { return f.File.Read(p) }

func (f *hookFile) Close() error {
	err := f.File.Close()
	if fn := f.h.hook.Load(); fn != nil {
		(*fn)(f.name)
	}
	return err
}

func (h *hookFS) Open(ctx context.Context, name string) (fs.File, error) {
	file, err := h.FS.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return &hookFile{File: file, name: name, h: h}, nil
}

// The committer reads a closed file (prepareSave) outside f.mu; a
// synchronous WriteFile of that file landing between that read and the
// batch's commit must not end with a row of the older bytes.
func TestDeferredCloseBatchRacesWriteFile(t *testing.T) {
	base := &hookFS{FS: memfs.New()}
	f, ix := newFSOpts(t, base, deferred(longDelay))
	bg := context.Background()
	closeWrite(t, f, as("a"), "/st/x.txt", "old bytes\n")
	var once atomic.Bool
	var wg sync.WaitGroup
	fn := func(name string) {
		// prepareSave closes its handle after reading the old bytes and
		// before commitGroup: a socket/HTTP write lands exactly there.
		if name == "/st/x.txt" && once.CompareAndSwap(false, true) {
			wg.Go(func() { write(t, f, as("b"), "/st/x.txt", "new bytes!\n") })
			time.Sleep(20 * time.Millisecond) // as far as it gets before the commit
		}
	}
	base.hook.Store(&fn)
	f.Flush(bg)
	wg.Wait()
	data, _ := base.ReadFile(bg, "/st/x.txt")
	r, err := ix.File(bg, "/st/x.txt")
	if err != nil || r.Hash != hashHex(string(data)) {
		t.Fatalf("file holds %q but its row's hash is the old bytes' = %v (size %d, err %v)", data, r.Hash == hashHex("old bytes\n"), r.Size, err)
	}
}

// Meta (getxattr, shell tree, MCP stat) of a file with no pending close
// does not wait for the batch the committer is storing.
func TestMetaSkipsUnrelatedBatch(t *testing.T) {
	base := &hookFS{FS: memfs.New()}
	f, _ := newFSOpts(t, base, deferred(20*time.Millisecond))
	bg := context.Background()
	write(t, f, as("a"), "/other/stored.txt", "stored\n") // stored at once
	holdBatch(t, f, base)
	returnsWhileHeld(t, "Meta of a file with nothing pending", func() error {
		_, err := f.Meta(bg, "/other/stored.txt")
		return err
	})
}

// holdBatch closes 200 files under /batch/ and returns once the committer
// is reading one of them for its batch, where it stays until the test
// ends: the batch is in flight, however slow the machine.
func holdBatch(t *testing.T, f *meta.FS, base *hookFS) {
	t.Helper()
	gate, in := make(chan struct{}), make(chan struct{}, 1)
	hold := func(name string) {
		if strings.HasPrefix(name, "/batch/") {
			select {
			case in <- struct{}{}:
			default:
			}
			<-gate
		}
	}
	base.hook.Store(&hold)
	t.Cleanup(func() { close(gate) }) // before the layer closes (cleanups run last first)
	for i := range 200 {
		closeWrite(t, f, as("a"), fmt.Sprintf("/batch/%d.txt", i), "x\n")
	}
	select {
	case <-in:
	case <-time.After(30 * time.Second):
		t.Fatal("the committer did not start its batch")
	}
}

// returnsWhileHeld runs call while the committer's batch is held
// (holdBatch) and fails if it does not return: it waited for the batch.
func returnsWhileHeld(t *testing.T, what string, call func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not return while the committer's batch was in flight: it waits for the batch", what)
	}
}

// A journal line whose close was already stored (a crash under a stream
// leaves some) replayed at the next start changes nothing: the row's
// updated_at stays.
func TestCloseJournalReplayOfStoredClose(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, "closes.journal")
	ix, err := sqlite.Open(context.Background(), filepath.Join(dir, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	base := memfs.New()
	bg := context.Background()
	f, err := meta.New(base, ix, meta.Options{Logger: quiet, CloseDelay: longDelay, CloseJournal: journal})
	if err != nil {
		t.Fatal(err)
	}
	closeWrite(t, f, as("writer"), "/u/x.txt", "x\n")
	f.Flush(bg)
	before, err := ix.File(bg, "/u/x.txt")
	if err != nil {
		t.Fatal(err)
	}
	// Under a stream the journal still holds the stored close's line when
	// the process dies (TestCloseJournalBoundedUnderStream); write it back.
	if err := os.WriteFile(journal, []byte(`"/u/x.txt" "writer"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	g, err := meta.New(base, ix, meta.Options{Logger: quiet, CloseDelay: longDelay, CloseJournal: journal})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	after, _ := ix.File(bg, "/u/x.txt")
	if !after.UpdatedAt.Equal(before.UpdatedAt) {
		t.Fatalf("replaying an already-stored close moved updated_at %v -> %v; the file did not change", before.UpdatedAt, after.UpdatedAt)
	}
}

// A crash after a removal: the journal still names the removed file's
// writer, and the next start must not give it to the file created again
// at that path.
func TestCloseJournalReplayAfterRemove(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, "closes.journal")
	ix, err := sqlite.Open(context.Background(), filepath.Join(dir, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	base := memfs.New()
	dead, err := meta.New(base, ix, meta.Options{Logger: quiet, CloseDelay: time.Hour, CloseJournal: journal})
	if err != nil {
		t.Fatal(err)
	}
	closeWrite(t, dead, as("first"), "/d/x.txt", "old\n")
	closeWrite(t, dead, as("first"), "/d/sub/y.txt", "old\n")
	if err := dead.Remove(context.Background(), "/d/x.txt"); err != nil {
		t.Fatal(err)
	}
	if err := dead.RemoveAll(context.Background(), "/d/sub"); err != nil {
		t.Fatal(err)
	}
	closeWrite(t, dead, as("second"), "/d/x.txt", "new\n")
	closeWrite(t, dead, as("second"), "/d/sub/y.txt", "new\n")
	// The crash: the dead layer is never closed.
	next, err := meta.New(base, ix, meta.Options{Logger: quiet, CloseDelay: time.Hour, CloseJournal: journal})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	for _, p := range []string{"/d/x.txt", "/d/sub/y.txt"} {
		if r, err := ix.File(context.Background(), p); err != nil || r.CreatedBy != "second" || r.Hash != hashHex("new\n") {
			t.Errorf("%s after the restart: row %+v, %v; want created_by second (the removed file's writer was first)", p, r, err)
		}
	}
}

// The committer retries a batch whose commit failed, without anyone
// flushing, once the store works again.
func TestDeferredCloseFailedCommitRetried(t *testing.T) {
	ix, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	fs := &putFailStore{Store: ix}
	fs.fail.Store(true)
	f, err := meta.New(memfs.New(), fs, meta.Options{Logger: quiet, CloseDelay: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	closeWrite(t, f, as("writer"), "/f/x.txt", "x\n")
	time.Sleep(300 * time.Millisecond) // the committer tried and failed
	if f.Unflushed() != 1 {
		t.Fatalf("Unflushed() = %d while the store fails; want 1", f.Unflushed())
	}
	fs.fail.Store(false)
	deadline := time.Now().Add(5 * time.Second)
	for f.Unflushed() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if r, err := ix.File(context.Background(), "/f/x.txt"); err != nil || r.CreatedBy != "writer" {
		t.Fatalf("after the store recovered: row %+v, %v (unflushed %d); want created_by writer", r, err, f.Unflushed())
	}
}

// slowStore makes every Put take a while: a committer slower than the
// writers.
type slowStore struct{ index.Store }

func (s slowStore) Put(ctx context.Context, items ...index.Item) error {
	time.Sleep(50 * time.Millisecond)
	return s.Store.Put(ctx, items...)
}

// The pending closes are bounded: beyond the bound a close stores its row
// itself, and every file still ends with its writer.
func TestDeferredClosesBounded(t *testing.T) {
	ix, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	f, err := meta.New(memfs.New(), slowStore{ix}, meta.Options{Logger: quiet, CloseDelay: longDelay})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const files = 3000
	peak := 0
	for i := range files {
		closeWrite(t, f, as(fmt.Sprintf("app%d", i%3)), fmt.Sprintf("/b/f%04d.txt", i), fmt.Sprintf("file %d\n", i))
		peak = max(peak, f.Unflushed())
	}
	// 1024 pending and a batch of 256 in flight.
	if peak > 1024+256 {
		t.Fatalf("%d closes waited for their rows at the peak; want a bound", peak)
	}
	if err := f.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range files {
		p := fmt.Sprintf("/b/f%04d.txt", i)
		if r, err := ix.File(context.Background(), p); err != nil || r.CreatedBy != fmt.Sprintf("app%d", i%3) {
			t.Fatalf("%s: row %+v, %v", p, r, err)
		}
	}
	t.Logf("peak of %d closes waiting", peak)
}

// lenientFS resolves an unclean path as a host directory would
// ("/a//b" and "/a/../b" name files), so that only the layer's own
// checks keep such a path out of the index.
type lenientFS struct{ *memfs.FS }

func (l lenientFS) Open(ctx context.Context, name string) (fs.File, error) {
	return l.FS.Open(ctx, path.Clean(name))
}

func (l lenientFS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	return l.FS.Stat(ctx, path.Clean(name))
}

// A journal line whose path is not clean is skipped, not stored as a row.
func TestCloseJournalSkipsUncleanPaths(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, "closes.journal")
	lines := `"/j/../k.txt" "bad"` + "\n" + `"/j//k.txt" "bad"` + "\n" + `"j/k.txt" "bad"` + "\n" + `"/j/k.txt" "good"` + "\n"
	if err := os.WriteFile(journal, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	base := memfs.New()
	bg := context.Background()
	if err := base.MkdirAll(bg, "/j", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := base.WriteFile(bg, "/j/k.txt", []byte("k\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, ix := newFSOpts(t, lenientFS{base}, func(o *meta.Options) { o.CloseDelay = longDelay; o.CloseJournal = journal })
	var rows []string
	ix.WalkFiles(bg, "/", func(r index.File) error {
		rows = append(rows, r.Path+"="+r.CreatedBy)
		return nil
	})
	if len(rows) != 1 || rows[0] != "/j/k.txt=good" {
		t.Fatalf("rows after the replay: %v; want only /j/k.txt by good", rows)
	}
}

// Closes replayed from the journal whose rows cannot be stored at the
// start stay pending, and the committer stores them once it can.
func TestCloseJournalReplayRetried(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, "closes.journal")
	if err := os.WriteFile(journal, []byte(`"/q/x.txt" "writer"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ix, err := sqlite.Open(context.Background(), filepath.Join(dir, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	base := memfs.New()
	bg := context.Background()
	if err := base.MkdirAll(bg, "/q", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := base.WriteFile(bg, "/q/x.txt", []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := &putFailStore{Store: ix}
	fs.fail.Store(true)
	f, err := meta.New(base, fs, meta.Options{Logger: quiet, CloseDelay: 20 * time.Millisecond, CloseJournal: journal})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Unflushed() != 1 {
		t.Fatalf("Unflushed() = %d after a replay the store refused; want 1", f.Unflushed())
	}
	fs.fail.Store(false)
	deadline := time.Now().Add(5 * time.Second)
	for f.Unflushed() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if r, err := ix.File(bg, "/q/x.txt"); err != nil || r.CreatedBy != "writer" {
		t.Fatalf("after the store recovered: row %+v, %v (unflushed %d); want created_by writer", r, err, f.Unflushed())
	}
}

// Meta of a file whose close is pending, not in the batch the committer
// is storing, stores that close without waiting for the batch.
func TestMetaOfPendingSkipsUnrelatedBatch(t *testing.T) {
	base := &hookFS{FS: memfs.New()}
	f, _ := newFSOpts(t, base, deferred(20*time.Millisecond))
	bg := context.Background()
	holdBatch(t, f, base)
	closeWrite(t, f, as("b"), "/other/fresh.txt", "fresh\n")
	returnsWhileHeld(t, "Meta of a file pending outside the committer's batch", func() error {
		m, err := f.Meta(bg, "/other/fresh.txt")
		if err == nil && (m.CreatedBy != "b" || m.Hash != hashHex("fresh\n")) {
			err = fmt.Errorf("meta %+v; want created_by b and the hash of its bytes", m)
		}
		return err
	})
}
