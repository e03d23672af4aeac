package access

import (
	"context"
	"iter"

	"github.com/semfs/semfs"
)

// seen reports whether a result naming p may be shown: the rules give it
// access and it is visible. A search hit is an existence proof, so both
// must hold.
func (f *FS) seen(v *view, p string) (bool, error) {
	if _, ok := canonical(p); !ok && !semfs.ValidPath(p) {
		return false, nil
	}
	if no, _ := f.pol.refused(p); no {
		return false, nil
	}
	return v.visible(p, false)
}

// Files yields the files below root the principal may see, in path order.
func (f *FS) Files(ctx context.Context, root string) iter.Seq2[string, error] {
	p, err := clean("files", root)
	if err != nil {
		return func(yield func(string, error) bool) { yield("", err) }
	}
	var buf [16]uint64
	s := f.pol.walk(p, buf[:0])
	if a, r := f.pol.decide(s); a == None && p != "/" && !f.pol.grantsBelow(s) {
		return func(yield func(string, error) bool) { yield("", refusal("files", p, a, r)) }
	}
	v := f.view(ctx)
	if !f.pol.anyNone && !v.active() {
		return semfs.Files(ctx, f.inner, p)
	}
	return func(yield func(string, error) bool) {
		if v.active() && p != "/" {
			if info, err := f.inner.Stat(ctx, p); err == nil {
				if ok, err := v.visible(p, info.IsDir()); err != nil || !ok {
					if err == nil {
						err = hidden("files", p)
					}
					yield("", semfs.RewritePath(err, "files", p))
					return
				}
			}
		}
		for fp, err := range semfs.Files(ctx, f.inner, p) {
			if err != nil {
				yield("", f.absentBelow(ctx, p, err))
				return
			}
			ok, err := f.seen(v, fp)
			if err != nil {
				yield("", semfs.RewritePath(err, "files", p))
				return
			}
			if ok && !yield(fp, nil) {
				return
			}
		}
	}
}

// Meta returns the metadata of a path the principal may read; a summary is a
// description of bytes, so it is refused like a read. Links to paths the
// principal cannot see are left out.
func (f *FS) Meta(ctx context.Context, name string) (semfs.Meta, error) {
	p, err := clean("meta", name)
	if err != nil {
		return semfs.Meta{}, err
	}
	if err := f.readable(ctx, "meta", p); err != nil {
		return semfs.Meta{}, err
	}
	m, err := semfs.GetMeta(ctx, f.inner, p)
	if err != nil {
		return m, f.absentBelow(ctx, p, err)
	}
	if len(m.Links) == 0 {
		return m, nil
	}
	v := f.view(ctx)
	links := make([]string, 0, len(m.Links))
	for _, l := range m.Links {
		if ok, err := f.seen(v, l); err == nil && ok {
			links = append(links, l)
		}
	}
	m.Links = links
	return m, nil
}

// SetTags follows the write rules; a hidden file does not exist.
func (f *FS) SetTags(ctx context.Context, name string, tags semfs.Tags) error {
	p, err := clean("tag", name)
	if err != nil {
		return err
	}
	if err := f.writable(ctx, "tag", p, semfs.ErrNotExist); err != nil {
		return err
	}
	return f.absentBelow(ctx, p, semfs.SetTags(ctx, f.inner, p, tags))
}

// filtering reports whether results must be filtered for v.
func (f *FS) filtering(v *view) bool { return f.pol.anyNone || v.active() }

// Query answers the tag query with the results the principal may see.
func (f *FS) Query(ctx context.Context, text string, limit int) ([]semfs.QueryResult, error) {
	q, ok := f.inner.(semfs.QueryFS)
	if !ok {
		return nil, semfs.PathErr("query", "/", semfs.ErrInvalid, "this tree answers no tag queries")
	}
	v := f.view(ctx)
	if !f.filtering(v) {
		return q.Query(ctx, text, limit)
	}
	res, err := q.Query(ctx, text, 0) // filter first, then cut
	if err != nil {
		return nil, err
	}
	out := res[:0]
	for _, r := range res {
		ok, err := f.seen(v, r.Path)
		if err != nil {
			return nil, semfs.RewritePath(err, "query", "/")
		}
		if ok {
			out = append(out, r)
		}
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}

// Search streams the hits the principal may see. A page may hold fewer hits
// than the limit when some were filtered out; the cursor still advances.
func (f *FS) Search(ctx context.Context, req semfs.SearchRequest, fn func(semfs.SearchHit) error) (string, error) {
	s, ok := f.inner.(semfs.SearchFS)
	if !ok {
		return "", semfs.PathErr("search", "/", semfs.ErrInvalid, "this tree has no content search")
	}
	v := f.view(ctx)
	if !f.filtering(v) {
		return s.Search(ctx, req, fn)
	}
	return s.Search(ctx, req, func(h semfs.SearchHit) error {
		ok, err := f.seen(v, h.Path)
		if err != nil {
			return semfs.RewritePath(err, "search", "/")
		}
		if !ok {
			return nil
		}
		return fn(h)
	})
}

// Related returns the relatives of a file the principal may read, among
// those it may see.
func (f *FS) Related(ctx context.Context, name string, limit int) ([]semfs.Candidate, error) {
	p, err := clean("related", name)
	if err != nil {
		return nil, err
	}
	r, ok := f.inner.(semfs.RelatedFS)
	if !ok {
		return nil, semfs.PathErr("related", p, semfs.ErrInvalid, "this tree keeps no search index")
	}
	if err := f.readable(ctx, "related", p); err != nil {
		return nil, err
	}
	v := f.view(ctx)
	if !f.filtering(v) {
		res, err := r.Related(ctx, p, limit)
		return res, f.absentBelow(ctx, p, err)
	}
	res, err := r.Related(ctx, p, 0)
	if err != nil {
		return nil, f.absentBelow(ctx, p, err)
	}
	out := res[:0]
	for _, c := range res {
		ok, err := f.seen(v, c.Path)
		if err != nil {
			return nil, semfs.RewritePath(err, "related", p)
		}
		if ok {
			out = append(out, c)
		}
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}

// GrepCandidates narrows a content search to candidate files the principal
// may see. It is not ok when the wrapped tree cannot narrow it; the caller
// then scans, through this layer.
func (f *FS) GrepCandidates(ctx context.Context, root, pattern string, opts semfs.GrepOptions) ([]string, bool, error) {
	p, err := clean("grep", root)
	if err != nil {
		return nil, false, err
	}
	g, ok := f.inner.(semfs.GrepCandidatesFS)
	if !ok {
		return nil, false, nil
	}
	if a, r := f.pol.access(p); a == None && p != "/" {
		var buf [16]uint64
		if !f.pol.grantsBelow(f.pol.walk(p, buf[:0])) {
			return nil, false, refusal("grep", p, a, r)
		}
	}
	paths, ok, err := g.GrepCandidates(ctx, p, pattern, opts)
	if err != nil || !ok {
		return nil, ok, f.absentBelow(ctx, p, err)
	}
	v := f.view(ctx)
	if !f.filtering(v) {
		return paths, true, nil
	}
	out := paths[:0:0]
	for _, c := range paths {
		ok, err := f.seen(v, c)
		if err != nil {
			return nil, false, semfs.RewritePath(err, "grep", p)
		}
		if ok {
			out = append(out, c)
		}
	}
	return out, true, nil
}
