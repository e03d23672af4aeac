package postings

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/semfs/semfs/index"
)

func benchText(b *testing.B) string {
	src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "net", "http", "server.go"))
	if err != nil {
		b.Fatal(err)
	}
	return index.IndexText(string(src))
}

// BenchmarkAnalyze: terms of net/http/server.go (index.IndexText output).
func BenchmarkAnalyze(b *testing.B) {
	text := benchText(b)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Analyze(text, func([]byte) {})
	}
}

// BenchmarkTextDoc: the same text as one document with a path.
func BenchmarkTextDoc(b *testing.B) {
	text := benchText(b)
	path := Terms(index.IndexText("/src/net/http/server.go"))
	b.SetBytes(int64(len(text)))
	var a Analyzer
	for b.Loop() {
		a.TextDoc(path, text)
	}
}

// BenchmarkAnalyzer: Analyze through an Analyzer's cache of stems.
func BenchmarkAnalyzer(b *testing.B) {
	text := benchText(b)
	b.SetBytes(int64(len(text)))
	var a Analyzer
	for b.Loop() {
		a.Each(text, func(string) {})
	}
}

// BenchmarkTextBuilder: a segment of every file of net/http as one
// document each, built and flattened.
func BenchmarkTextBuilder(b *testing.B) {
	files, err := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", "net", "http", "*.go"))
	if err != nil || len(files) == 0 {
		b.Fatal(files, err)
	}
	var texts []string
	n := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		texts = append(texts, string(src))
		n += len(src)
	}
	b.SetBytes(int64(n))
	for b.Loop() {
		var tb TextBuilder
		for i, t := range texts {
			tb.AddRaw(Terms(files[i]), t)
		}
		tb.Segment()
	}
}

// BenchmarkTerms: the terms of a file's path, as a store takes them for
// every file it indexes.
func BenchmarkTerms(b *testing.B) {
	var paths []string
	for i := range 1000 {
		paths = append(paths, index.IndexText(fmt.Sprintf("/notes/topic%d/meeting-notes-%05d.md", i%20, i)))
	}
	for i := 0; b.Loop(); i++ {
		Terms(paths[i%len(paths)])
	}
}

// BenchmarkTermsDistinct: the terms of 100 000 paths each with a number
// of its own, as in a tree of notes named by date or id (the synthetic
// ingest's names): their words seldom repeat.
func BenchmarkTermsDistinct(b *testing.B) {
	var paths []string
	for i := range 100000 {
		paths = append(paths, index.IndexText(fmt.Sprintf("/d%03d/meeting-%d.md", i%500, i)))
	}
	for i := 0; b.Loop(); i++ {
		Terms(paths[i%len(paths)])
	}
}

// BenchmarkConcat: the trigram segments of the two halves of net/http's
// files joined, as a store joins the segments its workers built.
func BenchmarkConcat(b *testing.B) {
	files, err := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", "net", "http", "*.go"))
	if err != nil || len(files) == 0 {
		b.Fatal(files, err)
	}
	var halves [2]*Segment
	for h := range halves {
		gb := NewBuilder(Trigram)
		for _, f := range files[h*len(files)/2 : (h+1)*len(files)/2] {
			src, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			var tris []uint32
			index.GrepTrigrams(string(src), func(t uint32) { tris = append(tris, t) })
			gb.AddTrigrams(tris)
		}
		halves[h] = gb.Segment()
	}
	for b.Loop() {
		Concat(halves[:])
	}
}

// BenchmarkMerge: a merge of MergeFactor stored segments (decoded, none
// of their documents deleted, as in a bulk ingest) of the trigrams of
// net/http's and os's files, each segment the files once more: from the
// encoded lists (merge) and through each list decoded (mergeLists).
func BenchmarkMerge(b *testing.B) {
	var files []string
	for _, dir := range []string{"net/http", "os"} {
		fs, err := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", dir, "*.go"))
		if err != nil || len(fs) == 0 {
			b.Fatal(fs, err)
		}
		files = append(files, fs...)
	}
	var texts []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		texts = append(texts, string(src))
	}
	segs := make([]*seg, MergeFactor)
	id := uint32(1)
	for i := range segs {
		gb := NewBuilder(Trigram)
		var tris []uint32
		for _, text := range texts {
			tris = index.AppendGrepTrigrams(tris[:0], text)
			gb.AddTrigrams(tris)
		}
		s := gb.Segment()
		for j := range s.IDs {
			s.IDs[j] = id
			id++
		}
		segs[i] = &seg{s: s.Compact()}
	}
	dead := make([][]uint64, len(segs))
	b.Run("encoded", func(b *testing.B) {
		for b.Loop() {
			s, _ := merge(segs, dead)
			s.Compact()
		}
	})
	b.Run("lists", func(b *testing.B) {
		for b.Loop() {
			s, _ := mergeLists(segs, dead)
			s.Compact()
		}
	})
}
