package index

import (
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Query is a boolean query over trigrams: a file whose folded text contains
// the trigrams the query requires may match the pattern it was planned from;
// a file that does not cannot. The zero Op is QAll (matches every file).
type Query struct {
	Op       QueryOp
	Trigrams []string // QAnd: all required; QOr: any
	Sub      []*Query // QAnd: all; QOr: any
}

// QueryOp is the kind of a Query node.
type QueryOp int

const (
	QAll  QueryOp = iota // every file
	QNone                // no file
	QAnd
	QOr
)

var (
	allQuery  = &Query{Op: QAll}
	noneQuery = &Query{Op: QNone}
)

// maxExact bounds the set of exact strings tracked per regexp node before
// it is turned into a trigram query.
const maxExact = 32

// PlanGrep turns a Go regexp (RE2 syntax) into a trigram query whose
// matches are a superset of the files containing a match. Literal text is
// folded to lower case (the trigram index is case-insensitive). It returns
// ok=false when the pattern yields no usable trigram, and an error when it
// does not parse.
func PlanGrep(pattern string, fixed, ignoreCase bool) (q *Query, ok bool, err error) {
	if fixed {
		q = andTrigrams(foldLiteral(pattern))
		return q, q.Op != QAll, nil
	}
	flags := syntax.Perl
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	re, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, false, err
	}
	re = re.Simplify()
	in := analyze(re)
	q = in.query()
	return q, q.Op != QAll, nil
}

// info is what one regexp node tells about the strings it matches: either
// the complete (folded) set of them (exact != nil), or a necessary
// trigram condition (q).
type info struct {
	exact []string
	q     *Query
}

func (i info) query() *Query {
	if i.exact != nil {
		return exactQuery(i.exact)
	}
	return i.q
}

func anyInfo() info { return info{q: allQuery} }

func analyze(re *syntax.Regexp) info {
	switch re.Op {
	case syntax.OpNoMatch:
		return info{q: noneQuery}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return info{exact: []string{""}}
	case syntax.OpLiteral:
		return info{exact: []string{foldLiteral(string(re.Rune))}}
	case syntax.OpCharClass:
		// Small classes become exact alternatives; large ones match anything.
		n := 0
		for i := 0; i+1 < len(re.Rune); i += 2 {
			n += int(re.Rune[i+1]-re.Rune[i]) + 1
			if n > 8 {
				return anyInfo()
			}
		}
		var set []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				set = append(set, foldLiteral(string(r)))
			}
		}
		return info{exact: dedupe(set)}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return anyInfo()
	case syntax.OpCapture:
		return analyze(re.Sub[0])
	case syntax.OpStar, syntax.OpQuest:
		return anyInfo()
	case syntax.OpRepeat:
		if re.Min == 0 {
			return anyInfo()
		}
		// x{n,m} contains at least one x.
		return info{q: analyze(re.Sub[0]).query()}
	case syntax.OpPlus:
		return info{q: analyze(re.Sub[0]).query()}
	case syntax.OpConcat:
		cur := info{exact: []string{""}}
		for _, sub := range re.Sub {
			cur = concat(cur, analyze(sub))
		}
		return cur
	case syntax.OpAlternate:
		var set []string
		var qs []*Query
		allExact := true
		for _, sub := range re.Sub {
			in := analyze(sub)
			if in.exact != nil && allExact {
				set = append(set, in.exact...)
			} else {
				allExact = false
			}
			qs = append(qs, in.query())
		}
		if allExact && len(set) <= maxExact {
			return info{exact: dedupe(set)}
		}
		return info{q: or(qs...)}
	}
	return anyInfo()
}

func concat(a, b info) info {
	if a.exact != nil && b.exact != nil && len(a.exact)*len(b.exact) <= maxExact {
		out := make([]string, 0, len(a.exact)*len(b.exact))
		for _, x := range a.exact {
			for _, y := range b.exact {
				out = append(out, x+y)
			}
		}
		return info{exact: dedupe(out)}
	}
	return info{q: and(a.query(), b.query())}
}

