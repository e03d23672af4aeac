package mount

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"slices"

	"github.com/semfs/semfs"
)

// Meta returns the metadata of name from the mount covering it (or what Stat
// knows, for a backend without metadata and for the directories the table
// synthesises).
func (f *FS) Meta(ctx context.Context, name string) (semfs.Meta, error) {
	p, err := semfs.Clean("meta", name)
	if err != nil {
		return semfs.Meta{}, err
	}
	m := f.resolve(p)
	if m == nil || f.structural(p) {
		info, err := f.Stat(ctx, p)
		if err != nil {
			return semfs.Meta{}, semfs.RewritePath(err, "meta", p)
		}
		return semfs.Meta{Path: p, CreatedAt: info.ModTime(), UpdatedAt: info.ModTime(), Size: info.Size()}, nil
	}
	meta, err := semfs.GetMeta(ctx, m.FS, m.inner(p))
	if err != nil {
		return semfs.Meta{}, m.err(err, "meta", p)
	}
	meta.Path = p
	return meta, nil
}

// SetTags sets the tags of name in the mount covering it.
func (f *FS) SetTags(ctx context.Context, name string, tags semfs.Tags) error {
	p, err := semfs.Clean("tag", name)
	if err != nil {
		return err
	}
	if f.structural(p) {
		return f.structuralErr("tag", p)
	}
	m, err := f.writeTarget("tag", p)
	if err != nil {
		return err
	}
	return m.err(semfs.SetTags(ctx, m.FS, m.inner(p), tags), "tag", p)
}

// visibleHere reports whether backend path bp of m is a tree path m serves
// (not outside its mount point, not shadowed by a deeper mount), and
// returns the tree path.
func (f *FS) visibleHere(m *mnt, bp string) (string, bool) {
	if bp == "" || bp[0] != '/' {
		return "", false
	}
	tp := m.outer(bp)
	return tp, semfs.HasPrefix(tp, m.At) && f.resolve(tp) == m
}

// Query asks every mount that answers tag queries and merges the results,
// best first.
func (f *FS) Query(ctx context.Context, text string, limit int) ([]semfs.QueryResult, error) {
	var out []semfs.QueryResult
	for _, m := range f.mounts {
		q, ok := m.FS.(semfs.QueryFS)
		if !ok {
			continue
		}
		res, err := q.Query(ctx, text, limit)
		if err != nil {
			return nil, m.err(err, "query", m.At)
		}
		for _, r := range res {
			tp, ok := f.visibleHere(m, r.Path)
			if !ok {
				continue
			}
			r.Path = tp
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b semfs.QueryResult) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Path, b.Path)
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Related asks the mount holding name for its relatives.
func (f *FS) Related(ctx context.Context, name string, limit int) ([]semfs.Candidate, error) {
	p, err := semfs.Clean("related", name)
	if err != nil {
		return nil, err
	}
	m := f.resolve(p)
	if m == nil || f.structural(p) {
		return nil, semfs.PathErr("related", p, semfs.ErrNotExist, "")
	}
	r, ok := m.FS.(semfs.RelatedFS)
	if !ok {
		return nil, semfs.PathErr("related", p, semfs.ErrInvalid, "mount "+m.At+" keeps no search index")
	}
	res, err := r.Related(ctx, m.inner(p), limit)
	if err != nil {
		return nil, m.err(err, "related", p)
	}
	out := res[:0]
	for _, c := range res {
		tp, ok := f.visibleHere(m, c.Path)
		if !ok {
			continue
		}
		c.Path = tp
		out = append(out, c)
	}
	return out, nil
}

// Search runs a content search. A path filter inside one mount sends the
// request there alone; otherwise every searchable mount is asked, each page
// holds up to Limit hits per mount merged best first, and the cursor resumes
// each mount where it stopped.
func (f *FS) Search(ctx context.Context, req semfs.SearchRequest, fn func(semfs.SearchHit) error) (string, error) {
	prefix := "/"
	if req.PathPrefix != "" {
		p, err := semfs.Clean("search", req.PathPrefix)
		if err != nil {
			return "", err
		}
		prefix = p
	}
	cursors := map[string]string{}
	if req.Cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(req.Cursor)
		if err == nil {
			err = json.Unmarshal(raw, &cursors)
		}
		if err != nil {
			return "", semfs.PathErr("search", prefix, semfs.ErrInvalid, "bad cursor: not one this tree returned")
		}
	}
	cover := f.resolve(prefix)
	var hits []semfs.SearchHit
	next := map[string]string{}
	for _, m := range f.mounts {
		s, ok := m.FS.(semfs.SearchFS)
		if !ok {
			continue
		}
		sub := req
		switch {
		case m == cover:
			sub.PathPrefix = m.inner(prefix)
		case m.At != prefix && semfs.HasPrefix(m.At, prefix):
			sub.PathPrefix = m.inner(m.At)
		default:
			continue
		}
		if sub.PathPrefix == "/" && req.PathPrefix == "" {
			sub.PathPrefix = ""
		}
		sub.Cursor = ""
		if req.Cursor != "" {
			c, ok := cursors[m.At]
			if !ok {
				continue // this mount's results were exhausted
			}
			sub.Cursor = c
		}
		n, err := s.Search(ctx, sub, func(h semfs.SearchHit) error {
			if tp, ok := f.visibleHere(m, h.Path); ok {
				h.Path = tp
				hits = append(hits, h)
			}
			return nil
		})
		if err != nil {
			return "", m.err(err, "search", m.At)
		}
		if n != "" {
			next[m.At] = n
		}
	}
	slices.SortStableFunc(hits, func(a, b semfs.SearchHit) int { return cmp.Compare(b.Score, a.Score) })
	for _, h := range hits {
		if err := fn(h); err != nil {
			return "", err
		}
	}
	if len(next) == 0 {
		return "", nil
	}
	raw, err := json.Marshal(next)
	if err != nil {
		return "", &fs.PathError{Op: "search", Path: prefix, Err: err}
	}
	return base64.RawURLEncoding.EncodeToString(raw), nil
}

// GrepCandidates asks every mount below root for candidate files and merges
// them in path order. If a mount there cannot narrow the search (no content
// index, or its answer is not ok), the answer is not ok: the caller scans.
func (f *FS) GrepCandidates(ctx context.Context, root, pattern string, opts semfs.GrepOptions) ([]string, bool, error) {
	p, err := semfs.Clean("grep", root)
	if err != nil {
		return nil, false, err
	}
	cover := f.resolve(p)
	var out []string
	for _, m := range f.mounts {
		var broot string
		switch {
		case m == cover:
			broot = m.inner(p)
		case m.At != p && semfs.HasPrefix(m.At, p):
			broot = m.inner(m.At)
		default:
			continue
		}
		g, ok := m.FS.(semfs.GrepCandidatesFS)
		if !ok {
			return nil, false, nil
		}
		paths, ok, err := g.GrepCandidates(ctx, broot, pattern, opts)
		if err != nil {
			if (f.structural(p) || m != cover) && semfs.IsAbsence(err) {
				continue // a directory only the table knows: nothing there
			}
			return nil, false, m.err(err, "grep", p)
		}
		if !ok {
			return nil, false, nil
		}
		for _, bp := range paths {
			if tp, ok := f.visibleHere(m, bp); ok {
				out = append(out, tp)
			}
		}
	}
	if cover == nil && !f.structural(p) {
		return nil, false, semfs.PathErr("grep", p, semfs.ErrNotExist, "")
	}
	slices.Sort(out)
	return out, true, nil
}
