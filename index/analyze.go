package index

import (
	"bytes"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/semfs/semfs"
)

// Limits of content analysis. Files above MaxIndexBytes keep their metadata
// but are not chunked or trigram-indexed (State skipped, Reason "too large");
// grep treats them as candidates of every pattern.
const (
	MaxIndexBytes  = 64 << 20
	MaxChunks      = 4096 // chunks per file; the rest of a huge file is not chunked
	chunkTarget    = 1200 // bytes: cut at the next blank line or heading after this
	chunkMax       = 4000 // bytes: cut here whatever the line
	binarySniffLen = 8 << 10
)

// Skip reasons recorded in File.Reason.
const (
	ReasonBinary    = "binary: NUL bytes or mostly invalid UTF-8"
	ReasonTooLarge  = "too large to index"
	ReasonTruncated = "only the first chunks are indexed"
)

// Analyze derives a file's content index data from its bytes. It returns
// the content (nil when the file is skipped), the state to record and, for
// a skip or truncation, the reason.
func Analyze(name string, data []byte) (c *Content, state, reason string) {
	if len(data) > MaxIndexBytes {
		return &Content{}, StateSkipped, ReasonTooLarge
	}
	if IsBinary(data) {
		return &Content{}, StateSkipped, ReasonBinary
	}
	text := string(data)
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	chunks, truncated := ChunkText(name, text)
	c = &Content{Chunks: chunks, Grep: text, GrepOK: true}
	if truncated {
		return c, StateIndexed, ReasonTruncated
	}
	return c, StateIndexed, ""
}

// IsBinary reports whether data looks like a binary file: a NUL byte in its
// first 8 KiB, or more than 10% of that prefix not valid UTF-8.
func IsBinary(data []byte) bool {
	head := data
	if len(head) > binarySniffLen {
		head = head[:binarySniffLen]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if utf8.Valid(head) {
		return false // the common case, checked many times faster than rune by rune
	}
	bad := 0
	for i := 0; i < len(head); {
		r, n := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && n == 1 {
			// A rune cut by the sniff window is not evidence.
			if len(head) < len(data) && len(head)-i < utf8.UTFMax {
				break
			}
			bad++
		}
		i += n
	}
	return bad*10 > len(head)
}

// Ext returns the extension of a path without its dot, lower-cased.
func Ext(p string) string {
	e := path.Ext(semfs.BaseName(p))
	if e == "" {
		return ""
	}
	return strings.ToLower(e[1:])
}

func isProse(name string) bool {
	switch Ext(name) {
	case "md", "markdown", "mdx", "txt", "rst", "adoc", "org", "":
		return true
	}
	return false
}

// ChunkText splits text into chunks: at headings and paragraph breaks for
// prose (Markdown, plain text), at blank lines between blocks for code and
// everything else, each chunk about chunkTarget bytes and never above
// chunkMax (a longer line is cut on a rune boundary). It reports whether the
// text was truncated at MaxChunks. A chunk's text is a substring of text
// (consecutive lines), not a copy.
func ChunkText(name, text string) (chunks []Chunk, truncated bool) {
	prose := isProse(name)
	var (
		cs, ce = 0, 0 // the chunk being built: text[cs:ce], ending where the unread text starts
		start  = 1
		line   = 0
	)
	flush := func(end int) bool {
		if cur := text[cs:ce]; strings.TrimSpace(cur) != "" {
			if len(chunks) == MaxChunks {
				truncated = true
				return false
			}
			chunks = append(chunks, Chunk{No: len(chunks), StartLine: start, EndLine: end, Text: cur})
		}
		cs = ce
		start = end + 1
		return true
	}
	for ce < len(text) {
		line++
		l := text[ce:]
		if i := strings.IndexByte(l, '\n'); i >= 0 {
			l = l[:i+1]
		}
		blank := strings.TrimSpace(l) == ""
		heading := prose && strings.HasPrefix(l, "#")
		if heading && ce > cs {
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
			if ce > cs && !flush(line-1) {
				return chunks, truncated
			}
			ce += cut
			start = line
			if !flush(line) {
				return chunks, truncated
			}
			start = line
			l = l[cut:]
		}
		if ce-cs+len(l) > chunkMax && ce > cs {
			if !flush(line - 1) {
				return chunks, truncated
			}
		}
		if ce == cs {
			start = line
		}
		ce += len(l)
		if blank && ce-cs >= chunkTarget {
			if !flush(line) {
				return chunks, truncated
			}
		}
	}
	flush(line)
	return chunks, truncated
}

// TagText is the text of a file's tag vector (seed 000): task, related apps
// and path.
func TagText(m semfs.Meta) string {
	parts := make([]string, 0, 2+len(m.RelatedApps))
	if m.Task != "" {
		parts = append(parts, m.Task)
	}
	parts = append(parts, m.RelatedApps...)
	parts = append(parts, m.Path)
	return strings.Join(parts, " ")
}
