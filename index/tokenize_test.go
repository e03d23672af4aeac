package index

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// wordsByDefinition is Words written plainly: runs of word runes, each
// through emitWord. The byte path of tokenizer must give the same words.
func wordsByDefinition(text string) []string {
	var out []string
	for len(text) > 0 {
		i := strings.IndexFunc(text, isWordRune)
		if i < 0 {
			break
		}
		text = text[i:]
		j := strings.IndexFunc(text, func(r rune) bool { return !isWordRune(r) })
		if j < 0 {
			j = len(text)
		}
		emitWord(text[:j], func(w string) { out = append(out, w) })
		text = text[j:]
	}
	return out
}

func checkWords(t *testing.T, name, text string) {
	t.Helper()
	want := wordsByDefinition(text)
	var got []string
	Words(text, func(w string) { got = append(got, w) })
	if !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("%s: word %d is %q, want %q", name, i, got[i], want[i])
			}
		}
		t.Fatalf("%s: %d words, want %d", name, len(got), len(want))
	}
	if it := IndexText(text); it != strings.Join(want, " ") {
		t.Fatalf("%s: IndexText differs", name)
	}
	// The words of each run NextRun finds, in turn, are the words of the
	// text, and each run is maximal.
	got = got[:0]
	for i := 0; ; {
		start, end := NextRun(text, i)
		if start == end {
			if start != len(text) {
				t.Fatalf("%s: empty run at %d", name, start)
			}
			break
		}
		if r, _ := utf8.DecodeLastRuneInString(text[:start]); start > 0 && isWordRune(r) {
			t.Fatalf("%s: run at %d starts after a word rune", name, start)
		}
		if r, _ := utf8.DecodeRuneInString(text[end:]); end < len(text) && isWordRune(r) {
			t.Fatalf("%s: run at %d ends before a word rune", name, start)
		}
		Words(text[start:end], func(w string) { got = append(got, w) })
		i = end
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: the words of NextRun's runs differ (%d words, want %d)", name, len(got), len(want))
	}
}

func TestWordsMatchDefinition(t *testing.T) {
	for _, s := range []string{"", "_", "__a__b", "parseHTTPRequest", "read_file ReadFile", "x86_64 utf8Valid",
		"HTTPServer2Go", "ABC", "aB1c", "Ünïcode straße ÉCOLE_normale", "café_Noir", "a\uFFFDb", "日本語テキスト",
		"K\u212aelvin", "mixed123ABCdef_ghi", "trailing_", "_leading", "A", "aA", "Aa", "AAa", "1a", "a1", "\x00\xff"} {
		checkWords(t, s, s)
	}
	// Real source: the tokenizer's package and GOROOT's net package.
	dirs := []string{".", filepath.Join(runtime.GOROOT(), "src", "net")}
	n := 0
	for _, dir := range dirs {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.IsDir() {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			checkWords(t, e.Name(), string(data))
			n++
		}
	}
	if n < 10 {
		t.Fatalf("only %d files compared", n)
	}
}

func FuzzWords(f *testing.F) {
	for _, s := range []string{"parseHTTPRequest", "a_b_C", "ÉCOLE2x", "x\u212a_K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkWords(t, "fuzz", s) })
}

func BenchmarkIndexText(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "net", "http", "server.go"))
	if err != nil {
		b.Skip(err)
	}
	text := string(data)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		IndexText(text)
	}
}

func BenchmarkIndexTextByDefinition(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "net", "http", "server.go"))
	if err != nil {
		b.Skip(err)
	}
	text := string(data)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		strings.Join(wordsByDefinition(text), " ")
	}
}
