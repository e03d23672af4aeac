package meta_test

import (
	"context"
	"testing"
	"time"

	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/sqlite"
)

// renameGatedStore holds Rename until release is closed.
type renameGatedStore struct {
	index.Store
	entered chan struct{}
	release chan struct{}
}

func (s renameGatedStore) Rename(ctx context.Context, o, n string) error {
	close(s.entered)
	<-s.release
	return s.Store.Rename(ctx, o, n)
}

// TestRenamedRestrictedFileNeverVisible: while the store records a rename
// of a restricted file (which may wait on the SQLite write lock behind a
// batch), the file must not be readable at its new name by a principal
// outside its groups, whether the name was free or a public file's.
func TestRenamedRestrictedFileNeverVisible(t *testing.T) {
	for _, over := range []bool{false, true} {
		ctx := context.Background()
		gs := renameGatedStore{nil, make(chan struct{}), make(chan struct{})}
		m, _ := hostStack(t, func(ix *sqlite.Index) index.Store { gs.Store = ix; return gs })
		financeFile(t, m)
		if over {
			if err := m.WriteFile(as("app"), "/public.txt", []byte("public\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			m.Flush(ctx)
		}
		dst := "/q4.txt"
		if over {
			dst = "/public.txt"
		}
		done := make(chan error)
		go func() { done <- m.Rename(ctx, "/q3.txt", dst) }()
		select {
		case <-gs.entered:
		case <-time.After(5 * time.Second):
			t.Fatal("rename never reached the store")
		}
		acc := access.New(m, access.Policy{})
		b, rerr := acc.ReadFile(bob, dst)
		close(gs.release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if rerr == nil {
			t.Errorf("over=%v: bob (not in finance) read %s while the store recorded the rename: %q", over, dst, b)
		}
	}
}
