package docfs

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/semfs/semfs"
)

// AccessFile is the name of the optional sidecar, at the root of an
// ingested directory, that assigns visibility by path pattern:
//
//	[{"path": "internal/**", "groups": ["admin", "billing"]},
//	 {"path": "api-reference/payments.mdx", "groups": ["billing"]}]
//
// Patterns are relative to the root and use *, ? and ** (any number of
// directories); the last matching rule wins. Front matter in a page
// (groups: [a, b], public: true) overrides the sidecar.
const AccessFile = ".access.json"

// AccessRule is one entry of the AccessFile sidecar.
type AccessRule struct {
	Path   string   `json:"path"`
	Groups []string `json:"groups,omitempty"`
	Public bool     `json:"public,omitempty"`
}

// IngestOptions configure Ingest.
type IngestOptions struct {
	// Extensions lists the file extensions ingested (without dot); default
	// md, mdx, markdown, txt.
	Extensions []string
	// LazyOver stores files larger than this many bytes as lazy pointers
	// into Blobs instead of chunks (0: never).
	LazyOver int64
	// Blobs receives lazy pages at "/SITE/PATH".
	Blobs semfs.FS
	// MaxChunk caps one chunk (default 16 KiB); a longer section is split.
	MaxChunk int
	// Progress, if set, is called after each file.
	Progress func(done, total int)
}

// IngestReport says what Ingest did.
type IngestReport struct {
	Pages   int      `json:"pages"`
	Chunks  int      `json:"chunks"`
	Bytes   int64    `json:"bytes"`
	Lazy    int      `json:"lazy"`
	Skipped []string `json:"skipped,omitempty"` // path: reason
}

// Ingest reads every matching file below "/" of src and stores them as
// site, replacing the site atomically. Markdown pages are split into one
// chunk per section (at headings outside fenced code); the chunks of a page
// concatenate to its exact bytes.
func Ingest(ctx context.Context, store Store, site string, src semfs.FS, opts IngestOptions) (IngestReport, error) {
	var rep IngestReport
	if site == "" || strings.ContainsAny(site, "/\x00") {
		return rep, fmt.Errorf("docs ingest: invalid site name %q: use letters, digits, '-' or '_'", site)
	}
	if opts.LazyOver > 0 && opts.Blobs == nil {
		return rep, fmt.Errorf("docs ingest: LazyOver needs a blob tree (Blobs)")
	}
	if opts.MaxChunk <= 0 {
		opts.MaxChunk = 16 << 10
	}
	exts := map[string]bool{}
	if len(opts.Extensions) == 0 {
		opts.Extensions = []string{"md", "mdx", "markdown", "txt"}
	}
	for _, e := range opts.Extensions {
		exts[strings.ToLower(strings.TrimPrefix(e, "."))] = true
	}
	var rules []AccessRule
	if data, err := semfs.ReadFile(ctx, src, "/"+AccessFile); err == nil {
		if err := json.Unmarshal(data, &rules); err != nil {
			return rep, fmt.Errorf("docs ingest: %s is not valid JSON (%v); it must be a list of {\"path\", \"groups\", \"public\"}", AccessFile, err)
		}
		for _, r := range rules {
			if !semfs.ValidPattern(r.Path) {
				return rep, fmt.Errorf("docs ingest: %s: bad pattern %q: use *, ?, [...] and ** (any number of directories)", AccessFile, r.Path)
			}
		}
	} else if !semfs.IsAbsence(err) {
		return rep, err
	}
	files, err := semfs.FileList(ctx, src, "/")
	if err != nil {
		return rep, err
	}
	var todo []string
	for _, p := range files {
		ext := strings.ToLower(strings.TrimPrefix(path.Ext(p), "."))
		if exts[ext] && semfs.BaseName(p) != AccessFile {
			todo = append(todo, p)
		}
	}
	pages := make([]Page, 0, len(todo))
	chunks := map[string][]string{}
	for i, p := range todo {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		info, err := src.Stat(ctx, p)
		if err != nil {
			return rep, err
		}
		data, err := semfs.ReadFile(ctx, src, p)
		if err != nil {
			return rep, err
		}
		pg := Page{Path: p, Size: int64(len(data)), ModTime: info.ModTime().UTC().Truncate(time.Second)}
		pg.Groups, pg.Public = accessFor(rules, p)
		fm := frontMatter(data)
		if g, ok := fm["groups"]; ok {
			pg.Groups = splitList(g)
		}
		if v, ok := fm["public"]; ok {
			pg.Public = v == "true" || v == "yes"
		}
		pg.Title = fm["title"]
		if pg.Title == "" {
			pg.Title = firstHeading(data)
		}
		if opts.LazyOver > 0 && pg.Size > opts.LazyOver {
			pg.Pointer = "/" + site + p
			if err := semfs.WriteFile(ctx, opts.Blobs, pg.Pointer, data, 0o644); err != nil {
				return rep, err
			}
			rep.Lazy++
		} else {
			cs := SplitSections(string(data), opts.MaxChunk)
			pg.Chunks = len(cs)
			chunks[p] = cs
			rep.Chunks += len(cs)
		}
		pages = append(pages, pg)
		rep.Pages++
		rep.Bytes += pg.Size
		if opts.Progress != nil {
			opts.Progress(i+1, len(todo))
		}
	}
	if err := store.ReplaceSite(ctx, site, pages, chunks); err != nil {
		return rep, err
	}
	return rep, nil
}

