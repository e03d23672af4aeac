package index

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
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
