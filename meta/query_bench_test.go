package meta_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/embedding/embeddingtest"
	"github.com/semfs/semfs/embedding/use"
	"github.com/semfs/semfs/eval"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/meta"
)

// BenchmarkTagQuery measures seed 000's tag query (limit 10) over an index
// of n untagged files named like the eval's synthetic corpus
// (/dNNN/word-i.md; the tag text is the path), with the eval's synthetic
// query mix: the GOROOT questions and, for a third of them, two random
// words such as "a ticket". The store rows are written directly (no file
// contents, no ingest) and cached in $TMPDIR between runs. The tag vectors
// come from the hashing test embedder at USE Lite's 512 dimensions; the
// "use" variants embed the query with the real USE Lite model, so they
// include its cost (about 0.8 ms of CPU per query). Reported: the median
// wall time per query (p50-ms), the 99th percentile, the mean process CPU
// time per query (cpu-ms/op) and its median (cpu-p50-ms; the process's
// CPU time before and after each query, so background work such as GC
// counts too). The machine is shared, so CPU time is the comparable
// figure:
//
// The "store" variants count keyword points through the store's
// TagKeywordCandidates (FTS5 trigrams, a scan for short words); the
// "tagindex" ones through an index.TagIndex (index.TagTierer).
//
//	go test -run '^$' -bench 'TagQuery/n=100000/hash' -benchtime 600x ./meta
func BenchmarkTagQuery(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		for _, model := range []string{"hash", "use"} {
			for _, kw := range []string{"store", "tagindex"} {
				b.Run(fmt.Sprintf("n=%d/%s/%s", n, model, kw), func(b *testing.B) { benchTagQuery(b, n, model, kw) })
			}
		}
	}
}

// tierStore is a sqlite index whose keyword points come from an
// index.TagIndex built from its rows: what the store does once it keeps a
// TagIndex itself (docs/bench/eval.md).
type tierStore struct {
	*sqlite.Index
	tags *index.TagIndex
}

func (s tierStore) TagTiers(_ context.Context, words []string) ([][]string, error) {
	return s.tags.Tiers(words), nil
}

func withTagIndex(b *testing.B, ix *sqlite.Index) tierStore {
	ti := index.NewTagIndex()
	err := ix.WalkFiles(context.Background(), "/", func(r index.File) error {
		ti.Set(r.Path, index.TagHay(r.Path, r.CreatedBy, r.Task, r.RelatedApps))
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return tierStore{ix, ti}
}

func benchTagQuery(b *testing.B, n int, model, keywords string) {
	ctx := context.Background()
	qs, err := eval.LoadQuestions("../eval/testdata/goroot_questions.tsv", filepath.Join(runtime.GOROOT(), "src"))
	if err != nil {
		b.Skip("eval questions:", err)
	}
	vocab := eval.Vocabulary(qs)
	vecs := &embeddingtest.Embedder{Dims: 512}
	ix := tagBenchIndex(b, n, vocab, vecs)
	var q embedding.Embedder = vecs
	if model == "use" {
		u, err := use.Load()
		if err != nil {
			b.Skip("USE Lite:", err)
		}
		q = sameInfo{u, vecs.Info()}
	}
	var store index.Store = ix
	if keywords == "tagindex" {
		store = withTagIndex(b, ix)
	}
	f, err := meta.New(memfs.New(), store, meta.Options{Spaces: embedding.Spaces{Tags: q, Content: vecs}, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	queries := eval.SyntheticQueries(qs, vocab, 3, rand.New(rand.NewPCG(5, 6)))
	for _, text := range queries[:20] { // warm up
		if _, err := f.Query(ctx, text, 10); err != nil {
			b.Fatal(err)
		}
	}
	took := make([]time.Duration, 0, b.N)
	cpus := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	c0 := cpuTime()
	for i := range b.N {
		t0, c1 := time.Now(), cpuTime()
		if _, err := f.Query(ctx, queries[i%len(queries)], 10); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(t0))
		cpus = append(cpus, cpuTime()-c1)
	}
	cpu := cpuTime() - c0
	b.StopTimer()
	slices.Sort(took)
	slices.Sort(cpus)
	b.ReportMetric(float64(took[len(took)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100])/1e6, "p99-ms")
	b.ReportMetric(cpu.Seconds()*1e3/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(cpus[len(cpus)/2])/1e6, "cpu-p50-ms")
}

// sameInfo embeds with one model and reports another's info, so that a real
// query model can be run against an index of test vectors of the same
// width (only the cost is real, not the ranking).
type sameInfo struct {
	embedding.Embedder
	info embedding.ModelInfo
}

func (s sameInfo) Info() embedding.ModelInfo {
	i := s.info
	i.TagThreshold = s.Embedder.Info().TagThreshold
	return i
}

// tagBenchIndex returns an index of n untagged files with tag vectors,
// reusing the one a previous run left in $TMPDIR.
func tagBenchIndex(b *testing.B, n int, vocab []string, e *embeddingtest.Embedder) *sqlite.Index {
	ctx := context.Background()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("semfs-tagbench-%d-v1", n))
	path := filepath.Join(dir, "index.db")
	if ix, err := sqlite.Open(ctx, path); err == nil {
		if r, err := ix.Check(ctx, false); err == nil && r.Files == n && r.TagVectors == n {
			return closeAtEnd(b, ix)
		}
		ix.Close()
	}
	os.RemoveAll(dir)
	ix, err := sqlite.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Now()
	const batch = 2000
	for lo := 0; lo < n; lo += batch {
		var items []index.Item
		var rows []embedding.Pending
		for i := lo; i < min(lo+batch, n); i++ {
			p := fmt.Sprintf("/d%03d/%s-%d.md", i%500, vocab[rng.IntN(len(vocab))], i)
			items = append(items, index.Item{File: index.File{Meta: semfs.Meta{Path: p, CreatedAt: now, UpdatedAt: now}, State: index.StateIndexed}, TagText: p})
			rows = append(rows, embedding.Pending{Key: p, Text: p})
		}
		if err := ix.Put(ctx, items...); err != nil {
			b.Fatal(err)
		}
		texts := make([]string, len(rows))
		for i, r := range rows {
			texts[i] = r.Text
		}
		vs, _ := e.Embed(ctx, texts)
		if err := ix.SetEmbeddings(ctx, embedding.SpaceTags, rows, vs); err != nil {
			b.Fatal(err)
		}
	}
	return closeAtEnd(b, ix)
}

func closeAtEnd(b *testing.B, ix *sqlite.Index) *sqlite.Index {
	b.Cleanup(func() { ix.Close() })
	return ix
}
