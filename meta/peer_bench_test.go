package meta_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/meta"
)

// BenchmarkPeerPollSaves saves small files one after another through a
// layer over a SQLite index with the peer poller at its default interval
// and off: what the poll (which re-reads the rows this process wrote)
// costs a stream of saves.
//
//	go test -run '^$' -bench PeerPollSaves -count 6 ./meta
func BenchmarkPeerPollSaves(b *testing.B) {
	for _, c := range []struct {
		name string
		poll time.Duration
	}{{"poll", 0}, {"off", -1}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			ix, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "i.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			m, err := meta.New(memfs.New(), ix, meta.Options{Logger: quiet, PeerPoll: c.poll})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			for i := 0; b.Loop(); i++ {
				if err := m.WriteFile(as("app"), fmt.Sprintf("/d%d/f%d.md", i%50, i), []byte("a short note about saving files\n"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
