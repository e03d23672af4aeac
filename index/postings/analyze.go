package postings

import (
	"sort"
	"unicode"
	"unicode/utf8"
)

// Analyze calls emit with each term of text, an index.IndexText output,
// in order. It is the token stream SQLite FTS5 gave the same text with
// tokenize='porter unicode61 remove_diacritics 2' (the full-text table
// this package replaces): runs of letters and digits, each rune folded
// to lower case without diacritics as unicode61 folds it (foldRune), then
// Stem. emit must not keep the slice.
//
// Runes SQLite's Unicode tables do not know as letters (letters added to
// Unicode after them) separate terms there and so here too; runes that
// are neither letters nor decimal digits in Go never reach this function
// from index.IndexText and are treated as separators.
func Analyze(text string, emit func(term []byte)) {
	var buf [128]byte
	tok := buf[:0]
	flush := func() {
		if len(tok) > 0 {
			emit(Stem(tok))
			tok = buf[:0]
		}
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				tok = append(tok, c)
			case 'A' <= c && c <= 'Z':
				tok = append(tok, c+'a'-'A')
			default:
				flush()
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		f := foldRune(r)
		switch {
		case f < 0:
			flush()
		case f > 0:
			tok = utf8.AppendRune(tok, f)
		}
	}
	flush()
}

// Terms returns the terms of text (see Analyze) as strings.
func Terms(text string) []string {
	var out []string
	Analyze(text, func(t []byte) { out = append(out, string(t)) })
	return out
}

// foldRune is how unicode61 with remove_diacritics 2 treats a non-ASCII
// rune: -1 separates terms, 0 is dropped, anything else is the folded
// rune. The tables come from FTS5 itself (see fold_table.go).
func foldRune(r rune) rune {
	if f, ok := foldMap[r]; ok {
		return f
	}
	i := sort.Search(len(sepRanges), func(i int) bool { return sepRanges[i][1] >= r })
	if i < len(sepRanges) && sepRanges[i][0] <= r {
		return -1
	}
	if !isTableRune(r) {
		return -1
	}
	return r
}

// foldMap holds the runes of foldPairs: rune, fold (0 dropped, -1
// separator), for every rune unicode61 does not keep as it is.
var foldMap = func() map[rune]rune {
	m := make(map[rune]rune, len(foldPairs)/2)
	for i := 0; i+1 < len(foldPairs); i += 2 {
		m[foldPairs[i]] = foldPairs[i+1]
	}
	return m
}()

// isTableRune reports whether the fold tables cover r: the letters and
// decimal digits index.Words keeps.
func isTableRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
