package meta_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/meta"
)

// TestCloseRacesRename: an editor's save — write a temp file, close it,
// rename it over the target — where the close is committed while the
// rename runs (FUSE sends RELEASE in the background). Afterwards the target
// has a row matching its bytes and no temp file has one.
func TestCloseRacesRename(t *testing.T) {
	f, ix := newFS(t, nil)
	closeRacesRename(t, f, ix)
}

// closeRacesRename saves /t/target 150 times as an editor does, each
// temp file's close racing its rename over the target, then checks the
// target's row (read through Meta, which stores deferred closes first)
// names the editor with the last bytes and no temp file kept a row.
func closeRacesRename(t *testing.T, f *meta.FS, ix *sqlite.Index) {
	t.Helper()
	ctx := as("editor")
	if err := f.MkdirAll(ctx, "/t", 0o755); err != nil {
		t.Fatal(err)
	}
	var last string
	for i := range 150 {
		tmp := fmt.Sprintf("/t/.target.%d.tmp", i)
		last = fmt.Sprintf("version %d of the target, %s\n", i, string(make([]byte, i%7)))
		w, err := f.OpenFile(ctx, tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(last)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := w.Close(); err != nil {
				t.Error(err)
			}
		})
		if err := f.Rename(ctx, tmp, "/t/target"); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
	}
	m, err := f.Meta(context.Background(), "/t/target")
	if err != nil || m.Hash != hashHex(last) || m.CreatedBy != "editor" {
		t.Fatalf("target meta %+v, %v; want the hash of %q written by editor", m, err, last)
	}
	rec, err := ix.File(context.Background(), "/t/target")
	if err != nil || rec.Size != int64(len(last)) {
		t.Fatalf("target row %+v, %v; want size %d", rec, err, len(last))
	}
	var ghosts []string
	ix.WalkFiles(context.Background(), "/t", func(r index.File) error {
		if r.Path != "/t/target" {
			ghosts = append(ghosts, r.Path)
		}
		return nil
	})
	if len(ghosts) > 0 {
		t.Fatalf("rows of renamed-away temp files: %v", ghosts)
	}
	if data, _ := semfs.ReadFile(context.Background(), f, "/t/target"); string(data) != last {
		t.Fatalf("target holds %q", data)
	}
}

// failingStore refuses any Put holding /bad, and is slow to store /slow
// (so that saves arriving meanwhile are committed as one group).
type failingStore struct{ index.Store }

func (s failingStore) Put(ctx context.Context, items ...index.Item) error {
	for _, it := range items {
		switch it.File.Path {
		case "/bad":
			return semfs.PathErr("put", "/bad", semfs.ErrInvalid, "refused by the test")
		case "/slow":
			time.Sleep(150 * time.Millisecond)
		}
	}
	return s.Store.Put(ctx, items...)
}

// TestGroupCommitIsolatesFailures: saves committed in one group get the
// outcome of their own row — a row the store refuses does not cost the
// others theirs.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	ix, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := meta.New(memfs.New(), failingStore{ix}, meta.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close(); ix.Close() })
	ctx := as("app")
	var wg sync.WaitGroup
	wg.Go(func() { write(t, f, ctx, "/slow", "slow\n") })
	time.Sleep(30 * time.Millisecond) // /slow leads a group and holds it
	for _, p := range []string{"/bad", "/good1", "/good2"} {
		wg.Go(func() { write(t, f, ctx, p, "text of "+p+"\n") })
	}
	wg.Wait()
	for _, p := range []string{"/slow", "/good1", "/good2"} {
		if r, err := ix.File(context.Background(), p); err != nil || r.CreatedBy != "app" {
			t.Errorf("%s: row %+v, %v", p, r, err)
		}
	}
	if _, err := ix.File(context.Background(), "/bad"); !errors.Is(err, semfs.ErrNotExist) {
		t.Errorf("/bad has a row: %v", err)
	}
}

// A file renamed while open for writing (a log rotated under its writer)
// is indexed at close under its new path, with the bytes written after the
// rename; a rename of its directory moves it too.
func TestWriteAfterRenameWhileOpen(t *testing.T) {
	f, ix := newFS(t, nil)
	ctx := as("logger")
	if err := f.MkdirAll(ctx, "/logs", 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := f.OpenFile(ctx, "/logs/app.log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("first line\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.Rename(ctx, "/logs/app.log", "/logs/app.log.1"); err != nil {
		t.Fatal(err)
	}
	if err := f.Rename(ctx, "/logs", "/old-logs"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("second line, after rotation\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := "first line\nsecond line, after rotation\n"
	rec, err := ix.File(context.Background(), "/old-logs/app.log.1")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Size != int64(len(want)) || rec.Hash != hashHex(want) {
		t.Errorf("row after close: size %d hash %s; want size %d hash %s (the bytes written after the rename)",
			rec.Size, rec.Hash, len(want), hashHex(want))
	}
	for _, gone := range []string{"/logs/app.log", "/logs/app.log.1"} {
		if _, err := ix.File(context.Background(), gone); err == nil {
			t.Errorf("a row remains at %s", gone)
		}
	}
}

func hashHex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
