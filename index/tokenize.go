package index

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxQueryTokens bounds the tokens of one full-text query; a huge query is
// cut here rather than rejected.
const MaxQueryTokens = 64

// Words splits text into lower-cased words: runs of letters, digits and
// underscores. An identifier that joins several words (camelCase,
// snake_case, HTTPServer) also yields its parts and its joined form, so that
// "read file", "ReadFile" and "read_file" find each other.
func Words(text string, fn func(w string)) {
	var t Tokenizer
	t.WordBytes(text, func(w []byte) { fn(string(w)) })
}

// WordBytes is Words without a string per word, for indexing: fn gets
// the words of IndexText(text) in order and must not keep the slice (fn
// may change its bytes).
func WordBytes(text string, fn func(w []byte)) {
	var t Tokenizer
	t.WordBytes(text, fn)
}

// NextRun returns the bounds of the first run of word runes (letters,
// digits, underscores) in text at or after byte i, or start == end ==
// len(text) when there is none. Words gives the words of each run in
// turn, and the words of a run are those of Words(text[start:end]) — so
// a caller can cache them by the run's bytes.
func NextRun(text string, i int) (start, end int) {
	start, end, _ = nextRun(text, i)
	return start, end
}

// A Tokenizer is WordBytes keeping its buffers between calls. The zero
// value is ready; a Tokenizer is not safe for concurrent use.
//
// ASCII words, nearly all of source code, take a byte path that
// allocates nothing; a word holding any other rune takes emitWord, which
// is the definition.
type Tokenizer struct {
	buf   []byte   // the lower-cased word or its joined parts
	parts [][2]int // part boundaries within the word
}

// byteClass classifies bytes for the run scan.
const (
	sepByte   = iota // not a word rune
	wordByte         // an ASCII letter, digit or underscore
	multiByte        // starts or continues a multi-byte rune: decode it
)

var byteClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = multiByte
		case isWordRune(rune(c)):
			t[c] = wordByte
		}
	}
	return t
}()