// foldLiteral lower-cases s the way the index folds text. Runes whose case
// folding leaves ASCII (the Kelvin sign, the long s) are kept as they are;
// trigrams holding non-ASCII runes are not used (see trigrams).
func foldLiteral(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x80 {
			return unicode.ToLower(r)
		}
		return r
	}, s)
}

// trigrams returns the distinct ASCII trigrams of s. A trigram holding a
// byte outside printable ASCII is skipped: the index folds Unicode case its
// own way, and skipping only weakens the filter.
func trigrams(s string) []string {
	var out []string
	for i := 0; i+3 <= len(s); i++ {
		t := s[i : i+3]
		if t[0] < 0x20 || t[0] >= 0x7f || t[1] < 0x20 || t[1] >= 0x7f || t[2] < 0x20 || t[2] >= 0x7f {
			continue
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func andTrigrams(s string) *Query {
	t := trigrams(s)
	if len(t) == 0 {
		return allQuery
	}
	return &Query{Op: QAnd, Trigrams: t}
}

func exactQuery(set []string) *Query {
	qs := make([]*Query, 0, len(set))
	for _, s := range set {
		qs = append(qs, andTrigrams(s))
	}
	return or(qs...)
}

func and(qs ...*Query) *Query {
	out := &Query{Op: QAnd}
	for _, q := range qs {
		switch q.Op {
		case QAll:
			continue
		case QNone:
			return noneQuery
		case QAnd:
			for _, t := range q.Trigrams {
				if !slices.Contains(out.Trigrams, t) {
					out.Trigrams = append(out.Trigrams, t)
				}
			}
			out.Sub = append(out.Sub, q.Sub...)
		default:
			out.Sub = append(out.Sub, q)
		}
	}
	if len(out.Trigrams) == 0 && len(out.Sub) == 0 {
		return allQuery
	}
	if len(out.Trigrams) == 0 && len(out.Sub) == 1 {
		return out.Sub[0]
	}
	return out
}

func or(qs ...*Query) *Query {
	out := &Query{Op: QOr}
	for _, q := range qs {
		switch q.Op {
		case QAll:
			return allQuery
		case QNone:
			continue
		case QOr:
			out.Trigrams = append(out.Trigrams, q.Trigrams...)
			out.Sub = append(out.Sub, q.Sub...)
		case QAnd:
			if len(q.Trigrams) == 1 && len(q.Sub) == 0 {
				out.Trigrams = append(out.Trigrams, q.Trigrams[0])
			} else {
				out.Sub = append(out.Sub, q)
			}
		}
	}
	if len(out.Trigrams) == 0 && len(out.Sub) == 0 {
		return noneQuery
	}
	if len(out.Trigrams) == 0 && len(out.Sub) == 1 {
		return out.Sub[0]
	}
	if len(out.Trigrams) == 1 && len(out.Sub) == 0 {
		return &Query{Op: QAnd, Trigrams: out.Trigrams}
	}
	return out
}

func dedupe(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// FTS renders q as an FTS5 MATCH expression over a trigram table, every
// trigram quoted. QAll and QNone render as "" (the caller handles them).
func (q *Query) FTS() string {
	switch q.Op {
	case QAnd, QOr:
		sep := " AND "
		if q.Op == QOr {
			sep = " OR "
		}
		var parts []string
		for _, t := range q.Trigrams {
			parts = append(parts, QuoteFTS(t))
		}
		for _, s := range q.Sub {
			if f := s.FTS(); f != "" {
				parts = append(parts, "("+f+")")
			}
		}
		return strings.Join(parts, sep)
	}
	return ""
}

// String renders q for debugging and tests.
func (q *Query) String() string {
	switch q.Op {
	case QAll:
		return "+"
	case QNone:
		return "-"
	}
	return q.FTS()
}

// GrepTrigrams calls fn once for each distinct trigram of text as the grep
// prefilter sees it: ASCII folded to lower case, each of the three bytes
// printable ASCII (PlanGrep never asks for another). The Kelvin sign and
// the long s count as the ASCII letters they case-fold to, because a
// case-insensitive pattern "k" or "s" matches them. The trigram is packed
// as b0<<14 | b1<<7 | b2.
func GrepTrigrams(text string, fn func(t uint32)) {
	seen := triSeenPool.Get().(*triSeen)
	defer triSeenPool.Put(seen)
	seen.set = seen.add(seen.set[:0], text)
	for _, t := range seen.set {
		fn(t)
	}
}

// AppendGrepTrigrams appends the trigrams GrepTrigrams gives for text to
// dst, in the same order, and returns the extended slice: an indexer
// collecting them calls no function per trigram.
func AppendGrepTrigrams(dst []uint32, text string) []uint32 {
	seen := triSeenPool.Get().(*triSeen)
	defer triSeenPool.Put(seen)
	return seen.add(dst, text)
}

// add appends the distinct trigrams of text (see GrepTrigrams) to dst,
// and leaves s clear. It reserves room for every trigram first, so that
// the loop, one table lookup and one bitmap test per byte, stores into a
// slice that does not grow.
func (s *triSeen) add(dst []uint32, text string) []uint32 {
	start := len(dst)
	dst = slices.Grow(dst, min(len(text), maxTrigrams))
	out := dst[:cap(dst)]
	n := start
	var w uint32 // the last three folded bytes, one per 7 bits
	valid := 0   // how many of them are printable ASCII (3 or more: w is a trigram)
	for i := 0; i < len(text); i++ {
		f := triFold[text[i]]
		if f-1 >= 0x7f { // 0: not printable ASCII; triMulti: a byte of a multi-byte rune
			var skip int
			if f, skip = triRune(text[i:]); f == 0 {
				valid = 0
				continue
			}
			i += skip
		}
		w = (w<<7 | uint32(f)) & (1<<21 - 1)
		if valid++; valid < 3 {
			continue
		}
		if word, bit := w>>6, uint64(1)<<(w&63); s.bits[word]&bit == 0 {
			s.bits[word] |= bit
			out[n] = w
			n++
		}
	}
	dst = out[:n]
	for _, t := range dst[start:] {
		s.bits[t>>6] = 0
	}
	return dst
}

// triRune is how add folds text's first byte when the table has no
// printable ASCII for it: the Kelvin sign and the long s count as the
// ASCII letters they case-fold to (f, and the bytes to skip after the
// first); anything else breaks trigrams (f is 0). Out of add's loop,
// whose registers it would otherwise take.
//
//go:noinline
func triRune(text string) (f byte, skip int) {
	switch {
	case strings.HasPrefix(text, "\u212a"): // Kelvin sign
		return 'k', len("\u212a") - 1
	case strings.HasPrefix(text, "\u017f"): // long s
		return 's', len("\u017f") - 1
	}
	return 0, 0
}

// maxTrigrams bounds the distinct trigrams of a text (add's reservation):
// three bytes of 7 bits.
const maxTrigrams = 1 << 21

// triFold maps a byte to itself folded to lower case when it is printable
// ASCII, to triMulti when it may start a multi-byte rune (the Kelvin sign
// and the long s count as ASCII letters), else to 0 (it breaks trigrams).
var triFold = func() (t [256]byte) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = byte(unicode.ToLower(rune(c)))
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = triMulti
	}
	return t
}()

const triMulti = 0x80

// triSeen is a bitmap over all packed trigrams (256 KiB), clear between
// calls, and a list for GrepTrigrams, reused across calls so that a call
// costs what its text does.
type triSeen struct {
	bits [1 << 21 / 64]uint64
	set  []uint32
}

var triSeenPool = sync.Pool{New: func() any { return new(triSeen) }}

// PackTrigram packs a three-byte trigram as GrepTrigrams does.
func PackTrigram(t string) uint32 {
	return uint32(t[0]&0x7f)<<14 | uint32(t[1]&0x7f)<<7 | uint32(t[2]&0x7f)
}
