package meta_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/embedding/models"
	"github.com/semfs/semfs/eval"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/meta"
)

// BenchmarkSearch measures content search (meta.FS.Search, limit 10, the
// default models) on GOROOT/src and on a synthetic corpus of 100 000
// Markdown files (about 200 000 chunks), one query per op, and reports the
// median and 99th percentile of each query's wall time and of the
// process's CPU time spent on it (user+sys, from getrusage: on a shared
// machine the CPU figures are the comparable ones; a two-core scan counts
// both cores).
//
// Building an index takes minutes, so the benchmark runs only with
// SEMFS_BENCH=1 and keeps each finished index in SEMFS_BENCH_CACHE
// (default $TMPDIR/semfs-search-bench) for the next run:
//
//	SEMFS_BENCH=1 go test -run '^$' -bench Search -benchtime 600x ./meta
//
// Queries are the GOROOT eval's questions (eval/testdata); on the synthetic
// corpus every third one is replaced by two random corpus words, as in
// scripts/eval.sh.
func BenchmarkSearch(b *testing.B) {
	if os.Getenv("SEMFS_BENCH") == "" {
		b.Skip("set SEMFS_BENCH=1 (builds or reuses indexes of GOROOT/src and 100k synthetic files)")
	}
	src := filepath.Join(runtime.GOROOT(), "src")
	qs, err := eval.LoadQuestions(filepath.Join("..", "eval", "testdata", "goroot_questions.tsv"), src)
	if err != nil {
		b.Fatal(err)
	}
	var texts []string
	for _, q := range qs {
		texts = append(texts, q.Text)
	}
	b.Run("corpus=goroot", func(b *testing.B) {
		f := benchIndex(b, "goroot", func() (semfs.FS, error) { return goroot(src) })
		b.ResetTimer()
		runQueries(b, f, texts)
	})
	b.Run("corpus=synthetic100k", func(b *testing.B) {
		vocab := eval.Vocabulary(qs)
		f := benchIndex(b, "synthetic100k", func() (semfs.FS, error) {
			fsys := memfs.New()
			_, err := eval.SyntheticCorpus(context.Background(), fsys, 100_000, vocab)
			return fsys, err
		})
		rng := rand.New(rand.NewPCG(5, 6))
		mixed := slices.Clone(texts)
		for i := range mixed {
			if i%3 == 0 {
				mixed[i] = vocab[rng.IntN(200)] + " " + vocab[rng.IntN(len(vocab))]
			}
		}
		b.ResetTimer()
		runQueries(b, f, mixed)
	})
}

