package meta

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
)

// Search tuning: how many candidates each signal contributes, the default
// page size, and the weights of the fused sum (chosen on the GOROOT eval,
// docs/bench/index.md).
const (
	searchPool  = 200
	defaultPage = 20
	maxPage     = 1000
)

// ParseQuery splits a search query into free text and the filters written
// inline (tag:k=v, task:, created_by:, path:, type:; values may be quoted
// with double quotes). Unknown "word:" prefixes stay in the text.
func ParseQuery(q string) (text string, flt index.Filter, err error) {
	var words []string
	for len(q) > 0 {
		q = strings.TrimLeft(q, " \t\r\n")
		if q == "" {
			break
		}
		var tok string
		end := strings.IndexAny(q, " \t\r\n")
		if end < 0 {
			end = len(q)
		}
		tok = q[:end]
		key, val, ok := strings.Cut(tok, ":")
		known := ok && (key == "tag" || key == "task" || key == "created_by" || key == "path" || key == "type")
		if known && strings.HasPrefix(val, `"`) {
			// Quoted value: up to the closing quote.
			rest := q[len(key)+2:]
			i := strings.IndexByte(rest, '"')
			if i < 0 {
				return "", flt, semfs.PathErr("search", "/", semfs.ErrInvalid, "unclosed quote in "+key+`: filter; close it, e.g. task:"fix auth"`)
			}
			val = rest[:i]
			q = rest[i+1:]
		} else {
			q = q[end:]
		}
		if !known {
			words = append(words, tok)
			continue
		}
		switch key {
		case "tag":
			k, v, ok := strings.Cut(val, "=")
			if !ok || k == "" {
				return "", flt, semfs.PathErr("search", "/", semfs.ErrInvalid, "tag: filter needs key=value, e.g. tag:team=infra")
			}
			if flt.Tags == nil {
				flt.Tags = map[string]string{}
			}
			flt.Tags[k] = v
		case "task":
			flt.Task = val
		case "created_by":
			flt.CreatedBy = val
		case "path":
			flt.PathPrefix = val
		case "type":
			flt.Type = strings.TrimPrefix(strings.ToLower(val), ".")
		}
	}
	return strings.Join(words, " "), flt, nil
}

func requestFilter(req semfs.SearchRequest) (string, index.Filter, error) {
	text, flt, err := ParseQuery(req.Query)
	if err != nil {
		return "", flt, err
	}
	if req.Task != "" {
		flt.Task = req.Task
	}
	if req.CreatedBy != "" {
		flt.CreatedBy = req.CreatedBy
	}
	if req.PathPrefix != "" {
		flt.PathPrefix = req.PathPrefix
	}
	if req.Type != "" {
		flt.Type = strings.TrimPrefix(strings.ToLower(req.Type), ".")
	}
	for k, v := range req.Tags {
		if flt.Tags == nil {
			flt.Tags = map[string]string{}
		}
		flt.Tags[k] = v
	}
	if flt.PathPrefix != "" {
		p, err := semfs.Clean("search", flt.PathPrefix)
		if err != nil {
			return "", flt, semfs.PathErr("search", "/", semfs.ErrInvalid, "path: filter "+quote(flt.PathPrefix)+" is not a tree path; write it like path:/notes")
		}
		flt.PathPrefix = p
	}
	return text, flt, nil
}

type cursor struct {
	Offset int    `json:"o"`
	Hash   string `json:"h"`
}

func queryHash(text string, flt index.Filter) string {
	b, _ := json.Marshal(struct {
		T string
		F index.Filter
	}{text, flt})
	h := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(h[:8])
}

