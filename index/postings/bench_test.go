package postings

import (
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
