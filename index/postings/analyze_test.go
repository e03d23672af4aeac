package postings

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/semfs/semfs/index"
)

// oddTexts exercise the run cache's edges: runs over maxRunBytes, words
// over MaxTermBytes, non-ASCII runs (folded, split or dropped by
// unicode61), identifiers that split, and the same run in other cases.
func oddTexts() []string {
	return []string{
		"parseHTTPRequest parseHttpRequest PARSE_HTTP_REQUEST parse_http_request x86_64 utf8Valid",
		strings.Repeat("abc", 30) + " " + strings.Repeat("aB1", 40) + " " + strings.Repeat("abc", 30),
		strings.Repeat("z", MaxTermBytes+100) + " " + strings.Repeat("z", MaxTermBytes+7) + " zz",
		strings.Repeat("q1", MaxTermBytes) + " " + strings.Repeat("y", MaxTermBytes-1) + "é",
		"Crème brûlée naïve_Façade ÆSIR Ǆemal ǅx İstanbul ΣΊΣΥΦΟΣ straße ﬁne ＡＢＣ x_Ǆ_é_y connections connected",
		"a\u0300b \u0301 K\u212aelvin caféNoir café_noir CAFÉ",
		"", "_", "__", "a", "A1", "1A",
	}
}

// addRawEqualsAdd fails unless a TextBuilder given raw texts through
// AddRaw (the run cache) builds the segment a Builder builds from
// TextDoc of their index.IndexText (the word cache, no runs).
func addRawEqualsAdd(t *testing.T, texts []string) {
	t.Helper()
	var tb TextBuilder
	b := NewBuilder(Text)
	for i, s := range texts {
		path := Terms(index.IndexText(fmt.Sprintf("/notes/doc%d.go", i%5)))
		tb.AddRaw(path, s)
		b.AddText(TextDoc(path, index.IndexText(s)))
	}
	if !slices.Equal(tb.Segment().Encode(), b.Segment().Encode()) {
		for i, s := range texts {
			var a Analyzer
			got := a.TextDoc(nil, index.IndexText(s))
			var raw TextBuilder
			raw.AddRaw(nil, s)
			if uint32(len(got.Terms)) != uint32(len(raw.a.seen)) || got.BodyLen != raw.bodyLen[0] {
				t.Fatalf("text %d (%.40q): AddRaw counts %d terms in %d distinct, TextDoc %d in %d",
					i, s, raw.bodyLen[0], len(raw.a.seen), got.BodyLen, len(got.Terms))
			}
		}
		t.Fatal("AddRaw and Add segments differ")
	}
}

func TestAddRawEqualsAdd(t *testing.T) {
	texts := oddTexts()
	for _, dir := range []string{".", filepath.Join(runtime.GOROOT(), "src", "net")} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.IsDir() {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, string(data))
		}
	}
	if len(texts) < 100 {
		t.Fatalf("only %d texts", len(texts))
	}
	addRawEqualsAdd(t, texts)
}

// The run cache starts over when full, between documents, and keeps
// giving the same terms; term numbers stay (a TextBuilder's lists are
// indexed by them).
func TestAddRawCacheStartsOver(t *testing.T) {
	var texts []string
	for d := range 12 {
		var b strings.Builder
		for i := range maxRuns / 4 {
			fmt.Fprintf(&b, "read%dFile_%d connections %s ", i*7+d, d, []string{"HTTPServer", "parse_it", "Naïve"}[i%3])
		}
		texts = append(texts, b.String())
	}
	addRawEqualsAdd(t, texts)

	var tb TextBuilder
	prev, startedOver := 0, false
	for _, s := range texts {
		tb.AddRaw(nil, s)
		n := tb.a.runs.n
		if n > maxRuns {
			t.Fatalf("run cache holds %d runs", n)
		}
		startedOver = startedOver || n < prev
		prev = n
	}
	if !startedOver {
		t.Fatalf("run cache never started over (%d runs)", prev)
	}
}

// Words over MaxTermBytes are cut there, as FTS5 cuts tokens, also when
// counted through the caches; two words alike in their first
// MaxTermBytes bytes are one term.
func TestLongWordsCut(t *testing.T) {
	long := strings.Repeat("x", MaxTermBytes)
	text := long + "a " + long + "b Short " + long[:100]
	terms := TextTerms(text)
	want := []string{long, long, "short", long[:100]}
	if !slices.Equal(terms, want) {
		t.Fatalf("TextTerms: %d terms, want %d", len(terms), len(want))
	}
	if got := Terms(index.IndexText(text)); !slices.Equal(got, want) {
		t.Fatal("Terms differ from TextTerms")
	}
	var tb TextBuilder
	tb.AddRaw(nil, text)
	if len(tb.a.terms) != 3 || tb.bodyLen[0] != 4 {
		t.Fatalf("TextBuilder: %d terms in %d words, want 3 in 4", len(tb.a.terms), tb.bodyLen[0])
	}
	for _, term := range tb.a.terms {
		if len(term) > MaxTermBytes {
			t.Fatalf("a term of %d bytes", len(term))
		}
	}
}