// nextRun is NextRun, also telling whether the run is all ASCII. Its
// inner loops step over ASCII bytes by table; a multi-byte rune is
// decoded where one starts.
func nextRun(text string, i int) (start, end int, ascii bool) {
	for {
		for i < len(text) && byteClass[text[i]] == sepByte {
			i++
		}
		if i == len(text) || byteClass[text[i]] == wordByte {
			break
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if isWordRune(r) {
			break
		}
		i += n
	}
	start, ascii = i, true
	for {
		for i < len(text) && byteClass[text[i]] == wordByte {
			i++
		}
		if i == len(text) || byteClass[text[i]] == sepByte {
			break
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			break
		}
		ascii = false
		i += n
	}
	return start, i, ascii
}

// WordBytes calls emit with each word of text, in the order Words gives
// them; emit must not keep the slice, and may change its bytes.
func (t *Tokenizer) WordBytes(text string, emit func(w []byte)) {
	for i := 0; ; {
		start, end, ascii := nextRun(text, i)
		if start == end {
			return
		}
		i = end
		if ascii {
			t.asciiWord(text[start:end], emit)
		} else {
			emitWord(text[start:end], func(w string) {
				t.buf = append(t.buf[:0], w...)
				emit(t.buf)
			})
		}
	}
}

// asciiWord is emitWord for a word of ASCII letters, digits and
// underscores.
func (t *Tokenizer) asciiWord(w string, emit func([]byte)) {
	t.parts = t.parts[:0]
	for i := 0; i < len(w); {
		if w[i] == '_' {
			i++
			continue
		}
		start := i
		for i++; i < len(w) && w[i] != '_'; i++ {
			prev, cur := w[i-1], w[i]
			lowerToUpper := isLowerByte(prev) && isUpperByte(cur)
			acronymEnd := isUpperByte(prev) && isUpperByte(cur) && i+1 < len(w) && isLowerByte(w[i+1])
			letterDigit := isDigitByte(prev) != isDigitByte(cur)
			if lowerToUpper || acronymEnd || letterDigit {
				t.parts = append(t.parts, [2]int{start, i})
				start = i
			}
		}
		t.parts = append(t.parts, [2]int{start, i})
	}
	if len(t.parts) == 0 {
		return
	}
	t.buf = t.buf[:0]
	for _, p := range t.parts {
		t.buf = appendLower(t.buf, w[p[0]:p[1]])
	}
	emit(t.buf)
	if len(t.parts) == 1 {
		return
	}
	for _, p := range t.parts {
		t.buf = appendLower(t.buf[:0], w[p[0]:p[1]])
		emit(t.buf)
	}
}

func isLowerByte(c byte) bool { return 'a' <= c && c <= 'z' }
func isUpperByte(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigitByte(c byte) bool { return '0' <= c && c <= '9' }

func appendLower(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUpperByte(c) {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func emitWord(word string, fn func(string)) {
	// Fast path: a plain lower-case ASCII word has one part.
	plain := true
	for i := 0; i < len(word); i++ {
		if c := word[i]; c < 'a' || c > 'z' {
			plain = false
			break
		}
	}
	if plain {
		fn(word)
		return
	}
	parts := splitIdent(word)
	if len(parts) <= 1 {
		if w := strings.ToLower(strings.Trim(word, "_")); w != "" {
			fn(w)
		}
		return
	}
	fn(strings.ToLower(strings.Join(parts, "")))
	for _, p := range parts {
		fn(strings.ToLower(p))
	}
}

// splitIdent splits an identifier at underscores and case changes:
// "parseHTTPRequest" → parse HTTP Request; "read_file" → read file.
func splitIdent(w string) []string {
	var parts []string
	for _, seg := range strings.Split(w, "_") {
		if seg == "" {
			continue
		}
		runes := []rune(seg)
		start := 0
		for i := 1; i < len(runes); i++ {
			prev, cur := runes[i-1], runes[i]
			next := rune(0)
			if i+1 < len(runes) {
				next = runes[i+1]
			}
			lowerToUpper := unicode.IsLower(prev) && unicode.IsUpper(cur)
			acronymEnd := unicode.IsUpper(prev) && unicode.IsUpper(cur) && next != 0 && unicode.IsLower(next)
			letterDigit := unicode.IsLetter(prev) != unicode.IsLetter(cur) && (unicode.IsDigit(prev) || unicode.IsDigit(cur))
			if lowerToUpper || acronymEnd || letterDigit {
				parts = append(parts, string(runes[start:i]))
				start = i
			}
		}
		parts = append(parts, string(runes[start:]))
	}
	return parts
}

// IndexText turns text into the token stream stored in the full-text index
// (the words of Words separated by spaces).
func IndexText(text string) string {
	b := make([]byte, 0, len(text)+len(text)/4)
	var t Tokenizer
	t.WordBytes(text, func(w []byte) {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, w...)
	})
	return string(b)
}

// stopWords are dropped from natural-language queries: they carry no
// information about which file answers a question.
var stopWords = map[string]bool{}

func init() {
	for w := range strings.FieldsSeq(`a an and are as at be by can do does did for from how i if in into is it
	its me my of on or so that the their them then there these this to was what when where which who why will
	with you your we our use using used want need get go golang file files code find show tell way there's does`) {
		stopWords[w] = true
	}
}

// QueryTokens returns the distinct full-text tokens of a query, without
// stop words (unless only stop words remain), at most MaxQueryTokens.
func QueryTokens(q string) []string {
	seen := map[string]bool{}
	var all, kept []string
	Words(q, func(w string) {
		if seen[w] || utf8.RuneCountInString(w) > 64 {
			return
		}
		seen[w] = true
		all = append(all, w)
		if !stopWords[w] {
			kept = append(kept, w)
		}
	})
	if len(kept) == 0 {
		kept = all
	}
	if len(kept) > MaxQueryTokens {
		kept = kept[:MaxQueryTokens]
	}
	return kept
}

// QuoteFTS quotes s as one FTS5 string (Query.String renders trigram
// queries in this syntax).
func QuoteFTS(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// TagWords splits a tag query into its words the way seed 000 counts them:
// whitespace-separated, lower-cased.
func TagWords(text string) []string {
	return strings.Fields(strings.ToLower(text))
}
