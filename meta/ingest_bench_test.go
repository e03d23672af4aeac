package meta_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/eval"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/memfs"
)

// BenchmarkIngestSynthetic ingests the eval's synthetic corpus (Markdown
// notes of ~440 bytes from the GOROOT questions' vocabulary, in memory)
// into a fresh index, as `semfs-eval -synthetic N` does before it embeds:
// the per-file cost of an ingest.
//
//	go test -run '^$' -bench 'IngestSynthetic/100k' -benchtime 1x ./meta
func BenchmarkIngestSynthetic(b *testing.B) {
	for _, n := range []int{20000, 100000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			src := filepath.Join(runtime.GOROOT(), "src")
			qs, err := eval.LoadQuestions("../eval/testdata/goroot_questions.tsv", src)
			if err != nil {
				b.Fatal(err)
			}
			base := memfs.New()
			if _, err := eval.SyntheticCorpus(context.Background(), base, n, eval.Vocabulary(qs)); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer() // time the ingest, not the corpus's generation
			benchIngest(b, base)
		})
	}
}

// BenchmarkPrepareSynthetic times the analysis a store prepares before its
// single writer takes a batch of the eval's synthetic notes (postings of
// every chunk, grep trigrams, tag hays: the SQLite store's PreparePut),
// without reading, hashing, chunking or writing. Run it with -cpu 1 to
// see the CPU per file:
//
//	go test -run '^$' -bench 'PrepareSynthetic' -cpu 1 ./meta
func BenchmarkPrepareSynthetic(b *testing.B) {
	ctx := context.Background()
	src := filepath.Join(runtime.GOROOT(), "src")
	qs, err := eval.LoadQuestions("../eval/testdata/goroot_questions.tsv", src)
	if err != nil {
		b.Fatal(err)
	}
	const n = 8192 // Reconcile's batch
	base := memfs.New()
	if _, err := eval.SyntheticCorpus(ctx, base, n, eval.Vocabulary(qs)); err != nil {
		b.Fatal(err)
	}
	var items []index.Item
	var bytes int64
	for p, err := range semfs.Files(ctx, base, "/") {
		if err != nil {
			b.Fatal(err)
		}
		data, err := semfs.ReadFile(ctx, base, p)
		if err != nil {
			b.Fatal(err)
		}
		c, _, _ := index.Analyze(p, data)
		items = append(items, index.Item{File: index.File{Meta: semfs.Meta{Path: p}}, Content: c})
		bytes += int64(len(data))
	}
	ix, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "i.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	b.SetBytes(bytes)
	b.ResetTimer()
	c0 := cpuTime()
	for b.Loop() {
		ix.PreparePut(items)
	}
	b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N*len(items)), "cpu-ns/file")
}
