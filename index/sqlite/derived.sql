CREATE TABLE IF NOT EXISTS chunks (
	id         INTEGER PRIMARY KEY,
	key        TEXT NOT NULL, -- path, '#', five digits of the chunk's number
	start_line INTEGER NOT NULL,
	end_line   INTEGER NOT NULL,
	text       TEXT NOT NULL,
	vec        BLOB,
	fresh      INTEGER NOT NULL DEFAULT 0,
	CHECK (fresh IN (0, 1) AND (vec IS NULL OR fresh = 1))
);
-- One index finds chunks by key and the ones needing a vector (fresh =
-- 0) in key order: a lookup by key names both values of fresh (see
-- chunksOf in write.go). Keys are unique by construction (a Put deletes
-- a path's chunks before it inserts new ones), not by the index.
-- No column or index of path: a path's chunks are the keys in [path#,
-- path$) six bytes longer than the path (see chunksOf).
CREATE INDEX IF NOT EXISTS chunks_key ON chunks(fresh, key);
-- postings holds the immutable segments of the full-text (kind 1) and
-- grep trigram (kind 2) postings, built and encoded in Go by
-- index/postings (each with a checksum), written in the transaction that
-- writes the rows they index. postings_dead holds their tombstones: local
-- document numbers of a segment that were deleted or replaced since.
CREATE TABLE IF NOT EXISTS postings (
	id   INTEGER PRIMARY KEY,
	kind INTEGER NOT NULL,
	data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS postings_dead (
	seg INTEGER NOT NULL,
	doc INTEGER NOT NULL,
	PRIMARY KEY (seg, doc)
) WITHOUT ROWID;
