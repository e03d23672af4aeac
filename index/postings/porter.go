package postings

import "slices"

// Stem applies the Porter stemming algorithm (M.F. Porter, "An algorithm
// for suffix stripping", Program 14(3), 1980, in the revision Porter
// published with his reference implementation: "bli" → "ble" and
// "logi" → "log" in step 2) to the lower-case word w in place and returns
// the stem, a prefix of w possibly with a few bytes rewritten. Bytes other
// than ASCII letters count as consonants. Words shorter than 3 or longer
// than 64 bytes are returned unchanged, as SQLite FTS5's porter tokenizer
// does; Analyze depends on matching that tokenizer exactly.
func Stem(w []byte) []byte {
	if len(w) < 3 || len(w) > 64 {
		return w
	}
	s := stemmer{b: w}
	s.step1ab()
	s.step1c()
	s.step2()
	s.step3()
	s.step4()
	s.step5()
	return s.b
}

type stemmer struct {
	b []byte
}

// consMask has bit i set when b[i] is a consonant: not a, e, i, o, u,
// and not a y that follows a consonant. A byte's status depends only on
// the bytes before it, so the mask of a word serves every prefix of it.
// Words are at most 64 bytes (see Stem).
func consMask(b []byte) uint64 {
	var m uint64
	prev := false
	for i, c := range b {
		var cons bool
		switch c {
		case 'a', 'e', 'i', 'o', 'u':
			cons = false
		case 'y':
			cons = i == 0 || !prev
		default:
			cons = true
		}
		if cons {
			m |= 1 << i
		}
		prev = cons
	}
	return m
}

func cons(b []byte, i int) bool { return consMask(b[:i+1])&(1<<i) != 0 }

// measure is m of the stem b: the number of vowel-consonant sequences in
// [C](VC)^m[V].
func measure(b []byte) int {
	m := consMask(b)
	n, i := 0, 0
	for i < len(b) && m&(1<<i) != 0 {
		i++
	}
	for i < len(b) {
		for i < len(b) && m&(1<<i) == 0 {
			i++
		}
		if i == len(b) {
			break
		}
		for i < len(b) && m&(1<<i) != 0 {
			i++
		}
		n++
	}
	return n
}

func hasVowel(b []byte) bool {
	m := consMask(b)
	return m != 1<<len(b)-1
}

// doubleCons reports whether b ends with two equal consonants.
func doubleCons(b []byte) bool {
	n := len(b)
	return n >= 2 && b[n-1] == b[n-2] && consMask(b)&(1<<(n-1)) != 0
}

// cvc reports whether b ends consonant-vowel-consonant with the last
// consonant not w, x or y (the *o condition).
func cvc(b []byte) bool {
	n := len(b)
	if n < 3 {
		return false
	}
	m := consMask(b)
	if m>>(n-3)&7 != 0b101 {
		return false
	}
	c := b[n-1]
	return c != 'w' && c != 'x' && c != 'y'
}

func (s *stemmer) ends(suf string) bool {
	n := len(s.b)
	return n > len(suf) && string(s.b[n-len(suf):]) == suf
}

// stem is the word without a suffix of n bytes.
func (s *stemmer) stem(n int) []byte { return s.b[:len(s.b)-n] }

// replace swaps the suffix of n bytes for r.
func (s *stemmer) replace(n int, r string) {
	s.b = append(s.b[:len(s.b)-n], r...)
}

