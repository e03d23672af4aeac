package index

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"
)

func TestChunkText(t *testing.T) {
	md := "# One\n\npara one\n\n# Two\n\npara two\n"
	ch, _ := ChunkText("/a.md", md)
	if len(ch) != 2 || ch[0].StartLine != 1 || ch[1].StartLine != 5 || ch[1].EndLine != 7 || !strings.HasPrefix(ch[1].Text, "# Two") {
		t.Fatalf("markdown chunks: %+v", ch)
	}
	// Code: cut at blank lines near the target size; lines add up.
	var b strings.Builder
	for i := range 400 {
		b.WriteString("func f() { return }\n")
		if i%7 == 6 {
			b.WriteString("\n")
		}
	}
	code := b.String()
	ch, _ = ChunkText("/x.go", code)
	joined := ""
	for i, c := range ch {
		joined += c.Text
		if len(c.Text) > chunkMax {
			t.Fatalf("chunk %d too big: %d", i, len(c.Text))
		}
		if i > 0 && c.StartLine != ch[i-1].EndLine+1 {
			t.Fatalf("gap between chunks %d and %d: %+v %+v", i-1, i, ch[i-1], c)
		}
	}
	if joined != code {
		t.Fatal("chunks do not reassemble the text")
	}
	// One huge line is cut on rune boundaries.
	long := strings.Repeat("é", 10000)
	ch, _ = ChunkText("/l.txt", long)
	for _, c := range ch {
		if !utf8.ValidString(c.Text) || len(c.Text) > chunkMax {
			t.Fatalf("bad long-line chunk of %d bytes", len(c.Text))
		}
	}
	// Capped.
	many := strings.Repeat(strings.Repeat("x", 3000)+"\n\n", MaxChunks+10)
	ch, trunc := ChunkText("/m.txt", many)
	if !trunc || len(ch) != MaxChunks {
		t.Fatalf("cap: %d %v", len(ch), trunc)
	}
}

func TestAnalyzeSkips(t *testing.T) {
	if _, st, r := Analyze("/b", []byte("ab\x00cd")); st != StateSkipped || r != ReasonBinary {
		t.Fatalf("NUL: %s %s", st, r)
	}
	if _, st, _ := Analyze("/b", []byte(strings.Repeat("\xff", 100))); st != StateSkipped {
		t.Fatal("invalid UTF-8 not skipped")
	}
	c, st, _ := Analyze("/t", []byte("mostly text \xff here"))
	if st != StateIndexed || !utf8.ValidString(c.Grep) {
		t.Fatalf("mostly-text file: %s %q", st, c.Grep)
	}
}

func TestWordsAndQuery(t *testing.T) {
	var got []string
	Words("parseHTTPRequest read_file x2y", func(w string) { got = append(got, w) })
	want := []string{"parsehttprequest", "parse", "http", "request", "readfile", "read", "file", "x2y", "x", "2", "y"}
	if !slices.Equal(got, want) {
		t.Fatalf("words %v", got)
	}
	if q := QueryTokens("how do I parse a URL"); !slices.Equal(q, []string{"parse", "url"}) {
		t.Fatalf("query tokens %v", q)
	}
}

func TestPlanGrep(t *testing.T) {
	cases := map[string]string{
		`hello`:      `"hel" AND "ell" AND "llo"`,
		`ab`:         `+`,
		`.*`:         `+`,
		`foo|bar`:    `"bar" OR "foo"`,
		`foo.*bar`:   `"foo" AND "bar"`,
		`(?i)Hello`:  `"hel" AND "ell" AND "llo"`,
		`a[bc]d`:     `"abd" OR "acd"`,
		`x+yz`:       `+`,
		`[^a]`:       `+`,
		`abc(def)?`:  `"abc"`,
		`\bword\b`:   `"wor" AND "ord"`,
		`ab|cd`:      `+`,
		`abc|de`:     `+`,
		`(abc|abd)e`: `("abc" AND "bce") OR ("abd" AND "bde")`,
	}
	for pat, want := range cases {
		q, _, err := PlanGrep(pat, false, false)
		if err != nil {
			t.Fatal(pat, err)
		}
		if q.String() != want {
			t.Errorf("%s: %s, want %s", pat, q, want)
		}
	}
	if _, _, err := PlanGrep(`a(`, false, false); err == nil {
		t.Fatal("bad pattern accepted")
	}
	q, ok, _ := PlanGrep(`a(b`, true, false)
	if !ok || q.String() != `"a(b"` {
		t.Fatalf("fixed: %s %v", q, ok)
	}
}

