package postings

import (
	"math/bits"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/semfs/semfs/index"
)

// MaxTermBytes is the longest term: longer words are cut to their first
// MaxTermBytes bytes (even inside a rune), as FTS5 cuts every token at
// FTS5_MAX_TOKEN_SIZE. No query reaches such a term (index.QueryTokens
// drops words over 64 runes), so the cut only bounds the memory a base64
// blob or minified line costs, and keeps the token stream FTS5's.
const MaxTermBytes = 32768

// term turns a folded word into its term: cut at MaxTermBytes, then
// stemmed (in place).
func term(w []byte) []byte {
	if len(w) > MaxTermBytes {
		return w[:MaxTermBytes]
	}
	return Stem(w)
}

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
	words(text, func(w []byte) { emit(term(w)) })
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
	var t index.Tokenizer
	t.WordBytes(text, func(w []byte) { foldWord(w, emit) })
}

// foldWord calls emit with the folded words of w, a word of
// index.IndexText: w itself when it is ASCII, already folded.
func foldWord(w []byte, emit func(w []byte)) {
	for _, c := range w {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			words(string(w), emit)
			return
		}
	}
	emit(w)
}

// TextTerms returns the terms of index.IndexText(text) (see Analyze).
func TextTerms(text string) []string {
	var out []string
	rawWords(text, func(w []byte) { out = append(out, string(term(w))) })
	return out
}

// Analyzer is Analyze with a cache of stems: source code and prose repeat
// their words, and stemming is most of the cost of analysis. It numbers
// the distinct terms it has seen, so that counting a document's terms
// (TextDoc) costs one map lookup per word. Raw text (TextBuilder.AddRaw)
// is cached a level up, by runs of word runes as they stand in the text:
// a repeated identifier costs one lookup for all its terms, and is
// neither split, lower-cased nor folded again. An Analyzer is not safe
// for concurrent use.
type Analyzer struct {
	words   map[string]int32 // folded word → term number
	ids     map[string]int32 // term → term number
	terms   []string         // term number → term
	runs    runCache         // raw run → term numbers of its words
	short   shortRuns        // the same for runs of at most 8 bytes, keyed by their bytes as one word
	stems   runCache         // folded word → term number, for runs missed
	tok     index.Tokenizer  // splits the runs missed
	stem    []byte           // a copy of a word to stem in place
	scratch []int32          // the term numbers of a run not cached

	tf   []TF    // per term number: frequencies in the current document
	seen []int32 // term numbers of the current document

	// pinned keeps term numbers for the Analyzer's life (a TextBuilder
	// indexes its lists by them); only the word cache starts over.
	pinned bool
}

// maxStems bounds an Analyzer's cache; it starts over when full (TextDoc
// only between documents).
const maxStems = 1 << 16

// reset empties the caches when they are full (or were never made). Term
// numbers change only when the Analyzer is not pinned, and then the run
// cache, which holds them, starts over too.
func (a *Analyzer) reset() {
	if a.runs.n >= maxRuns {
		a.runs.clear()
	}
	if a.short.n >= maxRuns {
		a.short.clear()
	}
	if a.stems.n >= maxStems {
		a.stems.clear()
	}
	if a.words != nil && len(a.words) < maxStems {
		return
	}
	a.words = make(map[string]int32, 1024)
	if a.ids == nil || !a.pinned {
		a.ids = make(map[string]int32, 1024)
		a.terms, a.tf = a.terms[:0], a.tf[:0]
		a.runs.clear()
		a.short.clear()
		a.stems.clear()
	}
}

// termID returns the number of term t.
func (a *Analyzer) termID(t string) int32 {
	if id, ok := a.ids[t]; ok {
		return id
	}
	return a.newTerm(t)
}

// newTerm numbers t, a term a.ids does not hold.
func (a *Analyzer) newTerm(t string) int32 {
	id := int32(len(a.terms))
	a.ids[t] = id
	a.terms = append(a.terms, t)
	a.tf = append(a.tf, TF{})
	return id
}

// wordID returns the number of the term of folded word w.
func (a *Analyzer) wordID(w []byte) int32 {
	if id, ok := a.words[string(w)]; ok {
		return id
	}
	word := string(w)
	t := string(term(w))
	if t == word {
		t = word
	}
	id := a.termID(t)
	a.words[word] = id
	return id
}

