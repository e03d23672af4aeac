CREATE TABLE IF NOT EXISTS chunks (
	id         INTEGER PRIMARY KEY,
	key        TEXT NOT NULL UNIQUE,
	path       TEXT NOT NULL,
	no         INTEGER NOT NULL,
	start_line INTEGER NOT NULL,
	end_line   INTEGER NOT NULL,
	text       TEXT NOT NULL,
	vec        BLOB,
	fresh      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path, no);
CREATE INDEX IF NOT EXISTS chunks_need ON chunks(key) WHERE fresh = 0;
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(path, body, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2');
-- grep_fts holds each file's distinct folded trigrams as tokens (grepTokens
-- in grep.go), not its text: a trigram tokenizer over the text indexed
-- every position, and FTS5 spent most of an ingest on it.
CREATE VIRTUAL TABLE IF NOT EXISTS grep_fts USING fts5(tris, content='', contentless_delete=1, tokenize='ascii', detail='none');
-- FTS5 flushes its pending terms to a new segment every hashsize bytes
-- (default 1 MiB) besides at commit; a bulk Put of 16 MiB of text made
-- dozens of small segments per batch, and merging them was a quarter of
-- an ingest. 8 MiB keeps a batch to a few segments.
INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('hashsize', 8388608);
INSERT INTO grep_fts(grep_fts, rank) VALUES ('hashsize', 8388608);
