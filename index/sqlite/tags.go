package sqlite

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/semfs/semfs/index"
)

// TagKeywordCandidates implements index.Store. Words of three or more
// characters are looked up in the trigram index over tag fields (a
// substring of ≥ 3 characters contains one of its trigrams); shorter words
// have no trigram, so they are matched by a scan of the in-memory tag table
// (see docs/bench/index.md for its cost). Either way every candidate is
// verified against the lower-cased fields.
func (ix *Index) TagKeywordCandidates(ctx context.Context, word string) ([]string, error) {
	word = strings.ToLower(word)
	if word == "" || strings.ContainsRune(word, 0) {
		return nil, nil
	}
	if utf8.RuneCountInString(word) < 3 || word != strings.ToValidUTF8(word, "") {
		return ix.scanTags(word), nil
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT f.path FROM tags_fts JOIN files f ON f.id = tags_fts.rowid WHERE tags_fts MATCH ?`,
		index.QuoteFTS(word))
	if err != nil {
		return nil, storeErr("query", "/", err)
	}
	defer rows.Close()
	var out []string
	ix.tmu.RLock()
	defer ix.tmu.RUnlock()
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, storeErr("query", "/", err)
		}
		if strings.Contains(ix.tags[p], word) {
			out = append(out, p)
		}
	}
	return out, rows.Err()
}

func (ix *Index) scanTags(word string) []string {
	ix.tmu.RLock()
	defer ix.tmu.RUnlock()
	var out []string
	for p, hay := range ix.tags {
		if strings.Contains(hay, word) {
			out = append(out, p)
		}
	}
	return out
}
