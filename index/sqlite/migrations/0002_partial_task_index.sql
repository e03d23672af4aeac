-- Most files carry no task and no created_by (a bulk ingest of files
-- written behind the daemon's back): indexing them under '' cost two
-- B-tree inserts per new row and served no query (filters never ask for
-- the empty value). Queries add task != '' / created_by != '' to reach
-- these partial indexes.
DROP INDEX files_task;
CREATE INDEX files_task ON files(task) WHERE task != '';
DROP INDEX files_created_by;
CREATE INDEX files_created_by ON files(created_by) WHERE created_by != '';
