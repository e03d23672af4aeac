package sqlite

import (
	"slices"
	"strings"
	"testing"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/postings"
)

// TestLongWordsEqualFTS5: FTS5 cuts every token at 32768 bytes
// (FTS5_MAX_TOKEN_SIZE), also inside a multi-byte rune; postings.Analyze
// and postings.TextTerms cut there too, so a base64 blob or a minified
// line gives the same terms as FTS5 did.
func TestLongWordsEqualFTS5(t *testing.T) {
	long := strings.Repeat("ab1", 20000) // 60000 bytes: one joined word and 40000 parts
	texts := []string{
		strings.Repeat("q", 32767) + " " + strings.Repeat("r", 32768) + " " + strings.Repeat("s", 32769),
		strings.Repeat("x", 40000) + " tail",
		strings.Repeat("x", 32767) + "é" + strings.Repeat("y", 10), // é folds to e, the last byte kept
		strings.Repeat("Ꭰ", 20000),                                 // folded to 3-byte ꭰ: cut inside a rune
		long,
	}
	want := fts5Tokens(t, "porter unicode61 remove_diacritics 2", func() []string {
		out := make([]string, len(texts))
		for i, s := range texts {
			out[i] = index.IndexText(s)
		}
		return out
	}())
	for i, s := range texts {
		got := postings.TextTerms(s)
		if !slices.Equal(got, want[i]) {
			t.Fatalf("text %d: TextTerms gives %d terms, FTS5 %d", i, len(got), len(want[i]))
		}
		if got := postings.Terms(index.IndexText(s)); !slices.Equal(got, want[i]) {
			t.Fatalf("text %d: Terms differ from FTS5", i)
		}
		if max := len(slices.MaxFunc(want[i], func(a, b string) int { return len(a) - len(b) })); max != 32768 {
			t.Fatalf("text %d: FTS5's longest term is %d bytes, want 32768", i, max)
		}
	}
}
