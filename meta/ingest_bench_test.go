package meta_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/semfs/semfs/eval"
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
			benchIngest(b, base)
		})
	}
}
