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
