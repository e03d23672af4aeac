package shell

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/semfs/semfs"
)

// search, query and tag: semfs's own commands.
//
//	search [-n LIMIT] [--path PREFIX] [--type EXT] QUERY...   content search
//	query [-n LIMIT] TEXT...                                  tag query (seed 000)
//	tag PATH [--task T] [--app A]... [--summary S] [--link P]... [--provenance P] [--set K=V]...
//
// Results a session cannot see are dropped, so a hidden file never shows.
// tag replaces a file's tags (as semfs.SetTags does) but keeps its
// visibility groups: a shell session cannot change who may see a file.

func init() {
	register("search", cmdSearch)
	register("query", cmdQuery)
	register("tag", cmdTag)
}

func cmdSearch(c *call) int {
	o, ok := c.parse(optSpec{valued: "n", long: map[string]bool{"path": true, "type": true, "limit": true},
		alias: map[string]string{"limit": "n"}})
	if !ok {
		return 2
	}
	if len(o.operands) == 0 {
		c.errf("usage: search [-n LIMIT] [--path PREFIX] [--type EXT] QUERY")
		return 2
	}
	req := semfs.SearchRequest{Query: strings.Join(o.operands, " "), Limit: 10}
	if v, ok := o.last("n"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			c.errf("invalid limit '%s'", v)
			return 2
		}
		req.Limit = n
	}
	if v, ok := o.last("path"); ok {
		req.PathPrefix = c.abs(v)
	}
	if v, ok := o.last("type"); ok {
		req.Type = strings.TrimPrefix(v, ".")
	}
	search := c.s.opts.Search
	if search == nil {
		sfs, ok := c.s.fsys.(semfs.SearchFS)
		if !ok {
			c.errf("this tree has no search index; use grep -r PATTERN to search file contents")
			return 2
		}
		search = sfs.Search
	}
	n := 0
	_, err := search(c.ctx, req, func(h semfs.SearchHit) error {
		if _, err := c.s.nav.stat(c.ctx, h.Path); err != nil {
			return nil // hidden from this session
		}
		n++
		snippet := strings.Join(strings.Fields(h.Snippet), " ")
		if len(snippet) > 200 {
			snippet = snippet[:200] + "…"
		}
		line := h.Line
		if line == 0 {
			line = 1
		}
		fmt.Fprintf(c.out, "%s:%d: %s\n", h.Path, line, snippet)
		return nil
	})
	if err != nil {
		c.errf("%v", err)
		return 2
	}
	if n == 0 {
		return 1
	}
	return 0
}

func cmdQuery(c *call) int {
	o, ok := c.parse(optSpec{valued: "n", long: map[string]bool{"limit": true}, alias: map[string]string{"limit": "n"}})
	if !ok {
		return 2
	}
	if len(o.operands) == 0 {
		c.errf("usage: query [-n LIMIT] TEXT")
		return 2
	}
	limit := 0
	if v, ok := o.last("n"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			c.errf("invalid limit '%s'", v)
			return 2
		}
		limit = n
	}
	query := c.s.opts.Query
	if query == nil {
		qfs, ok := c.s.fsys.(semfs.QueryFS)
		if !ok {
			c.errf("this tree keeps no tags to query; use find or grep -r")
			return 2
		}
		query = qfs.Query
	}
	res, err := query(c.ctx, strings.Join(o.operands, " "), limit)
	if err != nil {
		c.errf("%v", err)
		return 2
	}
	n := 0
	for _, r := range res {
		if _, err := c.s.nav.stat(c.ctx, r.Path); err != nil {
			continue
		}
		n++
		fmt.Fprintf(c.out, "%s\t%.3f\ttask=%s\tapps=%s\tcreated_by=%s\n", r.Path, r.Score, r.Task, strings.Join(r.RelatedApps, ","), r.CreatedBy)
	}
	if n == 0 {
		return 1
	}
	return 0
}

func cmdTag(c *call) int {
	o, ok := c.parse(optSpec{long: map[string]bool{"task": true, "app": true, "summary": true, "link": true, "provenance": true, "set": true}})
	if !ok {
		return 2
	}
	if len(o.operands) != 1 {
		c.errf("usage: tag PATH [--task T] [--app A]... [--summary S] [--link PATH]... [--provenance P] [--set KEY=VALUE]...")
		return 2
	}
	a := o.operands[0]
	p, info, err := c.stat(a)
	if err != nil {
		c.pathErr("%s: ", a, err)
		return 1
	}
	if info.IsDir() {
		c.errf("%s: Is a directory (tags belong to files)", a)
		return 1
	}
	if c.s.opts.ReadOnly {
		c.errf("%s: Read-only file system (this session is read-only)", a)
		return 1
	}
	var t semfs.Tags
	if m, err := semfs.GetMeta(c.ctx, c.s.fsys, p); err == nil {
		t.Groups, t.Public = m.Groups, m.Public
	}
	t.Task, _ = o.last("task")
	t.RelatedApps = o.all("app")
	t.Summary, _ = o.last("summary")
	for _, l := range o.all("link") {
		t.Links = append(t.Links, c.abs(l))
	}
	t.Provenance, _ = o.last("provenance")
	for _, kv := range o.all("set") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			c.errf("--set wants KEY=VALUE, got '%s'", kv)
			return 2
		}
		if t.Extra == nil {
			t.Extra = map[string]string{}
		}
		t.Extra[k] = v
	}
	if err := semfs.SetTags(c.ctx, c.s.fsys, p, t); err != nil {
		c.errf("%s: %s", a, strings.TrimPrefix(err.Error(), "tag "+p+": "))
		return 1
	}
	return 0
}
