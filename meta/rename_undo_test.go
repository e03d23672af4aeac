package meta_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/sqlite"
)

// failingGatedStore holds Rename until release is closed, then fails it
// (SQLITE_BUSY after the busy timeout, say).
type failingGatedStore struct {
	index.Store
	entered chan struct{}
	release chan struct{}
}

func (s failingGatedStore) Rename(ctx context.Context, o, n string) error {
	close(s.entered)
	<-s.release
	return errors.New("database is locked (test)")
}

// TestUndoneRenameKeepsNewFileAtOldPath: while the store fails to record
// a rename of /a.txt to /b.txt, another writer creates a new /a.txt (the
// name is free); the undo must not move /b.txt back over it (the new
// file's bytes would be lost): the file stays at /b.txt and the error
// says so.
func TestUndoneRenameKeepsNewFileAtOldPath(t *testing.T) {
	ctx := context.Background()
	gs := failingGatedStore{nil, make(chan struct{}), make(chan struct{})}
	m, data := hostStack(t, func(ix *sqlite.Index) index.Store { gs.Store = ix; return gs })
	if err := m.WriteFile(as("app"), "/a.txt", []byte("old a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.Flush(ctx)
	done := make(chan error)
	go func() { done <- m.Rename(ctx, "/a.txt", "/b.txt") }()
	select {
	case <-gs.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("rename never reached the store")
	}
	// Another agent writes a new /a.txt, which is free now.
	wdone := make(chan error)
	go func() {
		wdone <- semfs.WriteFile(as("other"), m, "/a.txt", []byte("new work of another agent\n"), 0o644)
	}()
	// The bytes reach the host file before the index update waits for the rename.
	for i := 0; i < 100; i++ {
		if b, _ := os.ReadFile(filepath.Join(data, "a.txt")); string(b) == "new work of another agent\n" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(gs.release)
	if err := <-wdone; err != nil {
		t.Logf("other agent's write: %v", err)
	}
	rerr := <-done
	t.Logf("rename: %v", rerr)
	b, err := semfs.ReadFile(ctx, m, "/a.txt")
	if err != nil || string(b) != "new work of another agent\n" {
		t.Errorf("the other agent's /a.txt after the undo: %q, %v (its bytes were replaced)", b, err)
	}
}
