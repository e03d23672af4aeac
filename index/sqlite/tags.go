package sqlite

import (
	"context"
	"strings"
)

// TagKeywordCandidates implements index.Store: the files whose tag hay
// (index.TagHay) holds word, from the in-memory index.TagIndex brought up
// to what other processes committed.
func (ix *Index) TagKeywordCandidates(ctx context.Context, word string) ([]string, error) {
	ix.refreshQuiet(ctx)
	return ix.tags.Tiers([]string{strings.ToLower(word)})[1], nil
}

// TagTiers implements index.TagTierer.
func (ix *Index) TagTiers(ctx context.Context, words []string) ([][]string, error) {
	ix.refreshQuiet(ctx)
	return ix.tags.Tiers(words), nil
}
