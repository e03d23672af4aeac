package sqlite

import (
	"context"
	"strings"
)

// TagKeywordCandidates implements index.Store: the files whose tag hay
// (index.TagHay) holds word, from the in-memory index.TagIndex.
func (ix *Index) TagKeywordCandidates(_ context.Context, word string) ([]string, error) {
	return ix.tags.Tiers([]string{strings.ToLower(word)})[1], nil
}

// TagTiers implements index.TagTierer.
func (ix *Index) TagTiers(_ context.Context, words []string) ([][]string, error) {
	return ix.tags.Tiers(words), nil
}
