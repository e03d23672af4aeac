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
	for len(text) > 0 {
		i := strings.IndexFunc(text, isWordRune)
		if i < 0 {
			return
		}
		text = text[i:]
		j := strings.IndexFunc(text, func(r rune) bool { return !isWordRune(r) })
		if j < 0 {
			j = len(text)
		}
		word := text[:j]
		text = text[j:]
		emitWord(word, fn)
	}
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
	var b strings.Builder
	b.Grow(len(text))
	Words(text, func(w string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	})
	return b.String()
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

// MatchAny builds an FTS5 MATCH expression matching rows with any of
// tokens. Every token is a quoted string (quotes doubled), so FTS syntax in
// user input never reaches the query parser raw. It returns "" for no
// tokens.
func MatchAny(tokens []string) string {
	var b strings.Builder
	for i, t := range tokens {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString(QuoteFTS(t))
	}
	return b.String()
}

// MatchAll builds an FTS5 MATCH expression matching rows with all of
// tokens, each quoted as in MatchAny.
func MatchAll(tokens []string) string {
	q := make([]string, len(tokens))
	for i, t := range tokens {
		q[i] = QuoteFTS(t)
	}
	return strings.Join(q, " AND ")
}

// QuoteFTS quotes s as one FTS5 string.
func QuoteFTS(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// TagWords splits a tag query into its words the way seed 000 counts them:
// whitespace-separated, lower-cased.
func TagWords(text string) []string {
	return strings.Fields(strings.ToLower(text))
}
