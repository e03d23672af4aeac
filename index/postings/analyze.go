package postings

import (
	"sort"

	"github.com/semfs/semfs/index"
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
	words(text, func(w []byte) { emit(Stem(w)) })
}

// words calls emit with each folded, unstemmed word of text (Analyze
// stems them); emit may change the slice but not keep it.
func words(text string, emit func(w []byte)) {
	var buf [128]byte
	tok := buf[:0]
	flush := func() {
		if len(tok) > 0 {
			emit(tok)
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

// rawWords calls emit with each folded, unstemmed word of raw text, the
// words Analyze finds in index.IndexText(text), without building that
// string: IndexText's words are lower-case letters and digits, nearly
// always ASCII and so already folded.
func rawWords(text string, emit func(w []byte)) {
	index.WordBytes(text, func(w []byte) {
		for _, c := range w {
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
				words(string(w), emit)
				return
			}
		}
		emit(w)
	})
}

// TextTerms returns the terms of index.IndexText(text) (see Analyze).
func TextTerms(text string) []string {
	var out []string
	rawWords(text, func(w []byte) { out = append(out, string(Stem(w))) })
	return out
}

// Analyzer is Analyze with a cache of stems: source code and prose repeat
// their words, and stemming is most of the cost of analysis. It numbers
// the distinct terms it has seen, so that counting a document's terms
// (TextDoc) costs one map lookup per word. An Analyzer is not safe for
// concurrent use.
type Analyzer struct {
	words map[string]int32 // folded word → term number
	ids   map[string]int32 // term → term number
	terms []string         // term number → term

	tf   []TF    // per term number: frequencies in the current document
	seen []int32 // term numbers of the current document

	// pinned keeps term numbers for the Analyzer's life (a TextBuilder
	// indexes its lists by them); only the word cache starts over.
	pinned bool
}

// maxStems bounds an Analyzer's cache; it starts over when full (TextDoc
// only between documents).
const maxStems = 1 << 16

// reset empties the cache when it is full (or was never made).
func (a *Analyzer) reset() {
	if a.words != nil && len(a.words) < maxStems {
		return
	}
	a.words = make(map[string]int32, 1024)
	if a.ids == nil || !a.pinned {
		a.ids = make(map[string]int32, 1024)
		a.terms, a.tf = a.terms[:0], a.tf[:0]
	}
}

// termID returns the number of term t.
func (a *Analyzer) termID(t string) int32 {
	id, ok := a.ids[t]
	if !ok {
		id = int32(len(a.terms))
		a.ids[t] = id
		a.terms = append(a.terms, t)
		a.tf = append(a.tf, TF{})
	}
	return id
}

// wordID returns the number of the term of folded word w.
func (a *Analyzer) wordID(w []byte) int32 {
	if id, ok := a.words[string(w)]; ok {
		return id
	}
	word := string(w)
	t := string(Stem(w))
	if t == word {
		t = word
	}
	id := a.termID(t)
	a.words[word] = id
	return id
}

// Each calls emit with each term of text, as Analyze does.
func (a *Analyzer) Each(text string, emit func(term string)) {
	words(text, func(w []byte) {
		a.reset()
		emit(a.terms[a.wordID(w)])
	})
}

// TextDoc is the package's TextDoc through a's cache.
func (a *Analyzer) TextDoc(pathTerms []string, body string) Doc {
	n := a.count(pathTerms, body, false)
	d := Doc{Terms: make([]TermTF, len(a.seen)), PathLen: uint32(len(pathTerms)), BodyLen: n}
	for i, id := range a.seen {
		d.Terms[i] = TermTF{a.terms[id], a.tf[id]}
		a.tf[id] = TF{}
	}
	return d
}

// count counts the terms of a document into a.tf, listing them in a.seen,
// and returns the number of body terms. The caller clears a.tf.
func (a *Analyzer) count(pathTerms []string, body string, raw bool) uint32 {
	a.reset()
	a.seen = a.seen[:0]
	for _, t := range pathTerms {
		id := a.termID(t)
		tf := &a.tf[id]
		if *tf == (TF{}) {
			a.seen = append(a.seen, id)
		}
		if tf.Path < 1<<16-1 {
			tf.Path++
		}
	}
	var n uint32
	each := words
	if raw {
		each = rawWords
	}
	each(body, func(w []byte) {
		id := a.wordID(w)
		tf := &a.tf[id]
		if *tf == (TF{}) {
			a.seen = append(a.seen, id)
		}
		tf.Body++
		n++
	})
	return n
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