func encodeCursor(c cursor) string {
	b := make([]byte, 4, 4+len(c.Hash))
	binary.BigEndian.PutUint32(b, uint32(c.Offset))
	b = append(b, c.Hash...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 5 {
		return cursor{}, false
	}
	return cursor{Offset: int(binary.BigEndian.Uint32(b)), Hash: string(b[4:])}, true
}

// Search implements semfs.SearchFS: BM25 over chunks, the content-vector
// signal and the tag query are fused (Options.Fusion) at file level; each
// hit carries the best chunk's snippet with line numbers and the per-signal
// scores. Pages are cut from a stable order (score, then path) and the
// cursor is opaque (offset + a hash of the query, so a cursor from another
// query is refused).
func (f *FS) Search(ctx context.Context, req semfs.SearchRequest, fn func(semfs.SearchHit) error) (string, error) {
	if err := checkQuery("search", req.Query); err != nil {
		return "", err
	}
	text, flt, err := requestFilter(req)
	if err != nil {
		return "", err
	}
	page := req.Limit
	if page <= 0 {
		page = defaultPage
	}
	page = min(page, maxPage)
	h := queryHash(text, flt)
	offset := 0
	if req.Cursor != "" {
		c, ok := decodeCursor(req.Cursor)
		if !ok || c.Hash != h {
			return "", semfs.PathErr("search", "/", semfs.ErrInvalid, "cursor does not belong to this query; repeat the search without --cursor")
		}
		offset = c.Offset
	}
	hits, err := f.searchAll(ctx, text, flt)
	if err != nil {
		return "", err
	}
	if offset >= len(hits) {
		return "", nil
	}
	end := min(offset+page, len(hits))
	shown := hits[offset:end]
	if err := f.fillFiles(ctx, shown); err != nil {
		return "", err
	}
	tokens := index.QueryTokens(text)
	for _, hit := range shown {
		f.snippet(ctx, &hit, tokens)
		if err := fn(hit.SearchHit); err != nil {
			return "", err
		}
	}
	if end == len(hits) {
		return "", nil
	}
	return encodeCursor(cursor{Offset: end, Hash: h}), nil
}

// hit is a search hit whose snippet and file fields are filled in only
// when it is shown.
type hit struct {
	semfs.SearchHit
	chunk  *index.ChunkHit // the chunk to show; Text empty if not fetched yet
	filled bool            // CreatedBy and Task are set
}

// fillFiles sets CreatedBy and Task of the hits from their file rows, in
// one store lookup (a file removed meanwhile keeps them empty).
func (f *FS) fillFiles(ctx context.Context, hits []hit) error {
	var paths []string
	for _, h := range hits {
		if !h.filled {
			paths = append(paths, h.Path)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	recs, err := f.store.Files(ctx, paths)
	if err != nil {
		return semfs.RewritePath(err, "search", "/")
	}
	for i := range hits {
		if r, ok := recs[hits[i].Path]; ok && !hits[i].filled {
			hits[i].CreatedBy, hits[i].Task = r.CreatedBy, r.Task
		}
		hits[i].filled = true
	}
	return nil
}

// snippet fills h's snippet from its chunk (or the file's first chunk).
func (f *FS) snippet(ctx context.Context, h *hit, tokens []string) {
	c := h.chunk
	if c == nil {
		c = &index.ChunkHit{Path: h.Path}
	}
	if c.Text == "" {
		got, err := f.store.Chunk(ctx, index.ChunkKey(c.Path, c.No))
		if err != nil {
			return
		}
		c = &got
	}
	h.Line, h.EndLine, h.Snippet = Snippet(*c, tokens)
}

// searchAll returns every fused hit of a query, best first, without
// snippets.
func (f *FS) searchAll(ctx context.Context, text string, flt index.Filter) ([]hit, error) {
	f.refreshPeers(ctx) // hits are filtered by the restricted set
	tokens := index.QueryTokens(text)
	if len(tokens) == 0 {
		f.flushCloses(context.WithoutCancel(ctx), nil) // signals flushes otherwise
		if flt.Empty() {
			return nil, semfs.PathErr("search", "/", semfs.ErrInvalid, "empty query; give words to search for, or a filter such as task:NAME or path:/dir")
		}
		return f.filterOnly(ctx, flt)
	}
	sig, err := f.signals(ctx, text, tokens, flt)
	if err != nil {
		return nil, err
	}
	fused := Fuse(sig, f.opts.Fusion)
	order := index.Ranked(fused)
	bm := map[string]index.ChunkHit{}
	for _, c := range sig.BM25 {
		bm[c.Path] = c
	}
	vec := map[string]index.ChunkHit{}
	for _, c := range sig.Vector {
		vec[c.Path] = c
	}
	tag := map[string]tagScore{}
	for _, t := range sig.Tag {
		tag[t.path] = t
	}
	out := make([]hit, 0, len(order))
	for _, p := range order {
		hit := hit{SearchHit: semfs.SearchHit{Path: p, Score: fused[p], Scores: map[string]float64{}}}
		var chunk *index.ChunkHit
		if c, ok := bm[p]; ok {
			hit.Scores["bm25"] = c.Score
			chunk = &c
		}
		if c, ok := vec[p]; ok {
			hit.Scores["vector"] = c.Score
			if chunk == nil {
				chunk = &c
			}
		}
		if t, ok := tag[p]; ok {
			hit.Scores["tag"] = t.score()
			if t.points > 0 {
				hit.Scores["keyword"] = float64(t.points)
			}
		}
		hit.chunk = chunk
		out = append(out, hit)
	}
	return out, nil
}

// filterOnly lists files matching filters, by path.
func (f *FS) filterOnly(ctx context.Context, flt index.Filter) ([]hit, error) {
	root := "/"
	if flt.PathPrefix != "" {
		root = flt.PathPrefix
	}
	var out []hit
	err := f.store.WalkFiles(ctx, root, func(r index.File) error {
		if flt.Match(r) {
			out = append(out, hit{SearchHit: semfs.SearchHit{Path: r.Path, CreatedBy: r.CreatedBy, Task: r.Task}, filled: true})
		}
		return nil
	})
	if err != nil {
		return nil, semfs.RewritePath(err, "search", "/")
	}
	return out, nil
}

// signals computes the three rankings of a query. They are independent
// lookups (SQLite full text, the in-memory vector space, the tag query), so
// they run at once: a query takes about as long as the slowest of them when
// cores are free. Closes not stored yet (Options.CloseDelay) are stored
// first, for Search and for SearchSignals (the eval) alike.
func (f *FS) signals(ctx context.Context, text string, tokens []string, flt index.Filter) (Signals, error) {
	f.flushCloses(context.WithoutCancel(ctx), nil)
	var sig Signals
	var bmErr, vecErr, tagErr error
	var wg sync.WaitGroup
	wg.Go(func() { sig.BM25, bmErr = f.bm25Signal(ctx, tokens, flt) })
	wg.Go(func() { sig.Vector, vecErr = f.vectorSignal(ctx, text, flt) })
	wg.Go(func() { sig.Tag, tagErr = f.tagSignal(ctx, text, tokens, flt) })
	wg.Wait()
	for _, err := range []error{bmErr, vecErr, tagErr} {
		if err != nil {
			return sig, err
		}
	}
	return sig, nil
}

// bm25Signal is the best BM25 chunk of each file, best first.
func (f *FS) bm25Signal(ctx context.Context, tokens []string, flt index.Filter) ([]index.ChunkHit, error) {
	chunks, err := f.store.SearchChunks(ctx, tokens, flt, searchPool)
	if err != nil {
		return nil, semfs.RewritePath(err, "search", "/")
	}
	var out []index.ChunkHit
	seen := map[string]bool{}
	for _, c := range chunks {
		if !seen[c.Path] {
			seen[c.Path] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// vectorSignal is the nearest content chunk of each file, best first; nil
// without a content model (or when embedding the query fails, which is
// logged).
func (f *FS) vectorSignal(ctx context.Context, text string, flt index.Filter) ([]index.ChunkHit, error) {
	e := f.opts.Spaces.Content
	if e == nil {
		return nil, nil
	}
	vecs, err := e.Embed(ctx, []string{text})
	if err != nil || len(vecs) != 1 {
		f.log.Warn("search embedding failed; searching without the vector signal", "err", err)
		return nil, nil
	}
	vh, err := f.store.Nearest(ctx, embedding.SpaceContent, vecs[0], searchPool*2, 0)
	if err != nil {
		return nil, semfs.RewritePath(err, "search", "/")
	}
	return f.vectorHits(ctx, vh, flt)
}

// tagSignal is the tag query's ranking of files passing flt. It counts the
// query's content words (no stop words) rather than every
// whitespace-separated word as the tag query does: one-letter words would
// match nearly every path.
func (f *FS) tagSignal(ctx context.Context, text string, tokens []string, flt index.Filter) ([]tagScore, error) {
	ts, err := f.tagScores(ctx, text, tokens, searchPool)
	if err != nil || flt.Empty() || len(ts) == 0 {
		return ts, err
	}
	paths := make([]string, len(ts))
	for i, t := range ts {
		paths[i] = t.path
	}
	recs, err := f.store.Files(ctx, paths)
	if err != nil {
		return nil, semfs.RewritePath(err, "search", "/")
	}
	kept := ts[:0]
	for _, t := range ts {
		if r, ok := recs[t.path]; ok && flt.Match(r) {
			kept = append(kept, t)
		}
	}
	return kept, nil
}

// vectorHits turns nearest chunk keys into the best chunk per file passing
// flt.
func (f *FS) vectorHits(ctx context.Context, vh []index.VecHit, flt index.Filter) ([]index.ChunkHit, error) {
	type best struct {
		key string
		sim float32
	}
	var order []best
	seen := map[string]bool{}
	for _, h := range vh {
		i := strings.LastIndexByte(h.Key, '#')
		if i < 0 {
			continue
		}
		p := h.Key[:i]
		if !seen[p] {
			seen[p] = true
			order = append(order, best{h.Key, h.Similarity})
		}
	}
	var recs map[string]index.File
	if !flt.Empty() {
		paths := make([]string, 0, len(order))
		for _, b := range order {
			paths = append(paths, b.key[:strings.LastIndexByte(b.key, '#')])
		}
		var err error
		if recs, err = f.store.Files(ctx, paths); err != nil {
			return nil, semfs.RewritePath(err, "search", "/")
		}
	}
	var out []index.ChunkHit
	for _, b := range order {
		p := b.key[:strings.LastIndexByte(b.key, '#')]
		if recs != nil {
			r, ok := recs[p]
			if !ok || !flt.Match(r) {
				continue
			}
		}
		// The chunk's text is fetched only if its snippet is shown.
		no, _ := strconv.Atoi(b.key[strings.LastIndexByte(b.key, '#')+1:])
		out = append(out, index.ChunkHit{Path: p, No: no, Score: float64(b.sim)})
	}
	return out, nil
}

// Snippet picks up to three lines of a chunk, starting at the first line
// holding a query token, and returns their 1-based line range.
func Snippet(c index.ChunkHit, tokens []string) (line, end int, text string) {
	lines := strings.Split(strings.TrimRight(c.Text, "\n"), "\n")
	at := 0
	for i, l := range lines {
		ll := strings.ToLower(l)
		found := false
		for _, t := range tokens {
			if strings.Contains(ll, t) {
				found = true
				break
			}
		}
		if found {
			at = i
			break
		}
	}
	stop := min(at+3, len(lines))
	snip := strings.Join(lines[at:stop], "\n")
	if len(snip) > 400 {
		snip = snip[:400]
		snip = strings.ToValidUTF8(snip, "") + "…"
	}
	return c.StartLine + at, c.StartLine + stop - 1, snip
}