// Each calls emit with each term of text, as Analyze does. Text split at
// spaces gives the same terms piece by piece (a space separates terms),
// and a piece of lower-case ASCII letters and digits, as nearly every
// word of index.IndexText is, is a folded word already; one of digits
// only is its own term (Stem changes letters only), taken from text
// without a lookup: a path's numbers (ids, dates) seldom repeat, and
// would fill the cache for nothing.
func (a *Analyzer) Each(text string, emit func(term string)) {
	for len(text) > 0 {
		w := text
		if i := strings.IndexByte(text, ' '); i >= 0 {
			w, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		switch foldedASCII(w) {
		case asciiDigits:
			emit(w)
		case asciiWord:
			a.reset()
			emit(a.terms[a.wordIDString(w)])
		default:
			words(w, func(w []byte) {
				a.reset()
				emit(a.terms[a.wordID(w)])
			})
		}
	}
}

// foldedASCII classifies w for Each.
func foldedASCII(w string) int {
	if len(w) == 0 || len(w) > MaxTermBytes {
		return asciiOther
	}
	digits := true
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case '0' <= c && c <= '9':
		case 'a' <= c && c <= 'z':
			digits = false
		default:
			return asciiOther
		}
	}
	if digits {
		return asciiDigits
	}
	return asciiWord
}

const (
	asciiOther  = iota // anything else: split and fold it (words)
	asciiWord          // lower-case ASCII letters and digits
	asciiDigits        // ASCII digits only
)

