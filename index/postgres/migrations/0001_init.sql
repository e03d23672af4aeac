-- Store of record: one row per file.
CREATE TABLE IF NOT EXISTS files (
	id           BIGSERIAL PRIMARY KEY,
	path         TEXT COLLATE "C" NOT NULL UNIQUE,
	created_by   TEXT NOT NULL DEFAULT '',
	task         TEXT NOT NULL DEFAULT '',
	related_apps JSONB NOT NULL DEFAULT '[]',
	summary      TEXT NOT NULL DEFAULT '',
	links        JSONB NOT NULL DEFAULT '[]',
	provenance   TEXT NOT NULL DEFAULT '',
	extra        JSONB NOT NULL DEFAULT '{}',
	groups       JSONB NOT NULL DEFAULT '[]',
	public       BOOLEAN NOT NULL DEFAULT false,
	created_at   BIGINT NOT NULL,
	updated_at   BIGINT NOT NULL,
	size         BIGINT NOT NULL DEFAULT 0,
	hash         TEXT NOT NULL DEFAULT '',
	mtime        BIGINT NOT NULL DEFAULT 0,
	state        TEXT NOT NULL DEFAULT 'pending',
	reason       TEXT NOT NULL DEFAULT '',
	ext          TEXT NOT NULL DEFAULT '',
	grep_ok      BOOLEAN NOT NULL DEFAULT false,
	tag_text     TEXT NOT NULL DEFAULT '',
	tag_hay      TEXT NOT NULL DEFAULT '',
	tag_vec      REAL[],
	tag_fresh    BOOLEAN NOT NULL DEFAULT false
);
CREATE INDEX IF NOT EXISTS files_pending ON files(path) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS files_tag_need ON files(path) WHERE NOT tag_fresh;
CREATE INDEX IF NOT EXISTS files_task ON files(task);
CREATE INDEX IF NOT EXISTS files_created_by ON files(created_by);

-- Reverse index of links, so a rename finds every file pointing at it.
CREATE TABLE IF NOT EXISTS links (
	dst TEXT COLLATE "C" NOT NULL,
	src TEXT COLLATE "C" NOT NULL,
	PRIMARY KEY (dst, src)
);
CREATE INDEX IF NOT EXISTS links_src ON links(src);

CREATE TABLE IF NOT EXISTS kv (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