// chunkTextCopying is ChunkText as it was before chunks became substrings
// of the text: each chunk built in a strings.Builder. TestChunkTextSubstrings
// compares the two.
func chunkTextCopying(name, text string) (chunks []Chunk, truncated bool) {
	prose := isProse(name)
	var (
		cur   strings.Builder
		start = 1
		line  = 0
	)
	flush := func(end int) bool {
		if strings.TrimSpace(cur.String()) != "" {
			if len(chunks) == MaxChunks {
				truncated = true
				return false
			}
			chunks = append(chunks, Chunk{No: len(chunks), StartLine: start, EndLine: end, Text: cur.String()})
		}
		cur.Reset()
		start = end + 1
		return true
	}
	for len(text) > 0 {
		line++
		var l string
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			l, text = text[:i+1], text[i+1:]
		} else {
			l, text = text, ""
		}
		blank := strings.TrimSpace(l) == ""
		heading := prose && strings.HasPrefix(l, "#")
		if heading && cur.Len() > 0 {
			if !flush(line - 1) {
				return chunks, truncated
			}
		}
		for len(l) > chunkMax {
			// One very long line (minified code, a data dump): cut it.
			cut := chunkMax
			for cut > 0 && !utf8.RuneStart(l[cut]) {
				cut--
			}
			if cur.Len() > 0 && !flush(line-1) {
				return chunks, truncated
			}
			cur.WriteString(l[:cut])
			start = line
			if !flush(line) {
				return chunks, truncated
			}
			start = line
			l = l[cut:]
		}
		if cur.Len()+len(l) > chunkMax && cur.Len() > 0 {
			if !flush(line - 1) {
				return chunks, truncated
			}
		}
		if cur.Len() == 0 {
			start = line
		}
		cur.WriteString(l)
		if blank && cur.Len() >= chunkTarget {
			if !flush(line) {
				return chunks, truncated
			}
		}
	}
	flush(line)
	return chunks, truncated
}

// ChunkText's chunks are substrings of its text (no copy) and equal to
// those of the copying version, on GOROOT's sources and on texts with
// long lines, headings, blank runs and no final newline.
func TestChunkTextSubstrings(t *testing.T) {
	texts := map[string]string{
		"/a.md":    "# One\n\npara one\n\n\n# Two\n" + strings.Repeat("word ", 900) + "\n\n## Three\n   \n\t\nend",
		"/b.txt":   strings.Repeat("x", 9000) + "\n" + strings.Repeat("é", 5000) + "\n\n" + strings.Repeat("line\n", 700),
		"/c.go":    strings.Repeat("func f() {}\n\n", 300) + "# not a heading in code\n" + strings.Repeat("y", 4001),
		"/d.md":    "\n\n\n   \n",
		"/e.txt":   strings.Repeat("a\r\n\r\n", 1000),
		"/f.md":    strings.Repeat("#h\n", 50) + strings.Repeat("z", 3999) + "\n" + strings.Repeat("z", 4000),
		"/g/empty": "",
	}
	src := filepath.Join(runtime.GOROOT(), "src", "strings")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		texts["/strings/"+e.Name()] = string(data)
	}
	for name, text := range texts {
		got, gotTrunc := ChunkText(name, text)
		want, wantTrunc := chunkTextCopying(name, text)
		if !slices.Equal(got, want) || gotTrunc != wantTrunc {
			t.Fatalf("%s: chunks differ from the copying version:\n got %+v\nwant %+v", name, got, want)
		}
		lo := uintptr(unsafe.Pointer(unsafe.StringData(text)))
		for _, c := range got {
			p := uintptr(unsafe.Pointer(unsafe.StringData(c.Text)))
			if p < lo || p+uintptr(len(c.Text)) > lo+uintptr(len(text)) {
				t.Fatalf("%s: chunk %d is a copy, not a substring of the text", name, c.No)
			}
		}
	}
}