// accessFor applies the sidecar rules to p (last match wins).
func accessFor(rules []AccessRule, p string) (groups []string, public bool) {
	rel := strings.TrimPrefix(p, "/")
	for _, r := range rules {
		if semfs.MatchPath(r.Path, rel) || semfs.MatchPath(strings.TrimSuffix(r.Path, "/")+"/**", rel) {
			groups, public = r.Groups, r.Public
		}
	}
	return groups, public
}

// frontMatter parses a leading "---" block of "key: value" lines.
func frontMatter(data []byte) map[string]string {
	s := string(data)
	if !strings.HasPrefix(s, "---\n") && !strings.HasPrefix(s, "---\r\n") {
		return nil
	}
	rest := s[strings.IndexByte(s, '\n')+1:]
	end := strings.Index(rest, "\n---")
	if end < 0 {
		return nil
	}
	out := map[string]string{}
	for _, line := range strings.Split(rest[:end], "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		v = strings.Trim(v, `"'`)
		out[strings.TrimSpace(strings.ToLower(k))] = v
	}
	return out
}

// splitList parses "[a, b]" or "a, b" or "a".
func splitList(v string) []string {
	v = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(v), "["), "]"))
	var out []string
	for _, x := range strings.Split(v, ",") {
		x = strings.Trim(strings.TrimSpace(x), `"'`)
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

func firstHeading(data []byte) string {
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "# ") {
			return strings.TrimSpace(line[2:])
		}
	}
	return ""
}

// SplitSections splits a page into chunks at Markdown headings (lines
// starting with '#' outside fenced code blocks), each at most max bytes
// (a longer section is cut at line ends, or mid-line on a rune boundary
// for a single very long line). The chunks concatenate to text exactly.
func SplitSections(text string, max int) []string {
	if text == "" {
		return nil
	}
	var out []string
	start := 0
	fenced := false
	pos := 0
	for pos < len(text) {
		end := strings.IndexByte(text[pos:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += pos + 1
		}
		line := text[pos:end]
		trimmed := strings.TrimLeft(line, " ")
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(line, "#") && pos > start {
			out = append(out, text[start:pos])
			start = pos
		}
		if end-start > max && pos > start {
			out = append(out, text[start:pos])
			start = pos
		}
		for end-start > max {
			cut := start + max
			for cut > start && cut < len(text) && !isRuneStart(text[cut]) {
				cut--
			}
			out = append(out, text[start:cut])
			start = cut
		}
		pos = end
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
