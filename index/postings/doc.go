// Package postings is the full-text and grep trigram index of the SQLite
// store, built and searched in Go.
//
// A [Segment] is an immutable set of postings over a batch of documents:
// for each term, the documents holding it in ascending order, and for
// [Text] segments the term's frequency in the two fields of a chunk
// (path and body) and each document's field lengths; [Trigram] segments
// hold file-level trigram postings without frequencies. Segments are
// encoded as delta varints (a Text posting's commonest frequencies coded
// in its gap's low bits, a dense Trigram list as a bitmap) with a
// CRC-32C ([Segment.Encode], [Decode]), so a store keeps them as BLOBs
// and detects a damaged one instead of answering from fewer postings.
//
// An [Index] is the live segments of one kind in memory, with deletions
// as tombstones; [Index.Search] ranks by BM25 exactly as SQLite FTS5's
// bm25() did over the same tokens, and [Index.Grep] answers the trigram
// queries of [index.PlanGrep]. [Index.PlanMerge] picks segments to merge
// (tiered); a [Merge] builds without locks and is swapped in by the store.
//
// # Tokens
//
// [Analyze] turns an index.IndexText output into terms exactly as FTS5's
// tokenize='porter unicode61 remove_diacritics 2' did (the store's tests
// compare the two token streams), so indexes built before and after the
// switch rank alike. [Stem] is the Porter stemmer, written from the
// algorithm's published description.
package postings
