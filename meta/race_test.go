package meta_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/meta"
)

// holdFS is a memfs whose next read, write or handle close of one path
// (as armed) stops after doing its work until the test lets it go, so that
// a test can put a second save of the path between a save's read of the
// bytes and its commit.
type holdFS struct {
	*memfs.FS
	mu      sync.Mutex
	op, at  string        // the armed operation and path
	held    chan struct{} // closed once the armed operation is held
	release chan struct{} // closed by the test to let it go
}

// arm makes the next op ("read", "write" or "close") of p hold.
func (h *holdFS) arm(op, p string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.op, h.at = op, p
	h.held, h.release = make(chan struct{}), make(chan struct{})
}

func (h *holdFS) hold(op, p string) {
	h.mu.Lock()
	if h.op != op || h.at != p {
		h.mu.Unlock()
		return
	}
	h.op = ""
	held, release := h.held, h.release
	h.mu.Unlock()
	close(held)
	<-release
}

func (h *holdFS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	data, err := h.FS.ReadFile(ctx, name)
	h.hold("read", name)
	return data, err
}

func (h *holdFS) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	err := h.FS.WriteFile(ctx, name, data, perm)
	h.hold("write", name)
	return err
}

func (h *holdFS) Open(ctx context.Context, name string) (fs.File, error) {
	f, err := h.FS.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return holdFile{f, h, name}, nil
}

type holdFile struct {
	fs.File
	h *holdFS
	p string
}

func (f holdFile) Close() error {
	err := f.File.Close()
	f.h.hold("close", f.p)
	return err
}

// waitHeld waits for the armed operation to hold.
func waitHeld(t *testing.T, h *holdFS) {
	t.Helper()
	select {
	case <-h.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the armed operation never ran")
	}
}

func newHoldFS(t *testing.T, closeDelay time.Duration) (*meta.FS, *sqlite.Index, *holdFS) {
	t.Helper()
	h := &holdFS{FS: memfs.New()}
	f, ix := newFSOpts(t, h, func(o *meta.Options) { o.CloseDelay = closeDelay })
	return f, ix, h
}

// overwriteAt opens p for reading and writing, writes s at off, and
// closes it.
func overwriteAt(t *testing.T, f *meta.FS, p, s string, off int64) {
	t.Helper()
	w, err := f.OpenFile(as("second"), p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt([]byte(s), off); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// wantRow fails unless the row of p records the bytes the file holds.
func wantRow(t *testing.T, f *meta.FS, ix *sqlite.Index, p string) {
	t.Helper()
	data, err := semfs.ReadFile(context.Background(), f, p)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ix.File(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if want := sha(data); rec.Hash != want || rec.Size != int64(len(data)) {
		t.Fatalf("row of %s: hash %.12s size %d; the file holds hash %.12s size %d (a stale save was committed last)",
			p, rec.Hash, rec.Size, want, len(data))
	}
}

// TestOverlappingClosesKeepNewest: two closes of one file overlap (FUSE
// sends RELEASE in the background): the first close reads the file, the
// second writes it, closes and commits, and only then does the first
// commit. The row must record the second write.
func TestOverlappingClosesKeepNewest(t *testing.T) {
	f, ix, h := newHoldFS(t, 0)
	w, err := f.OpenFile(as("first"), "/f.txt", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("first words, first words, first words\n")); err != nil {
		t.Fatal(err)
	}
	h.arm("read", "/f.txt")
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	})
	waitHeld(t, h) // the first close read the first version
	overwriteAt(t, f, "/f.txt", "quetzal", 6)
	close(h.release)
	wg.Wait()
	wantRow(t, f, ix, "/f.txt")
	m, err := f.Meta(context.Background(), "/f.txt")
	if err != nil || m.CreatedBy != "first" {
		t.Fatalf("created_by %q, %v; want first", m.CreatedBy, err)
	}
}

// TestWriteFileRacesClose: WriteFile's bytes reach the base, then a close
// of the same file writes and commits before WriteFile's commit, which must
// not put WriteFile's bytes back in the row.
func TestWriteFileRacesClose(t *testing.T) {
	f, ix, h := newHoldFS(t, 0)
	write(t, f, as("first"), "/f.txt", "zero words, zero words\n")
	h.arm("write", "/f.txt")
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := f.WriteFile(as("first"), "/f.txt", []byte("first words, first words\n"), 0o644); err != nil {
			t.Error(err)
		}
	})
	waitHeld(t, h)
	overwriteAt(t, f, "/f.txt", "quetzal", 6) // same size as WriteFile's bytes
	close(h.release)
	wg.Wait()
	wantRow(t, f, ix, "/f.txt")
}

// TestDeferredCloseRacesWriteFile: the committer of deferred closes reads
// a file, and a WriteFile of it commits before that batch does.
func TestDeferredCloseRacesWriteFile(t *testing.T) {
	f, ix, h := newHoldFS(t, 20*time.Millisecond)
	w, err := f.OpenFile(as("first"), "/f.txt", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("first words, first words, first words\n")); err != nil {
		t.Fatal(err)
	}
	h.arm("close", "/f.txt") // the committer's read handle
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	waitHeld(t, h)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := f.WriteFile(as("second"), "/f.txt", []byte("second words, second words, second words\n"), 0o644); err != nil {
			t.Error(err)
		}
	})
	// WriteFile commits while the batch is held, unless it waits for the
	// pending close of its file (then the race cannot happen at all).
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	close(h.release)
	wg.Wait()
	if err := f.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantRow(t, f, ix, "/f.txt")
}

func sha(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// TestCloseRacesRenameOver: a close of the target reads its bytes, then a
// rename replaces the target with another file, and only then does the
// close commit: the row must describe the file renamed there.
func TestCloseRacesRenameOver(t *testing.T) {
	f, ix, h := newHoldFS(t, 0)
	write(t, f, as("first"), "/new.txt", "the new version, renamed over the target\n")
	w, err := f.OpenFile(as("first"), "/target.txt", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("the old version\n")); err != nil {
		t.Fatal(err)
	}
	h.arm("read", "/target.txt")
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	})
	waitHeld(t, h)
	if err := f.Rename(context.Background(), "/new.txt", "/target.txt"); err != nil {
		t.Fatal(err)
	}
	close(h.release)
	wg.Wait()
	wantRow(t, f, ix, "/target.txt")
}
