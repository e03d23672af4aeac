package index

import (
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func trigramSet(text string) map[uint32]bool {
	set := map[uint32]bool{}
	GrepTrigrams(text, func(t uint32) {
		if set[t] {
			panic("trigram reported twice")
		}
		set[t] = true
	})
	return set
}

// Every trigram PlanGrep can ask of a literal found in a text (in any case)
// is among the text's GrepTrigrams, and no other is.
func TestGrepTrigramsCoverPlans(t *testing.T) {
	text := "func (ix *Index) Put(ctx context.Context) error {\n\treturn ERR_Nope // ~{tab}\t\u00e9t\u00e9 x\n"
	set := trigramSet(text)
	want := map[uint32]bool{}
	for i := 0; i < len(text); i++ {
		for j := i + 3; j <= len(text); j++ {
			for _, lit := range []string{text[i:j], strings.ToUpper(text[i:j])} {
				for _, tri := range trigrams(foldLiteral(lit)) {
					want[PackTrigram(tri)] = true
					if !set[PackTrigram(tri)] {
						t.Fatalf("trigram %q of %q missing", tri, lit)
					}
				}
			}
		}
	}
	if len(set) != len(want) {
		t.Fatalf("%d trigrams, want %d", len(set), len(want))
	}
	// The bitmap is cleared between calls.
	if got := trigramSet("abc"); len(got) != 1 || !got[PackTrigram("abc")] {
		t.Fatalf("second call: %v", got)
	}
}

// A case-insensitive pattern matches a non-ASCII rune that folds to an
// ASCII letter; GrepTrigrams must index such runes as that letter.
func TestGrepTrigramsFoldToASCII(t *testing.T) {
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f >= 0x80 {
				continue
			}
			tri := "x" + string(unicode.ToLower(f)) + "y"
			if !trigramSet("x" + string(r) + "Y")[PackTrigram(tri)] {
				t.Errorf("%U folds to %q: trigram %q missing", r, f, tri)
			}
		}
	}
}

// grepTrigramsByDefinition is GrepTrigrams as its comment defines it,
// one rune at a time: the Kelvin sign and the long s as "k" and "s",
// every other rune outside printable ASCII breaking trigrams.
func grepTrigramsByDefinition(text string) map[uint32]bool {
	set := map[uint32]bool{}
	var last []byte
	for _, r := range text {
		switch r {
		case '\u212a':
			r = 'k'
		case '\u017f':
			r = 's'
		}
		if r < 0x20 || r >= 0x7f {
			last = last[:0]
			continue
		}
		last = append(last, byte(unicode.ToLower(r)))
		if len(last) >= 3 {
			set[PackTrigram(string(last[len(last)-3:]))] = true
		}
	}
	return set
}

// GrepTrigrams gives the trigrams of its definition on random texts of
// ASCII, control bytes, runes that fold to ASCII, other runes and
// invalid UTF-8.
func TestGrepTrigramsEqualDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	alphabet := []string{"a", "B", "z", "Q", "0", " ", "~", "\x7f", "\x1f", "\t", "\n", "\u212a", "\u017f", "é", "\u00e9", "\xe2\x84", "\xff", "日", "K", "s"}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		text := b.String()
		got, want := trigramSet(text), grepTrigramsByDefinition(text)
		if !maps.Equal(got, want) {
			t.Fatalf("%q: %d trigrams, want %d", text, len(got), len(want))
		}
		var each []uint32
		GrepTrigrams(text, func(t uint32) { each = append(each, t) })
		prefix := []uint32{7, 9}
		if appended := AppendGrepTrigrams(slices.Clone(prefix), text); !slices.Equal(appended, append(prefix, each...)) {
			t.Fatalf("%q: AppendGrepTrigrams %v, GrepTrigrams %v", text, appended, each)
		}
	}
}

// BenchmarkGrepTrigrams: the grep trigrams of net/http/server.go.
func BenchmarkGrepTrigrams(b *testing.B) {
	src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "net", "http", "server.go"))
	if err != nil {
		b.Fatal(err)
	}
	text := string(src)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		GrepTrigrams(text, func(uint32) {})
	}
}