// TestContentRecall measures, on the benchmark corpora, how much of the
// exact 400 nearest content chunks (what Search asks for) the grouped
// lookup finds, for several scan shares, and its CPU against the exact
// scan; the default share must reach 0.95. It needs the indexes of
// BenchmarkSearch (SEMFS_BENCH=1).
func TestContentRecall(t *testing.T) {
	if os.Getenv("SEMFS_BENCH") == "" {
		t.Skip("set SEMFS_BENCH=1 (needs the BenchmarkSearch indexes)")
	}
	ctx := context.Background()
	src := filepath.Join(runtime.GOROOT(), "src")
	qs, err := eval.LoadQuestions(filepath.Join("..", "eval", "testdata", "goroot_questions.tsv"), src)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"goroot", "synthetic100k"} {
		if !cached(name) {
			t.Logf("%s: no cached index; run BenchmarkSearch first", name)
			continue
		}
		f := benchIndex(t, name, nil)
		v := index.NewVectors()
		err := f.Store().(embedding.Store).Vectors(ctx, embedding.SpaceContent, func(k string, vec []float32) error {
			v.Set(k, vec)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		t0 := cpuNow()
		oldMin := index.ApproxMin
		index.ApproxMin = 1 // group this space whatever its size
		v.BuildApprox()
		t.Logf("%s: %d vectors, groups built in %v CPU", name, v.Len(), cpuNow()-t0)
		spaces, err := models.Default()
		if err != nil {
			t.Fatal(err)
		}
		content := spaces.Content
		var qvs [][]float32
		for _, q := range qs {
			vecs, err := content.Embed(ctx, []string{q.Text})
			if err != nil {
				t.Fatal(err)
			}
			qvs = append(qvs, vecs[0])
		}
		old := index.ApproxScan
		for _, share := range []float64{0.05, 0.1, 0.15, 0.2, 0.3} {
			index.ApproxScan = share
			found, total := 0, 0
			c0 := cpuNow()
			var exactCPU time.Duration
			for _, q := range qvs {
				c1 := cpuNow()
				want := map[string]bool{}
				for _, h := range v.Nearest(q, 400, 0) {
					want[h.Key] = true
				}
				exactCPU += cpuNow() - c1
				for _, h := range v.NearestApprox(q, 400, 0) {
					if want[h.Key] {
						found++
					}
				}
				total += len(want)
			}
			approxCPU := cpuNow() - c0 - exactCPU
			recall := float64(found) / float64(total)
			t.Logf("%s: scan share %.2f: recall@400 %.3f; CPU per lookup exact %v, grouped %v", name, share, recall,
				exactCPU/time.Duration(len(qvs)), approxCPU/time.Duration(len(qvs)))
			if share == old && recall < 0.95 {
				t.Errorf("%s: recall@400 %.3f < 0.95 at the default scan share %.2f", name, recall, share)
			}
		}
		index.ApproxScan, index.ApproxMin = old, oldMin
	}
}

func goroot(src string) (semfs.FS, error) {
	h, err := hostfs.Open(src, hostfs.ReadOnly)
	if err != nil {
		return nil, err
	}
	return h.Tree(), nil
}

// runQueries runs one query per op, cycling through texts, after a
// warm-up of 20 queries (and building the store's approximate lookup,
// where it has one, so that its build is not timed).
func runQueries(b *testing.B, f *meta.FS, texts []string) {
	ctx := context.Background()
	if s, ok := f.Store().(interface{ BuildApprox() }); ok {
		s.BuildApprox()
	}
	for _, q := range texts[:20] {
		if _, err := f.Search(ctx, semfs.SearchRequest{Query: q, Limit: 10}, func(semfs.SearchHit) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var wall, cpu []time.Duration
	hits := 0
	i := 0
	for b.Loop() {
		t0, c0 := time.Now(), cpuNow()
		_, err := f.Search(ctx, semfs.SearchRequest{Query: texts[i%len(texts)], Limit: 10}, func(semfs.SearchHit) error {
			hits++
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		wall = append(wall, time.Since(t0))
		cpu = append(cpu, cpuNow()-c0)
		i++
	}
	if hits == 0 {
		b.Fatal("no query found anything: the index is empty")
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	b.ReportMetric(ms(quantile(wall, 0.5)), "p50-ms")
	b.ReportMetric(ms(quantile(wall, 0.99)), "p99-ms")
	b.ReportMetric(ms(quantile(cpu, 0.5)), "cpu-p50-ms")
	b.ReportMetric(ms(quantile(cpu, 0.99)), "cpu-p99-ms")
}

func quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchDir is the cache directory of the index called name.
func benchDir(name string) string {
	dir := os.Getenv("SEMFS_BENCH_CACHE")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "semfs-search-bench")
	}
	return filepath.Join(dir, fmt.Sprintf("%s-s%d-d%d", name, sqlite.SchemaVersion, sqlite.DerivedVersion))
}

// cached reports whether the index called name is built.
func cached(name string) bool {
	_, err := os.Stat(filepath.Join(benchDir(name), "complete"))
	return err == nil
}

// benchIndex opens the cached index called name, building it from the
// corpus first if there is none (or it is of an older schema).
func benchIndex(b testing.TB, name string, corpus func() (semfs.FS, error)) *meta.FS {
	ctx := context.Background()
	dir := benchDir(name)
	spaces, err := models.Default()
	if err != nil {
		b.Fatal(err)
	}
	quietLog := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	done := filepath.Join(dir, "complete")
	if _, err := os.Stat(done); err != nil {
		b.Logf("building the %s index in %s (once)", name, dir)
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
		base, err := corpus()
		if err != nil {
			b.Fatal(err)
		}
		ix, err := sqlite.Open(ctx, filepath.Join(dir, "index.db"))
		if err != nil {
			b.Fatal(err)
		}
		f, err := meta.New(base, ix, meta.Options{Spaces: spaces, Logger: quietLog})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Reconcile(ctx, meta.ReconcileOptions{}); err != nil {
			b.Fatal(err)
		}
		for space, e := range spaces.Map() {
			w := &embedding.Worker{Store: ix, Space: space, Embedder: e, Batch: 512, Logger: quietLog}
			if _, err := w.Drain(ctx); err != nil {
				b.Fatal(err)
			}
		}
		f.Close()
		ix.Close()
		if err := os.WriteFile(done, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ix, err := sqlite.Open(ctx, filepath.Join(dir, "index.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	if len(ix.Repaired) > 0 {
		b.Fatalf("cached index %s needed repair (%v); delete it and run again", dir, ix.Repaired)
	}
	// Search reads only the store, so the base may be empty; it must not be
	// reconciled against.
	f, err := meta.New(memfs.New(), ix, meta.Options{Spaces: spaces, Logger: quietLog})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}