// wordIDString is wordID of a folded word given as a string.
func (a *Analyzer) wordIDString(w string) int32 {
	if id, ok := a.words[w]; ok {
		return id
	}
	return a.wordID([]byte(w))
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
	if raw {
		// The runs of body as index.NextRun finds them, scanned here while
		// they are ASCII.
		for i := 0; i < len(body); {
			class := runByte[body[i]]
			if class == runSep {
				i++
				continue
			}
			start, end := i, i
			for end < len(body) && runByte[body[end]] == runWord {
				end++
			}
			if end < len(body) && runByte[body[end]] == runMulti {
				if start, end = index.NextRun(body, start); start == end {
					break
				}
			}
			i = end
			var ids []int32
			if end-start <= 8 {
				var one int32
				if one, ids = a.shortIDs(body, start, end-start); one >= 0 {
					// A run of one word, nearly every run.
					tf := &a.tf[one]
					if *tf == (TF{}) {
						a.seen = append(a.seen, one)
					}
					tf.Body++
					n++
					continue
				}
			} else {
				ids = a.runIDs(body[start:end])
			}
			for _, id := range ids {
				tf := &a.tf[id]
				if *tf == (TF{}) {
					a.seen = append(a.seen, id)
				}
				tf.Body++
				n++
			}
		}
		return n
	}
	words(body, func(w []byte) {
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

// runIDs returns the term numbers of the words of run, a run of word
// runes of raw text (index.NextRun); the caller must not keep the slice.
func (a *Analyzer) runIDs(run string) []int32 {
	c := &a.runs
	h := hashString(run)
	slot, ids, ok := c.find(run, h)
	if ok {
		return ids
	}
	if len(run) > maxRunBytes || c.n >= maxRuns {
		a.scratch = a.scratch[:0]
		a.tok.WordBytes(run, func(w []byte) {
			foldWord(w, func(w []byte) { a.scratch = append(a.scratch, a.stemID(w)) })
		})
		return a.scratch
	}
	e := c.open(run)
	a.tok.WordBytes(run, func(w []byte) {
		foldWord(w, func(w []byte) { c.add(a.stemID(w)) })
	})
	return c.close(slot, h, e)
}

// shortIDs is runIDs of body[start:start+n], a run of at most 8 bytes
// (most words are), through a.short: the run's bytes, loaded as one
// word, are its key, so a lookup hashes and compares one integer. A run
// of one word gives its number as one (and no ids), any other -1 and
// its numbers.
func (a *Analyzer) shortIDs(body string, start, n int) (one int32, ids []int32) {
	var k uint64
	if start+8 <= len(body) {
		k = le64(body[start:])
	} else {
		for i := n - 1; i >= 0; i-- {
			k = k<<8 | uint64(body[start+i])
		}
	}
	// A run holds no zero byte: the zero bytes above it tell its length,
	// and no key is 0.
	k &= shortMask[n]
	c := &a.short
	if c.slots == nil {
		c.slots = make([]shortSlot, 4096)
	}
	mask := len(c.slots) - 1
	for i := int(k*0x9e3779b97f4a7c15>>32) & mask; ; i = (i + 1) & mask {
		sl := &c.slots[i]
		if sl.key == k {
			if sl.n == 1 {
				return int32(sl.off), nil
			}
			return -1, c.ids[sl.off : sl.off+sl.n]
		}
		if sl.key != 0 {
			continue
		}
		ids := a.runIDs(body[start : start+n])
		if c.n >= maxRuns {
			if len(ids) == 1 {
				return ids[0], nil
			}
			return -1, ids
		}
		*sl = shortSlot{key: k, n: uint32(len(ids))}
		if len(ids) == 1 {
			sl.off = uint32(ids[0])
		} else {
			sl.off = uint32(len(c.ids))
			c.ids = append(c.ids, ids...)
		}
		if c.n++; 2*c.n > len(c.slots) {
			c.grow()
		}
		if len(ids) == 1 {
			return ids[0], nil
		}
		return -1, ids
	}
}

// shortMask keeps the first n bytes of a word.
var shortMask = [9]uint64{0, 1<<8 - 1, 1<<16 - 1, 1<<24 - 1, 1<<32 - 1, 1<<40 - 1, 1<<48 - 1, 1<<56 - 1, 1<<64 - 1}

// shortRuns maps runs of at most 8 bytes, each packed into one word
// (shortIDs), to term numbers: an open-addressing table, at most half
// full, whose numbers are in one arena.
type shortRuns struct {
	slots []shortSlot
	ids   []int32
	n     int
}

type shortSlot struct {
	key    uint64 // 0: empty
	off, n uint32 // the numbers: ids[off:off+n], or off itself when n is 1
}

func (c *shortRuns) clear() {
	clear(c.slots)
	c.ids, c.n = c.ids[:0], 0
}

// grow doubles the table, placing each key again.
func (c *shortRuns) grow() {
	old := c.slots
	c.slots = make([]shortSlot, 2*len(old))
	mask := len(c.slots) - 1
	for _, sl := range old {
		if sl.key == 0 {
			continue
		}
		i := int(sl.key*0x9e3779b97f4a7c15>>32) & mask
		for c.slots[i].key != 0 {
			i = (i + 1) & mask
		}
		c.slots[i] = sl
	}
}

// stemID is wordID through the byte-keyed table a.stems: no string is
// made for a word, only for a new term.
func (a *Analyzer) stemID(w []byte) int32 {
	if len(w) > maxRunBytes {
		return a.termBytesID(term(w)) // not stemmed (Stem), and rare
	}
	c := &a.stems
	// The string shares w's bytes only while find and open read them.
	word := unsafe.String(unsafe.SliceData(w), len(w))
	h := hashString(word)
	slot, ids, ok := c.find(word, h)
	if ok {
		return ids[0]
	}
	a.stem = append(a.stem[:0], w...)
	id := a.termBytesID(term(a.stem))
	if c.n < maxStems {
		e := c.open(word)
		c.add(id)
		c.close(slot, h, e)
	}
	return id
}

// termBytesID is termID of string(t), making that string only for a new
// term.
func (a *Analyzer) termBytesID(t []byte) int32 {
	if id, ok := a.ids[string(t)]; ok {
		return id
	}
	return a.newTerm(string(t))
}

// runByte classifies bytes for count's scan of runs as index.NextRun
// does: an ASCII byte NextRun takes for a run of its own is runWord, any
// other ASCII byte runSep; bytes of multi-byte runes are runMulti (count
// asks NextRun about those).
var runByte = func() (t [256]uint8) {
	for c := range t {
		switch start, end := index.NextRun(string(rune(c)), 0); {
		case c >= utf8.RuneSelf:
			t[c] = runMulti
		case end-start == 1:
			t[c] = runWord
		}
	}
	return t
}()

const (
	runSep = iota
	runWord
	runMulti
)

// maxRuns bounds the runs an Analyzer caches (see reset), maxRunBytes the
// length of one (and of a cached word): longer runs are rare and seldom
// repeat.
const (
	maxRuns     = 1 << 16
	maxRunBytes = 64
)

// runCache maps short keys (runs of raw text, or folded words) to term
// numbers. It is an open-addressing table, at most half full, of 8-byte
// slots naming entries, whose keys and numbers are in two arenas: a
// lookup hashes the key once, allocates nothing, and reads one slot, one
// entry and the key.
type runCache struct {
	slots []uint64   // low 32 bits of the key's hash (its tag) <<32 | entry number+1; 0 is empty
	ents  []runEntry // by entry number
	keys  []byte     // the entries' keys, one after the other
	ids   []int32    // the entries' numbers, one after the other
	n     int        // entries
}

// runEntry is where an entry's key and numbers are in their arenas.
type runEntry struct {
	key, ids   uint32
	klen, nids uint8
}

func (c *runCache) clear() {
	clear(c.slots)
	c.ents, c.keys, c.ids, c.n = c.ents[:0], c.keys[:0], c.ids[:0], 0
}

// find returns the numbers of key, whose hash is h, or the empty slot
// where key belongs.
func (c *runCache) find(key string, h uint64) (slot int, ids []int32, ok bool) {
	if c.slots == nil {
		c.slots = make([]uint64, 4096)
	}
	mask := len(c.slots) - 1
	tag := uint32(h)
	for i := int(tag) & mask; ; i = (i + 1) & mask {
		s := c.slots[i]
		if s == 0 {
			return i, nil, false
		}
		if uint32(s>>32) != tag {
			continue
		}
		e := c.ents[uint32(s)-1]
		if int(e.klen) == len(key) && string(c.keys[e.key:e.key+uint32(e.klen)]) == key {
			return i, c.ids[e.ids : e.ids+uint32(e.nids)], true
		}
	}
}

// open starts the entry of key (at most maxRunBytes long), returning its
// number; add appends its numbers, and close puts it in the empty slot
// find returned for it.
func (c *runCache) open(key string) int {
	c.ents = append(c.ents, runEntry{key: uint32(len(c.keys)), ids: uint32(len(c.ids)), klen: uint8(len(key))})
	c.keys = append(c.keys, key...)
	return len(c.ents) - 1
}

func (c *runCache) add(id int32) { c.ids = append(c.ids, id) }

// close ends entry e and returns its numbers.
func (c *runCache) close(slot int, h uint64, e int) []int32 {
	ent := &c.ents[e]
	ids := c.ids[ent.ids:]
	ent.nids = uint8(len(ids))
	c.slots[slot] = h<<32 | uint64(e+1)
	c.n++
	if 2*c.n > len(c.slots) {
		c.grow()
	}
	return ids
}

// grow doubles the table, placing each entry again by its tag.
func (c *runCache) grow() {
	old := c.slots
	c.slots = make([]uint64, 2*len(old))
	mask := len(c.slots) - 1
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := int(s>>32) & mask
		for c.slots[i] != 0 {
			i = (i + 1) & mask
		}
		c.slots[i] = s
	}
}

// hashString hashes s for runCache (wyhash's mixing of its first and
// last bytes, 8 at a time); runCache uses its low 32 bits.
func hashString(s string) uint64 {
	const k0, k1, k2 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db, 0x8ebc6af09c88c6e3
	n := len(s)
	var a, b uint64
	switch {
	case n > 16:
		h := uint64(k0)
		for i := 0; i+16 < n; i += 16 {
			h = mix(le64(s[i:])^k1, le64(s[i+8:])^h)
		}
		a, b = le64(s[n-16:])^h, le64(s[n-8:])
	case n >= 8:
		a, b = le64(s), le64(s[n-8:])
	case n >= 4:
		a, b = uint64(le32(s)), uint64(le32(s[n-4:]))
	case n > 0:
		a = uint64(s[0])<<16 | uint64(s[n>>1])<<8 | uint64(s[n-1])
	}
	return mix(a^k1^uint64(n), b^k2)
}

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func le32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// Terms returns the terms of text (see Analyze) as strings. It stems
// through a pooled Analyzer's cache and returns the cached strings: a
// store calls it for the path of every file it indexes, and a path's
// words (directory names, extensions) repeat from file to file.
func Terms(text string) []string {
	a := termsAnalyzers.Get().(*Analyzer)
	defer termsAnalyzers.Put(a)
	out := make([]string, 0, strings.Count(text, " ")+1) // index.IndexText's words, nearly always
	a.Each(text, func(t string) { out = append(out, t) })
	if len(out) == 0 {
		return nil
	}
	return out
}

var termsAnalyzers = sync.Pool{New: func() any { return new(Analyzer) }}

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