func (s *stemmer) step1ab() {
	switch {
	case s.ends("sses"):
		s.replace(4, "ss")
	case s.ends("ies"):
		s.replace(3, "i")
	case s.ends("ss"):
	case s.ends("s"):
		s.replace(1, "")
	}
	var cut int
	switch {
	case s.ends("eed"):
		if measure(s.stem(3)) > 0 {
			s.replace(3, "ee")
		}
		return
	case s.ends("ed") && hasVowel(s.stem(2)):
		cut = 2
	case s.ends("ing") && hasVowel(s.stem(3)):
		cut = 3
	default:
		return
	}
	s.replace(cut, "")
	switch {
	case s.ends("at"):
		s.replace(2, "ate")
	case s.ends("bl"):
		s.replace(2, "ble")
	case s.ends("iz"):
		s.replace(2, "ize")
	case doubleCons(s.b):
		if c := s.b[len(s.b)-1]; c != 'l' && c != 's' && c != 'z' {
			s.b = s.b[:len(s.b)-1]
		}
	case measure(s.b) == 1 && cvc(s.b):
		s.replace(0, "e")
	}
}

func (s *stemmer) step1c() {
	if s.ends("y") && hasVowel(s.stem(1)) {
		s.b[len(s.b)-1] = 'i'
	}
}

// rule is one suffix rewrite of steps 2 to 4.
type rule struct{ suf, to string }

var step2Rules = []rule{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"}, {"izer", "ize"},
	{"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"},
	{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}, {"alism", "al"}, {"iveness", "ive"},
	{"fulness", "ful"}, {"ousness", "ous"}, {"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
	{"logi", "log"},
}

var step3Rules = []rule{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"}, {"ical", "ic"}, {"ful", ""}, {"ness", ""},
}

var step4Rules = []rule{
	{"al", ""}, {"ance", ""}, {"ence", ""}, {"er", ""}, {"ic", ""}, {"able", ""}, {"ible", ""}, {"ant", ""},
	{"ement", ""}, {"ment", ""}, {"ent", ""}, {"ion", ""}, {"ou", ""}, {"ism", ""}, {"ate", ""}, {"iti", ""},
	{"ous", ""}, {"ive", ""}, {"ize", ""},
}

// ruleTable holds rules by the last byte of their suffix, longest suffix
// first, so that the first rule whose suffix ends a word is the longest
// one (the paper's rule for choosing among matching suffixes).
type ruleTable [256][]rule

func newRuleTable(rules []rule) *ruleTable {
	var t ruleTable
	for _, r := range rules {
		c := r.suf[len(r.suf)-1]
		t[c] = append(t[c], r)
	}
	for i := range t {
		slices.SortStableFunc(t[i], func(a, b rule) int { return len(b.suf) - len(a.suf) })
	}
	return &t
}

var (
	step2Table = newRuleTable(step2Rules)
	step3Table = newRuleTable(step3Rules)
	step4Table = newRuleTable(step4Rules)
)

func (s *stemmer) step2() { s.applyLongest(step2Table, 0) }
func (s *stemmer) step3() { s.applyLongest(step3Table, 0) }

// step4 removes a suffix when the measure of the rest is above 1; "ion"
// only after s or t.
func (s *stemmer) step4() {
	r, ok := s.longest(step4Table)
	if !ok {
		return
	}
	rest := s.stem(len(r.suf))
	if measure(rest) <= 1 {
		return
	}
	if r.suf == "ion" {
		if c := rest[len(rest)-1]; c != 's' && c != 't' {
			return
		}
	}
	s.replace(len(r.suf), r.to)
}

// longest returns the rule with the longest suffix ending the word.
func (s *stemmer) longest(t *ruleTable) (rule, bool) {
	for _, r := range t[s.b[len(s.b)-1]] {
		if s.ends(r.suf) {
			return r, true
		}
	}
	return rule{}, false
}

func (s *stemmer) applyLongest(t *ruleTable, min int) {
	if r, ok := s.longest(t); ok && measure(s.stem(len(r.suf))) > min {
		s.replace(len(r.suf), r.to)
	}
}

func (s *stemmer) step5() {
	if s.ends("e") {
		rest := s.stem(1)
		if m := measure(rest); m > 1 || m == 1 && !cvc(rest) {
			s.b = rest
		}
	}
	if s.b[len(s.b)-1] == 'l' && doubleCons(s.b) && measure(s.b) > 1 {
		s.b = s.b[:len(s.b)-1]
	}
}
