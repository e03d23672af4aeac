package glove

import (
	"unicode"
	"unicode/utf8"
)

// Tokenisation turns text into vocabulary rows:
//
//   - A word is a maximal run of letters and digits; everything else
//     (spaces, punctuation, '_', '-', '/', '.') separates words, so
//     snake_case, kebab-case and paths a/b/c.go split into their parts.
//   - Words are lower-cased. A word with inner capitals is looked up whole
//     first ("JavaScript", "GitHub"), else split at its humps: camelCase →
//     camel case, parseHTTPRequest → parse http request.
//   - A short word right after a '.' that follows a letter or digit is a
//     file extension; known ones become what they name (c.go → c, go code;
//     notes.md → notes, markdown).
//   - A word the vocabulary lacks is split into letter and digit runs
//     (utf8 → utf, 8); a plural loses its s (pdfs → pdf); a letters-only
//     word of six or more letters is split into two known words if it can
//     be (loginhandler → login handler).
//   - Unknown one-character words are dropped (the vocabulary has none).
//   - Whatever is still unknown, numbers included, gets a fixed pseudo-random
//     direction hashed from its spelling, so identical unknown identifiers
//     still match each other and nothing else.

// extensions maps file extensions to the vocabulary words they stand for.
var extensions = map[string][]string{
	"go":    {"go", "code"},
	"py":    {"python"},
	"js":    {"javascript"},
	"mjs":   {"javascript"},
	"cjs":   {"javascript"},
	"jsx":   {"javascript"},
	"ts":    {"typescript"},
	"tsx":   {"typescript"},
	"md":    {"markdown"},
	"mdx":   {"markdown"},
	"rs":    {"rust"},
	"rb":    {"ruby"},
	"kt":    {"kotlin"},
	"sh":    {"shell", "script"},
	"bash":  {"shell", "script"},
	"yml":   {"yaml"},
	"txt":   {"text"},
	"c":     {"source", "code"},
	"h":     {"header"},
	"cc":    {"source", "code"},
	"cpp":   {"source", "code"},
	"hpp":   {"header"},
	"java":  {"java"},
	"toml":  {"config"},
	"ini":   {"config"},
	"cfg":   {"config"},
	"conf":  {"config"},
	"env":   {"environment", "config"},
	"jpg":   {"image"},
	"jpeg":  {"image"},
	"png":   {"image"},
	"gif":   {"image"},
	"svg":   {"image"},
	"pdf":   {"pdf", "document"},
	"doc":   {"document"},
	"docx":  {"document"},
	"log":   {"log"},
	"db":    {"database"},
	"sql":   {"sql", "database"},
	"csv":   {"csv", "data"},
	"tsv":   {"data"},
	"jsonl": {"json", "data"},
	"gz":    {"archive"},
	"zip":   {"archive"},
	"tar":   {"archive"},
}

// sink receives the tokens of a text: it sums them into acc, or, for
// Words, lists them. (A concrete type rather than a callback lets the
// compiler keep the word buffer on the stack.)
type sink struct {
	m     *Model
	acc   []float32
	words []string // listed instead of summed when list is set
	list  bool
}

// add takes a vocabulary row, or row -1 and the spelling of an unknown word
// (valid only during the call).
func (s *sink) add(row int, unknown []byte) {
	switch {
	case s.list && row < 0:
		s.words = append(s.words, "?"+string(unknown))
	case s.list:
		s.words = append(s.words, s.m.blob[s.m.offsets[row]:s.m.offsets[row+1]])
	case row < 0:
		s.m.addUnknown(s.acc, unknown)
	default:
		s.m.addRow(s.acc, row)
	}
}

// visit passes each token of text, in order, to fn.
func (m *Model) visit(text string, fn *sink) {
	var buf [64]byte
	for i := 0; i < len(text); {
		r, n := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(text[i:])
		}
		if !isAlnum(r) {
			i += n
			continue
		}
		start := i
		for i < len(text) {
			r, n = rune(text[i]), 1
			if r >= utf8.RuneSelf {
				r, n = utf8.DecodeRuneInString(text[i:])
			}
			if !isAlnum(r) {
				break
			}
			i += n
		}
		ext := start >= 2 && text[start-1] == '.' && text[start-2] < utf8.RuneSelf && isAlnum(rune(text[start-2]))
		m.visitWord(text[start:i], ext, buf[:0], fn)
	}
}

