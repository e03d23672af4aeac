package postgres

import (
	"context"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// tsvSQL is the chunk tsvector of a path text and a body text (both
// index.IndexText), given as SQL expressions: the path analysed as 'simple'
// with weight A, the body as 'english' with weight B. Put, Rename and Load
// all build it here, so they store the same vectors.
func tsvSQL(path, body string) string {
	return `setweight(to_tsvector('simple', ` + path + `), 'A') || setweight(to_tsvector('english', ` + body + `), 'B')`
}

// Load adds files that are not in the store yet, in bulk: the same rows Put
// writes for them (files, links, chunks with their tsvector, grep text),
// streamed with COPY in one transaction instead of a statement per row. It
// is for importing a large tree (the 1M-file benchmark loads through it).
// A path that is already stored, or given twice, fails the whole load with
// semfs.ErrExist: update existing files with Put.
func (ix *Index) Load(ctx context.Context, items []index.Item) error {
	if len(items) == 0 {
		return nil
	}
	for _, it := range items {
		if hasNUL(it.File.Meta) {
			return semfs.PathErr("index", it.File.Path, semfs.ErrInvalid, "a tag value contains a NUL byte; remove it and load again")
		}
	}
	return ix.write(ctx, "index", items[0].File.Path, func(tx pgx.Tx) (*change, error) {
		ch := &change{}
		seen := make(map[string]bool, len(items))
		for _, it := range items {
			if seen[it.File.Path] {
				return nil, errLoadExists(it.File.Path)
			}
			seen[it.File.Path] = true
			ch.Paths = append(ch.Paths, it.File.Path)
		}
		// The lock of all paths, exclusively (see pathLocks): no Put,
		// Update or Rename, which could insert a row the load then
		// waits for while waiting for one the load inserted, runs
		// meanwhile.
		b := &pgx.Batch{}
		queuePathLocks(b, nil, true)
		b.Queue(`SELECT path FROM files WHERE path = ANY($1) ORDER BY path LIMIT 1`, ch.Paths)
		stored, err := lockedRows(ctx, tx, b, b.Len()-1, pgx.RowTo[string])
		if err != nil {
			return nil, err
		}
		if len(stored) > 0 {
			return nil, errLoadExists(stored[0])
		}
		return ch, loadTx(ctx, tx, items)
	})
}

func errLoadExists(path string) error {
	return semfs.PathErr("index", path, semfs.ErrExist, "already in the index or given twice; Load adds new files only, Put updates them")
}

func loadTx(ctx context.Context, tx pgx.Tx, items []index.Item) error {
	var files, links, chunks, grep [][]any
	for _, it := range items {
		f := it.File
		state := f.State
		if state == "" {
			state = index.StatePending
		}
		grepOK := it.Content != nil && it.Content.GrepOK
		files = append(files, []any{f.Path, f.CreatedBy, f.Task, list(f.RelatedApps), f.Summary, list(f.Links), f.Provenance,
			kvmap(f.Extra), list(f.Groups), f.Public, nanos(f.CreatedAt), nanos(f.UpdatedAt), f.Size, f.Hash, nanos(f.ModTime),
			state, f.Reason, index.Ext(f.Path), grepOK, it.TagText, tagHay(f.Meta), false})
		var dsts []string
		for _, l := range f.Links {
			if !slices.Contains(dsts, l) {
				dsts = append(dsts, l)
				links = append(links, []any{l, f.Path})
			}
		}
		if it.Content == nil {
			continue
		}
		pathText := index.IndexText(f.Path)
		for _, c := range it.Content.Chunks {
			chunks = append(chunks, []any{index.ChunkKey(f.Path, c.No), f.Path, c.No, c.StartLine, c.EndLine, c.Text,
				pathText, index.IndexText(c.Text)})
		}
		if grepOK {
			grep = append(grep, []any{f.Path, strings.ToLower(it.Content.Grep)})
		}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"files"}, []string{"path", "created_by", "task", "related_apps", "summary",
		"links", "provenance", "extra", "groups", "public", "created_at", "updated_at", "size", "hash", "mtime", "state",
		"reason", "ext", "grep_ok", "tag_text", "tag_hay", "tag_fresh"}, pgx.CopyFromRows(files)); err != nil {
		return err
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"links"}, []string{"dst", "src"}, pgx.CopyFromRows(links)); err != nil {
		return err
	}
	// The tsvector is computed by the server, as in Put: the chunks go
	// through a temporary table holding the texts to analyse.
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE load_chunks (key TEXT, path TEXT, no INTEGER, start_line INTEGER,
		end_line INTEGER, text TEXT, path_text TEXT, body_text TEXT) ON COMMIT DROP`); err != nil {
		return err
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"load_chunks"}, []string{"key", "path", "no", "start_line", "end_line",
		"text", "path_text", "body_text"}, pgx.CopyFromRows(chunks)); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO chunks(key, path, no, start_line, end_line, text, tsv, vec, fresh)
		SELECT key, path, no, start_line, end_line, text, `+tsvSQL("path_text", "body_text")+`, NULL, false FROM load_chunks`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE load_grep (path TEXT COLLATE "C", body TEXT) ON COMMIT DROP`); err != nil {
		return err
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"load_grep"}, []string{"path", "body"}, pgx.CopyFromRows(grep)); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO grep(file_id, body) SELECT f.id, g.body FROM load_grep g JOIN files f ON f.path = g.path`)
	return err
}
