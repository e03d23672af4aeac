CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE TABLE IF NOT EXISTS chunks (
	id         BIGSERIAL PRIMARY KEY,
	key        TEXT COLLATE "C" NOT NULL UNIQUE,
	path       TEXT COLLATE "C" NOT NULL,
	no         INTEGER NOT NULL,
	start_line INTEGER NOT NULL,
	end_line   INTEGER NOT NULL,
	text       TEXT NOT NULL,
	tsv        TSVECTOR NOT NULL,
	len        INTEGER GENERATED ALWAYS AS (length(tsv)) STORED,
	vec        REAL[],
	fresh      BOOLEAN NOT NULL DEFAULT false
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path, no);
CREATE INDEX IF NOT EXISTS chunks_need ON chunks(key) WHERE NOT fresh;
CREATE INDEX IF NOT EXISTS chunks_tsv ON chunks USING GIN (tsv);
CREATE TABLE IF NOT EXISTS grep (
	file_id BIGINT PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
	body    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS grep_trgm ON grep USING GIN (body gin_trgm_ops);
CREATE INDEX IF NOT EXISTS files_hay_trgm ON files USING GIN (tag_hay gin_trgm_ops);
