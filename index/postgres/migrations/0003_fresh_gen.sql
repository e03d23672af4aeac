-- semfs_gen counts the committed write transactions: each raises n and
-- names the value in its notifications, so a daemon can tell whether its
-- memory has caught up with what is committed (fresh.go).
CREATE TABLE IF NOT EXISTS semfs_gen (id INTEGER PRIMARY KEY CHECK (id = 1), n BIGINT NOT NULL);
INSERT INTO semfs_gen VALUES (1, 0) ON CONFLICT DO NOTHING;
