-- chunks.len: the chunk's lexeme count, kept by PostgreSQL, so SearchChunks
-- can pick its candidates by length without reading any tsvector. Derived
-- tables created after this (derived.sql) have the column already; an older
-- database gets it here without a reindex.
ALTER TABLE IF EXISTS chunks ADD COLUMN IF NOT EXISTS len INTEGER GENERATED ALWAYS AS (length(tsv)) STORED;