func isAlnum(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// lower appends the lower-case form of w to buf and reports whether w has
// a camel-case boundary (see hump).
func lower(buf []byte, w string) ([]byte, bool) {
	camel := false
	var prev rune
	for i, r := range w {
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				camel = camel || hump(w, i, prev, r)
				buf = append(buf, byte(r+'a'-'A'))
			} else {
				buf = append(buf, byte(r))
			}
		} else {
			camel = camel || hump(w, i, prev, r)
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		}
		prev = r
	}
	return buf, camel
}

// hump reports whether a camel-case word starts at rune r, byte i of w,
// after rune prev: an upper-case letter after a lower-case letter or digit
// (camel|Case, v2|Beta), or the last capital of an acronym when a
// lower-case letter follows (HTTP|Request) — but not a plural acronym
// (PDFs, URLs).
func hump(w string, i int, prev, r rune) bool {
	if i == 0 || !unicode.IsUpper(r) {
		return false
	}
	if unicode.IsLower(prev) || unicode.IsDigit(prev) {
		return true
	}
	if !unicode.IsUpper(prev) {
		return false
	}
	_, n := utf8.DecodeRuneInString(w[i:])
	if i+n >= len(w) {
		return false
	}
	next, m := utf8.DecodeRuneInString(w[i+n:])
	if next == 's' {
		if i+n+m == len(w) {
			return false
		}
		if after, _ := utf8.DecodeRuneInString(w[i+n+m:]); unicode.IsUpper(after) {
			return false
		}
	}
	return unicode.IsLower(next)
}

func (m *Model) visitWord(w string, ext bool, buf []byte, fn *sink) {
	lw, camel := lower(buf, w)
	if ext {
		if rows, ok := m.ext[string(lw)]; ok {
			for _, r := range rows {
				fn.add(r, nil)
			}
			return
		}
	}
	if r := m.lookup(lw); r >= 0 {
		fn.add(r, nil)
		return
	}
	if !camel {
		m.visitPart(lw, fn)
		return
	}
	// Split at the humps and visit each part on its own.
	start := 0
	var prev rune
	for i, r := range w {
		if hump(w, i, prev, r) {
			part, _ := lower(lw[len(lw):], w[start:i])
			m.visitPart(part, fn)
			start = i
		}
		prev = r
	}
	part, _ := lower(lw[len(lw):], w[start:])
	m.visitPart(part, fn)
}

// visitPart handles one lower-case word: vocabulary row, else letter/digit
// runs, else a two-word compound, else unknown.
func (m *Model) visitPart(w []byte, fn *sink) {
	if r := m.lookup(w); r >= 0 {
		fn.add(r, nil)
		return
	}
	letters, digits := false, false
	for _, c := range w {
		if '0' <= c && c <= '9' {
			digits = true
		} else {
			letters = true
		}
	}
	if letters && digits {
		start := 0
		for i := 1; i <= len(w); i++ {
			if i == len(w) || isDigitByte(w[i]) != isDigitByte(w[i-1]) {
				m.visitPart(w[start:i], fn)
				start = i
			}
		}
		return
	}
	if letters && len(w) >= 4 && w[len(w)-1] == 's' {
		// A plural the vocabulary lacks (pdfs, ckpts): its singular.
		if r := m.lookup(w[:len(w)-1]); r >= 0 {
			fn.add(r, nil)
			return
		}
	}
	if letters && len(w) >= 6 {
		if a, b, ok := m.compound(w); ok {
			fn.add(a, nil)
			fn.add(b, nil)
			return
		}
	}
	if len(w) == 1 {
		// The vocabulary has no one-character words ("a", "I", digits);
		// hashing them would give articles and list numbers the weight of
		// rare words.
		return
	}
	fn.add(-1, w)
}

func isDigitByte(c byte) bool { return '0' <= c && c <= '9' }

// compound splits w into two vocabulary words of at least three letters
// each, preferring the most even split.
func (m *Model) compound(w []byte) (a, b int, ok bool) {
	best := 0
	for i := 3; i <= len(w)-3; i++ {
		even := min(i, len(w)-i)
		if even <= best {
			continue
		}
		ra := m.lookup(w[:i])
		if ra < 0 {
			continue
		}
		rb := m.lookup(w[i:])
		if rb < 0 {
			continue
		}
		a, b, ok, best = ra, rb, true, even
	}
	return a, b, ok
}

// Words returns the tokens Embed would use for text: vocabulary words, and
// unknown words prefixed with '?'. It is for tests and diagnostics.
func (m *Model) Words(text string) []string {
	s := sink{m: m, list: true}
	m.visit(text, &s)
	return s.words
}
