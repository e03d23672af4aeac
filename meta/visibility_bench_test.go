package meta_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/meta"
)

// BenchmarkVisibilityStack measures the daemon's stack — the access layer
// over the metadata layer over a host directory, with a SQLite index —
// for a session principal with groups, against the bare metadata layer
// and the bare host tree. The tree holds 10 directories of 100 files;
// five files of /d9 and one file of /d0/deep are restricted to a group the
// principal is not in.
//
//	go test -run '^$' -bench VisibilityStack -count 5 ./meta
func BenchmarkVisibilityStack(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	for d := range 10 {
		for i := range 100 {
			p := filepath.Join(dir, "data", fmt.Sprintf("d%d", d), fmt.Sprintf("f%03d.txt", i))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "data", "d0", "deep"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "d0", "deep", "s.txt"), []byte("s"), 0o644); err != nil {
		b.Fatal(err)
	}
	host, err := hostfs.Open(filepath.Join(dir, "data"), hostfs.ReadWrite)
	if err != nil {
		b.Fatal(err)
	}
	defer host.Close()
	ix, err := sqlite.Open(ctx, filepath.Join(dir, "index.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	m, err := meta.New(host, ix, meta.Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Reconcile(ctx, meta.ReconcileOptions{}); err != nil {
		b.Fatal(err)
	}
	secret := semfs.Tags{Groups: []string{"finance"}}
	for _, p := range []string{"/d9/f000.txt", "/d9/f010.txt", "/d9/f020.txt", "/d9/f030.txt", "/d9/f040.txt", "/d0/deep/s.txt"} {
		if err := m.SetTags(ctx, p, secret); err != nil {
			b.Fatal(err)
		}
	}
	acc := access.New(m, access.Policy{})
	session := semfs.WithPrincipal(ctx, semfs.Principal{ID: "token:s1", Groups: []string{"eng", "ops"}})
	trees := []struct {
		name string
		fsys semfs.FS
	}{{"hostfs", host}, {"meta", m}, {"access-meta", acc}}
	for _, t := range trees {
		b.Run("Stat/"+t.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := t.fsys.Stat(session, "/d3/f042.txt"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, t := range trees {
		b.Run("ReadDir/"+t.name, func(b *testing.B) {
			for b.Loop() {
				if es, err := t.fsys.ReadDir(session, "/d3"); err != nil || len(es) != 100 {
					b.Fatal(len(es), err)
				}
			}
		})
	}
	// A listing with hidden entries: the restricted set has work to do.
	b.Run("ReadDir/access-meta-restricted", func(b *testing.B) {
		for b.Loop() {
			if es, err := acc.ReadDir(session, "/d9"); err != nil || len(es) != 95 {
				b.Fatal(len(es), err)
			}
		}
	})
	b.Run("Stat/access-meta-restricted-dir", func(b *testing.B) {
		for b.Loop() {
			if _, err := acc.Stat(session, "/d0/deep"); err == nil {
				b.Fatal("hidden directory stat")
			}
		}
	})
}
