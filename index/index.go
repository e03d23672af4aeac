// Package index defines the store of record for semfs metadata and the
// derived data that makes a tree findable (chunks, full text, trigrams,
// vectors), together with the driver-independent logic every store shares:
// chunking, tokenising, FTS query building, trigram query planning for grep,
// an in-memory vector matrix and rank fusion.
//
// # Store of record and derived data
//
// A [Store] keeps two kinds of data. Metadata (tags, created_by, times, size,
// hash) is what users gave us: it is written durably before a call returns.
// Everything else is derived from file bytes + metadata and can be rebuilt:
// a store detects a missing or inconsistent derived table when it opens and
// marks every file for re-indexing instead of answering from an empty table.
//
// Drivers live in subpackages (index/sqlite); only they import a database
// driver.
package index

import (
	"context"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
)

// Content index states of a file.
const (
	StateIndexed = "indexed" // chunks, full text and trigrams are current
	StatePending = "pending" // bytes changed; derived data not yet rebuilt
	StateSkipped = "skipped" // not indexed on purpose; Reason says why
)

// File is a file's row in the store: its metadata plus bookkeeping.
type File struct {
	semfs.Meta
	// ModTime is the base FS modification time seen when the row was last
	// brought in line with the bytes (Reconcile compares it).
	ModTime time.Time `json:"modTime"`
	// State is the content index state (StateIndexed, StatePending,
	// StateSkipped) and Reason explains a skip ("binary", "too large").
	State  string `json:"state,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Content is the derived data of one file, produced by [Analyze].
type Content struct {
	Chunks []Chunk
	// Grep is the text indexed for trigram lookup; GrepOK is false when the
	// file's bytes are not in the trigram index (binary, too large), which
	// makes it a candidate of every grep.
	Grep   string
	GrepOK bool
}

// Chunk is one searchable piece of a file.
type Chunk struct {
	No        int    // 0-based chunk number within the file
	StartLine int    // 1-based first line
	EndLine   int    // 1-based last line
	Text      string // the chunk's text
}

// ChunkHit is a chunk found by a full-text or vector lookup.
type ChunkHit struct {
	Path      string
	No        int
	StartLine int
	EndLine   int
	Text      string
	Score     float64 // bm25: higher is better (negated SQLite rank); vector: cosine
}

// Filter restricts a content lookup to files whose metadata match. Zero
// fields do not filter.
type Filter struct {
	Task       string
	CreatedBy  string
	PathPrefix string // canonical directory or file path
	Type       string // extension without the dot
	Tags       map[string]string
	// AnyToken skips the all-tokens lookup of SearchChunks: chunks holding
	// any token are ranked from the start (a document's words used as the
	// query, as Related does, would otherwise find only near copies). It
	// filters nothing.
	AnyToken bool
}

// Empty reports whether f filters nothing.
func (f Filter) Empty() bool {
	return f.Task == "" && f.CreatedBy == "" && (f.PathPrefix == "" || f.PathPrefix == "/") && f.Type == "" && len(f.Tags) == 0
}

// Match reports whether a file row passes f.
func (f Filter) Match(r File) bool {
	if f.Task != "" && r.Task != f.Task {
		return false
	}
	if f.CreatedBy != "" && r.CreatedBy != f.CreatedBy {
		return false
	}
	if f.PathPrefix != "" && !semfs.HasPrefix(r.Path, f.PathPrefix) {
		return false
	}
	if f.Type != "" && Ext(r.Path) != f.Type {
		return false
	}
	for k, v := range f.Tags {
		if r.Extra[k] != v {
			return false
		}
	}
	return true
}

// VecHit is one nearest neighbour from a vector space.
type VecHit struct {
	Key        string
	Similarity float32
}

// Store is the index behind the meta layer. Implementations are safe for
// concurrent use. Errors are *fs.PathError wrapping a semfs sentinel where a
// path is involved.
type Store interface {
	embedding.Store

	// File returns the row of path, failing with ErrNotExist when there is
	// none.
	File(ctx context.Context, path string) (File, error)
	// Files returns the rows of the given paths that exist.
	Files(ctx context.Context, paths []string) (map[string]File, error)
	// WalkFiles calls fn for every row at or below root, in path order.
	WalkFiles(ctx context.Context, root string, fn func(File) error) error
	// Put creates or replaces the rows of items in one durable transaction.
	// An item's TagText is the text of the file's tag vector (see TagText);
	// when it differs from the stored one the tag vector becomes stale. If
	// Content is non-nil the file's derived data is replaced by it; content
	// vectors of chunks whose text did not change are kept.
	Put(ctx context.Context, items ...Item) error
	// Remove drops the row of path and, with subtree, every row below it.
	Remove(ctx context.Context, path string, subtree bool) error
	// Rename moves the row of oldpath (and every row below it) to newpath,
	// dropping rows newpath replaces, and rewrites links pointing at a moved
	// path in every row that holds one.
	Rename(ctx context.Context, oldpath, newpath string) error
	// PendingFiles returns up to limit paths whose State is StatePending.
	PendingFiles(ctx context.Context, limit int) ([]string, error)

	// TagKeywordCandidates returns the paths whose path, created_by, task
	// or related apps contain word (case-insensitive substring).
	TagKeywordCandidates(ctx context.Context, word string) ([]string, error)
	// SearchChunks runs a BM25 lookup of the tokens over chunk texts and
	// paths, returning at most limit chunks best first. Chunks holding every
	// token are looked up first; when fewer than AllTokensEnough(limit) of
	// them pass f (or when f.AnyToken is set), the lookup is over chunks
	// holding any token.
	// (Ranking every chunk that holds a common word is what made an OR
	// lookup slow; the eval lost nothing by looking up all tokens first.)
	SearchChunks(ctx context.Context, tokens []string, f Filter, limit int) ([]ChunkHit, error)
	// Chunk returns one chunk by its key (see ChunkKey).
	Chunk(ctx context.Context, key string) (ChunkHit, error)
	// Nearest returns the k vectors of space most similar to q (cosine, on
	// normalised vectors) with similarity ≥ min, best first.
	Nearest(ctx context.Context, space string, q []float32, k int, min float32) ([]VecHit, error)
	// Similarities returns the cosine similarity of q with the vector of
	// each key in space (0 for a key without one), in order.
	Similarities(ctx context.Context, space string, q []float32, keys []string) []float32
	// Vector returns the stored vector of key in space, if any.
	Vector(ctx context.Context, space, key string) ([]float32, bool)
	// GrepCandidates returns the files at or below root that may satisfy q
	// (nil q: every file), plus every file whose trigram data is absent or
	// outdated (pending, binary, too large). pending counts the rows whose content is
	// not indexed yet.
	GrepCandidates(ctx context.Context, root string, q *Query) (paths []string, pending int, err error)

	// Check verifies the derived data and reports what it found. With
	// repair, files whose derived data is inconsistent are marked pending.
	Check(ctx context.Context, repair bool) (CheckReport, error)
	// MarkAllPending marks every file pending and drops all derived data
	// (reindex).
	MarkAllPending(ctx context.Context) error
	Close() error
}

// CheckReport is what Store.Check found.
type CheckReport struct {
	Files        int      `json:"files"`
	Chunks       int      `json:"chunks"`
	Pending      int      `json:"pending"`
	Skipped      int      `json:"skipped"`
	Problems     []string `json:"problems,omitempty"`
	Repaired     bool     `json:"repaired"`
	TagVectors   int      `json:"tagVectors"`
	ChunkVectors int      `json:"chunkVectors"`
}

// AllTokensEnough is how many chunks holding every query token a
// SearchChunks lookup of limit chunks must find before it settles for them
// instead of ranking chunks holding any token.
//
// A twentieth of the limit (10 of a search's pool of 200). With a quarter
// (50), 110 of the 149 GOROOT eval questions found too few all-word chunks
// and fell back to ranking every chunk holding any word (20–35k each); with
// a twentieth BM25 alone kept Recall@10 0.899 and MRR 0.570 (0.569) and
// its CPU fell from 23.9 to 14.7 ms per query (docs/bench/search.md).
func AllTokensEnough(limit int) int { return max(1, limit/20) }

// ChunkKey is the key of a chunk in the content vector space: the path, a
// '#', and the chunk number zero-padded so that keys sort in chunk order.
func ChunkKey(path string, no int) string {
	return path + "#" + pad5(no)
}

func pad5(n int) string {
	s := []byte("00000")
	for i := 4; i >= 0 && n > 0; i-- {
		s[i] = byte('0' + n%10)
		n /= 10
	}
	return string(s)
}

// Item is one row change for Store.Put.
type Item struct {
	File    File
	TagText string
	Content *Content // nil: keep the derived data as it is
}

// PreparingStore is an UpdatingStore whose writes analyse their items
// before they take the write lock (index/sqlite builds postings
// segments). PrepareUpdate does that analysis ahead of the write, so a
// bulk import can analyse one batch on every core while the store writes
// the previous one on a single writer. The returned update is Update with
// that analysis: the rows of paths are read in the write transaction and
// build makes the items from them. Items that name the same paths with
// the same *Content values in the same order as those prepared take the
// prepared analysis; others are analysed again, holding the write lock.
type PreparingStore interface {
	UpdatingStore
	PrepareUpdate(items []Item) (update func(ctx context.Context, paths []string, build func(stored map[string]File) ([]Item, error)) error)
}

// UpdatingStore is a Store that reads rows and writes them back in one
// write transaction, ordered with the writes of every process using the
// store. A row built from the stored one (a save keeps the tags, a tag
// keeps the creator and the bytes' fields) then cannot write back what
// another process changed between the read and the write: a lost update
// of groups that would expose a file another process restricted.
type UpdatingStore interface {
	Store
	// Update reads the rows of paths that exist, in the store's write
	// order, and calls build with them; the items build returns are put
	// as Put puts them, in the same transaction. An error from build
	// ends the transaction without a write and is returned. build may be
	// called more than once (a store may try the transaction again), so
	// it must make its items afresh each time.
	Update(ctx context.Context, paths []string, build func(stored map[string]File) ([]Item, error)) error
}

// RemovingStore is a Store that decides which rows to remove on the rows
// as they stand in the write transaction that removes them, ordered with
// the writes of every process using the store. A removal decided on rows
// read earlier (Reconcile's of files it no longer found, a retried
// removal's of the rows a failed one left) then cannot remove a row
// another process wrote at that path in between: its tags and groups
// would be lost, and a file restricted to a group would come back public.
type RemovingStore interface {
	Store
	// RemoveIf reads the rows of paths that exist, in the store's write
	// order, and calls gone with them; the rows of the paths gone returns
	// (each that row alone, never a subtree below it) are removed as
	// Remove removes them, in the same transaction. A path gone returns
	// that is not among paths fails the call with ErrInvalid, and a path
	// among them with no row is skipped. An error from gone ends the
	// transaction without a write and is returned. gone may be called
	// more than once (a store may try the transaction again).
	RemoveIf(ctx context.Context, paths []string, gone func(stored map[string]File) ([]string, error)) error
}

// Cursor is a position in the changes of a [PeerStore]; the zero Cursor
// is before every change.
type Cursor int64

// PeerStore is a Store other processes may write at the same time (the
// SQLite file a CLI command opens beside a daemon, a PostgreSQL index
// several daemons share), so rows may change under a process that did not
// change them.
type PeerStore interface {
	Store
	// PeerChanges reports which rows (tags, groups and public included)
	// were created, changed, moved away or removed after since, and the
	// cursor to pass next. Changes made through this Store may be
	// included. When nothing changed it costs one small query.
	PeerChanges(ctx context.Context, since Cursor) (Changes, error)
}

// Changes is what PeerStore.PeerChanges reports.
type Changes struct {
	Paths []string // rows that may have changed
	Dirs  []string // rows at or below these may have changed
	// All reports that the store cannot say which rows changed (since is
	// the zero Cursor, or older than the changes it keeps): any may have.
	All  bool
	Next Cursor
}