// runCache finds every key it holds, with its own numbers, also when
// keys share a hash (and so a tag and a probe sequence), and across
// growing; a key it does not hold is not found.
func TestRunCache(t *testing.T) {
	var c runCache
	hash := func(k string) uint64 {
		if len(k)%2 == 0 {
			return 7 // all even-length keys collide
		}
		return hashString(k)
	}
	const n = 3000
	key := func(i int) string { return fmt.Sprintf("k%d", i) + strings.Repeat("_", i%3) }
	for i := range n {
		k := key(i)
		slot, _, ok := c.find(k, hash(k))
		if ok {
			t.Fatalf("%q found before it was added", k)
		}
		e := c.open(k)
		for j := range i % 4 {
			c.add(int32(i*10 + j))
		}
		c.close(slot, hash(k), e)
	}
	if len(c.slots) < 2*n {
		t.Fatalf("%d slots for %d keys", len(c.slots), n)
	}
	for i := range n {
		k := key(i)
		_, ids, ok := c.find(k, hash(k))
		if !ok || len(ids) != i%4 {
			t.Fatalf("%q: found %v with %d numbers", k, ok, len(ids))
		}
		for j, got := range ids {
			if got != int32(i*10+j) {
				t.Fatalf("%q: number %d is %d", k, j, got)
			}
		}
	}
	for _, k := range []string{"k", "k1__", "k3000", "zz", ""} {
		if _, _, ok := c.find(k, hash(k)); ok {
			t.Fatalf("%q found", k)
		}
	}
	c.clear()
	if _, _, ok := c.find("k1", hash("k1")); ok || c.n != 0 {
		t.Fatal("found after clear")
	}
}

// FuzzAddRaw compares AddRaw with Add of index.IndexText on arbitrary
// text, each text run twice so that the second is read from the cache.
func FuzzAddRaw(f *testing.F) {
	for _, s := range oddTexts()[:6] {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { addRawEqualsAdd(t, []string{s, s + " " + strings.ToUpper(s), s}) })
}

// Each (and so Terms) gives Analyze's terms for numbers of every length
// (taken as they stand), words of letters and digits, and text that is
// not split by single spaces or not folded yet.
func TestEachEqualsAnalyze(t *testing.T) {
	var parts []string
	for n := 1; n <= 70; n++ {
		parts = append(parts, strings.Repeat("9", n), strings.Repeat("0123456789", 8)[:n], "ies"+strings.Repeat("1", n))
	}
	parts = append(parts, strings.Repeat("7", MaxTermBytes+3), "running", "x86", "1st", "Running", "naïve", "a-b", "", "  ", "2024\t05", "caféNoir")
	parts = append(parts, oddTexts()...)
	text := strings.Join(parts, " ")
	var want []string
	Analyze(text, func(t []byte) { want = append(want, string(t)) })
	var a Analyzer
	for round := range 2 {
		var got []string
		a.Each(text, func(t string) { got = append(got, t) })
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: Each and Analyze differ (%d vs %d terms)", round, len(got), len(want))
		}
	}
	if got := Terms(text); !slices.Equal(got, want) {
		t.Fatalf("Terms and Analyze differ (%d vs %d terms)", len(got), len(want))
	}
	if got := Terms(" "); got != nil {
		t.Fatalf("Terms of a space: %q", got)
	}
}

// Runs of up to 8 bytes go through the short-run table, also at the end
// of a text (fewer than 8 bytes left to load) and in their thousands,
// when it starts over; a text of them builds the segment Add builds.
func TestShortRunsStartOver(t *testing.T) {
	var texts []string
	for d := range 6 {
		var b strings.Builder
		for i := range maxRuns / 2 {
			fmt.Fprintf(&b, "%s x%dY é%d ", strconv.FormatInt(int64(i*6+d), 36), i%50, i%7)
		}
		b.WriteString("end" + strconv.Itoa(d)) // the last run, short of 8 bytes to load
		texts = append(texts, b.String())
	}
	texts = append(texts, "a", "Ab_1", "abcdefgh", "abcdefghi", "abcdefg\u00e9")
	addRawEqualsAdd(t, texts)

	var tb TextBuilder
	prev, startedOver := 0, false
	for _, s := range texts {
		tb.AddRaw(nil, s)
		n := tb.a.short.n
		if n > maxRuns {
			t.Fatalf("short-run table holds %d runs", n)
		}
		startedOver = startedOver || n < prev
		prev = n
	}
	if !startedOver {
		t.Fatalf("short-run table never started over (%d runs)", prev)
	}
}
