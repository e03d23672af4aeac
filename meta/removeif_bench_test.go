package meta_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/meta"
)

// BenchmarkReconcileRemovesGone: a reconcile that finds 2000 indexed
// files gone (a directory removed behind the layer's back) and drops
// their rows; the ingest before each is not timed.
func BenchmarkReconcileRemovesGone(b *testing.B) {
	const n = 2000
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		gone := filepath.Join(dir, "gone")
		if err := os.MkdirAll(gone, 0o755); err != nil {
			b.Fatal(err)
		}
		for i := range n {
			if err := os.WriteFile(filepath.Join(gone, fmt.Sprintf("f%04d.md", i)), []byte(fmt.Sprintf("note %d about kittiwakes\n", i)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		host, err := hostfs.Open(dir, hostfs.ReadWrite)
		if err != nil {
			b.Fatal(err)
		}
		f, _ := newFSOpts(b, host, nil)
		if _, err := f.Reconcile(ctx, meta.ReconcileOptions{}); err != nil {
			b.Fatal(err)
		}
		if err := os.RemoveAll(gone); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rep, err := f.Reconcile(ctx, meta.ReconcileOptions{})
		if err != nil || rep.Removed != n {
			b.Fatalf("reconcile: %+v, %v; want %d removed", rep, err, n)
		}
		b.StopTimer()
		host.Close()
		b.StartTimer()
	}
}
