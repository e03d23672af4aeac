package semfs

import (
	"context"
	"time"
)

// QueryResult is one answer of the tag query (seed 000's shape, plus score).
type QueryResult struct {
	Path        string    `json:"path"`
	CreatedBy   string    `json:"createdBy,omitempty"`
	Task        string    `json:"task,omitempty"`
	RelatedApps []string  `json:"relatedApps,omitempty"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	Score       float64   `json:"score"`
}

// QueryFS is implemented by trees that answer seed 000's tag query: keyword
// points on path, created_by, task and related apps, plus the similarity of
// the query with the file's tag-text embedding. limit <= 0 means all matches.
type QueryFS interface {
	FS
	Query(ctx context.Context, text string, limit int) ([]QueryResult, error)
}

// SearchRequest is a content search. Query may carry inline filters
// (tag:k=v, task:, created_by:, path:, type:) which the engine parses; the
// fields below are the same filters set programmatically.
type SearchRequest struct {
	Query      string            `json:"query"`
	Task       string            `json:"task,omitempty"`
	CreatedBy  string            `json:"createdBy,omitempty"`
	PathPrefix string            `json:"path,omitempty"`
	Type       string            `json:"type,omitempty"` // file extension without dot, e.g. "md"
	Tags       map[string]string `json:"tags,omitempty"`
	Limit      int               `json:"limit,omitempty"` // page size; 0 means a default (20)
	Cursor     string            `json:"cursor,omitempty"`
}

// SearchHit is one result of a content search.
type SearchHit struct {
	Path      string             `json:"path"`
	Line      int                `json:"line,omitempty"` // 1-based first line of the snippet
	EndLine   int                `json:"endLine,omitempty"`
	Snippet   string             `json:"snippet,omitempty"`
	Score     float64            `json:"score"`
	Scores    map[string]float64 `json:"scores,omitempty"` // per signal: bm25, vector, tag, keyword
	CreatedBy string             `json:"createdBy,omitempty"`
	Task      string             `json:"task,omitempty"`
}

// SearchFS is implemented by trees that search contents. Search streams the
// hits of one page to fn, best first, and returns the cursor of the next
// page ("" when there is none). An error from fn stops the search and is
// returned.
type SearchFS interface {
	FS
	Search(ctx context.Context, req SearchRequest, fn func(SearchHit) error) (next string, err error)
}

// Candidate is a likely duplicate or close relative of a file (seed 001).
type Candidate struct {
	Path       string  `json:"path"`
	Similarity float64 `json:"similarity"` // 0..1
	Via        string  `json:"via"`        // "vector" or "lexical"
}

// RelatedFS is implemented by trees that find a file's likely duplicates and
// relatives. limit <= 0 means the engine's cap.
type RelatedFS interface {
	FS
	Related(ctx context.Context, name string, limit int) ([]Candidate, error)
}

// GrepOptions qualify a GrepCandidates pattern.
type GrepOptions struct {
	Fixed      bool // pattern is a literal string, not a regular expression
	IgnoreCase bool
}

// GrepCandidatesFS is implemented by trees with a content index that can
// narrow a regular-expression search (Go regexp / RE2 syntax) to candidate
// files, as codesearch and zoekt do with trigrams. GrepCandidates returns,
// sorted, a superset of the regular files below root whose contents may
// match pattern; ok is false when the index cannot help (the pattern has no
// usable literal, or the index is not current), and the caller then scans.
type GrepCandidatesFS interface {
	FS
	GrepCandidates(ctx context.Context, root, pattern string, opts GrepOptions) (paths []string, ok bool, err error)
}
