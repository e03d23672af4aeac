-- Store of record: one row per file, tags as JSON columns.
CREATE TABLE files (
	id           INTEGER PRIMARY KEY,
	path         TEXT NOT NULL UNIQUE,
	created_by   TEXT NOT NULL DEFAULT '',
	task         TEXT NOT NULL DEFAULT '',
	related_apps TEXT NOT NULL DEFAULT '[]',
	summary      TEXT NOT NULL DEFAULT '',
	links        TEXT NOT NULL DEFAULT '[]',
	provenance   TEXT NOT NULL DEFAULT '',
	extra        TEXT NOT NULL DEFAULT '{}',
	groups_json  TEXT NOT NULL DEFAULT '[]',
	public       INTEGER NOT NULL DEFAULT 0,
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL,
	size         INTEGER NOT NULL DEFAULT 0,
	hash         TEXT NOT NULL DEFAULT '',
	mtime        INTEGER NOT NULL DEFAULT 0,
	state        TEXT NOT NULL DEFAULT 'pending',
	reason       TEXT NOT NULL DEFAULT '',
	ext          TEXT NOT NULL DEFAULT '',
	grep_ok      INTEGER NOT NULL DEFAULT 0,
	tag_text     TEXT NOT NULL DEFAULT '',
	tag_vec      BLOB,
	tag_fresh    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX files_pending ON files(path) WHERE state = 'pending';
CREATE INDEX files_tag_need ON files(path) WHERE tag_fresh = 0;
CREATE INDEX files_task ON files(task);
CREATE INDEX files_created_by ON files(created_by);

-- Reverse index of links, so a rename finds every file pointing at it.
CREATE TABLE links (
	dst TEXT NOT NULL,
	src TEXT NOT NULL,
	PRIMARY KEY (dst, src)
) WITHOUT ROWID;
CREATE INDEX links_src ON links(src);

CREATE TABLE kv (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;
