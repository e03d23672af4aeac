package meta

import (
	"context"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// GrepCandidates implements semfs.GrepCandidatesFS. The pattern is parsed
// with regexp/syntax and turned into a trigram AND/OR query (index.PlanGrep);
// the result holds every indexed file below root whose trigrams satisfy it,
// plus every file whose trigram data is absent or outdated (pending, binary,
// too large), so it is a superset of the files that match. ok is false when
// the pattern has no usable trigram. Files written to the base behind this
// layer's back are seen only after Reconcile.
func (f *FS) GrepCandidates(ctx context.Context, root, pattern string, opts semfs.GrepOptions) ([]string, bool, error) {
	r, err := semfs.Clean("grep", root)
	if err != nil {
		return nil, false, err
	}
	q, ok, err := index.PlanGrep(pattern, opts.Fixed, opts.IgnoreCase)
	if err != nil {
		return nil, false, semfs.PathErr("grep", r, semfs.ErrInvalid, "bad regular expression: "+err.Error())
	}
	if !ok {
		return nil, false, nil
	}
	// A file closed a moment ago must be a candidate (deferred closes).
	f.flushCloses(context.WithoutCancel(ctx), under(r))
	f.refreshPeers(ctx) // candidates are filtered by the restricted set
	paths, _, err := f.store.GrepCandidates(ctx, r, q)
	if err != nil {
		return nil, false, semfs.RewritePath(err, "grep", r)
	}
	return paths, true, nil
}
