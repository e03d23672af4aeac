package index

import (
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
