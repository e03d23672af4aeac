package meta_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
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
	slow := func(name string) {
		if strings.HasPrefix(name, "/batch/") {
			time.Sleep(2 * time.Millisecond) // a slow disk read per file
		}
	}
	for i := range 200 {
		closeWrite(t, f, as("a"), fmt.Sprintf("/batch/%d.txt", i), "x\n")
	}
	base.hook.Store(&slow)
	time.Sleep(30 * time.Millisecond) // the committer is in its batch
	start := time.Now()
	if _, err := f.Meta(bg, "/other/stored.txt"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Fatalf("Meta of a file with nothing pending took %v: it waited for the committer's batch", d)
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
