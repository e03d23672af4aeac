package use

import (
	"strings"
	"testing"
)

// FuzzTokenize checks the tokenizer's invariants on arbitrary input: ids in
// range, no two unknown tokens in a row, and, when nothing is unknown, the
// pieces spell the normalised text.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", " ", "hello world", "a\tb\nc", "\xff\xfe", "東京 🍕", "ﬁ①", "::://", "x" + strings.Repeat("y", 300)} {
		f.Add(s)
	}
	m := mustLoad(f)
	f.Fuzz(func(t *testing.T, s string) {
		ids := m.Tokenize(s)
		var b strings.Builder
		unknown := false
		for i, id := range ids {
			if id < 0 || int(id) >= len(m.w.pieces) {
				t.Fatalf("id %d out of range", id)
			}
			if id == unkID {
				unknown = true
				if i > 0 && ids[i-1] == unkID {
					t.Fatalf("consecutive unknown tokens in %v", ids)
				}
				continue
			}
			if id < reserved {
				t.Fatalf("reserved id %d produced", id)
			}
			b.WriteString(m.w.pieces[id])
		}
		if !unknown && b.String() != string(symbols(s)) {
			t.Fatalf("pieces spell %q, want %q", b.String(), string(symbols(s)))
		}
	})
}
