package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

const fileCols = `path, created_by, task, related_apps, summary, links, provenance, extra, groups_json, public,
	created_at, updated_at, size, hash, mtime, state, reason`

type scanner interface{ Scan(dest ...any) error }

func scanFile(s scanner) (index.File, error) {
	var f index.File
	var apps, links, extra, groups string
	var public int
	var created, updated, mtime int64
	err := s.Scan(&f.Path, &f.CreatedBy, &f.Task, &apps, &f.Summary, &links, &f.Provenance, &extra, &groups, &public,
		&created, &updated, &f.Size, &f.Hash, &mtime, &f.State, &f.Reason)
	if err != nil {
		return f, err
	}
	f.RelatedApps = decodeList(apps)
	f.Links = decodeList(links)
	f.Groups = decodeList(groups)
	if extra != "" && extra != "{}" {
		_ = json.Unmarshal([]byte(extra), &f.Extra)
	}
	f.Public = public != 0
	f.CreatedAt = time.Unix(0, created).UTC()
	f.UpdatedAt = time.Unix(0, updated).UTC()
	if mtime != 0 {
		f.ModTime = time.Unix(0, mtime).UTC()
	}
	return f, nil
}

func decodeList(s string) []string {
	if s == "" || s == "[]" {
		return nil
	}
	var out []string
	_ = json.Unmarshal([]byte(s), &out)
	return out
}

func encodeList(l []string) string {
	if len(l) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(l)
	return string(b)
}

func encodeMap(m map[string]string) string {
	if len(m) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func encodeVec(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVec(b []byte) []float32 {
	if len(b) == 0 || len(b)%4 != 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// below returns the SQL condition and arguments selecting col at or below
// root (a canonical path).
func below(col, root string) (string, []any) {
	if root == "/" || root == "" {
		return "1", nil
	}
	// '0' is the byte after '/', so [root/, root0) is everything below root.
	return "(" + col + " = ? OR (" + col + " >= ? AND " + col + " < ?))", []any{root, root + "/", root + "0"}
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// File implements index.Store.
func (ix *Index) File(ctx context.Context, path string) (index.File, error) {
	f, err := scanFile(ix.db.QueryRowContext(ctx, `SELECT `+fileCols+` FROM files WHERE path = ?`, path))
	if err == sql.ErrNoRows {
		return f, semfs.PathErr("meta", path, semfs.ErrNotExist, "")
	}
	if err != nil {
		return f, storeErr("meta", path, err)
	}
	return f, nil
}

// Files implements index.Store.
//
// It reads in one transaction and remembers, with the generation it read
// at, what a Put needs of each path's row (see seenRows): a Put of those
// paths while the generation is unchanged need not read them again.
// (Writes that build rows from stored ones read them in the write
// instead: Update, PrepareUpdate.)
func (ix *Index) Files(ctx context.Context, paths []string) (map[string]index.File, error) {
	tx, err := ix.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // BEGIN DEFERRED
	if err != nil {
		return nil, storeErr("meta", "/", err)
	}
	defer tx.Rollback()
	gen, err := ix.readGen(ctx, tx) // the first read fixes the snapshot
	if err != nil {
		return nil, storeErr("meta", "/", err)
	}
	out, rows, err := readRows(ctx, tx, paths)
	if err != nil {
		return nil, storeErr("meta", "/", err)
	}
	seen := &seenRows{gen: gen, rows: rows}
	ix.seenMu.Lock()
	ix.seen = seen
	ix.seenMu.Unlock()
	return out, nil
}

// readRows reads the rows of paths in tx, 500 paths per query, and what a
// Put needs of each (id 0 for a path without a row).
func readRows(ctx context.Context, tx *sql.Tx, paths []string) (map[string]index.File, map[string]fileRow, error) {
	out := make(map[string]index.File, len(paths))
	seen := make(map[string]fileRow, len(paths))
	for _, p := range paths {
		seen[p] = fileRow{} // id 0: no row
	}
	for len(paths) > 0 {
		n := min(len(paths), 500)
		batch := paths[:n]
		paths = paths[n:]
		args := make([]any, len(batch))
		for i, p := range batch {
			args[i] = p
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, grep_ok, `+fileCols+` FROM files WHERE path IN (`+placeholders(n)+`)`, args...)
		if err != nil {
			return nil, nil, err
		}
		for rows.Next() {
			var r fileRow
			f, err := scanFile(idScanner{rows, &r})
			if err != nil {
				rows.Close()
				return nil, nil, err
			}
			out[f.Path] = f
			seen[f.Path] = r
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, nil, err
		}
	}
	return out, seen, nil
}

// seenRows is what the last Files call read of each path's row (id 0: no
// row), at generation gen. Every write transaction that inserts, deletes
// or renumbers files rows, or changes their grep_ok, raises the
// generation (they all change the postings or the tag index), so while
// the generation is still gen the rows are still as read.
type seenRows struct {
	gen  int64
	rows map[string]fileRow
}

// takeSeen returns the rows of items' paths as the last Files call read
// them if the generation is still gen and that call read every path,
// and forgets them.
func (ix *Index) takeSeen(gen int64, items []index.Item) (map[string]fileRow, bool) {
	ix.seenMu.Lock()
	seen := ix.seen
	ix.seen = nil
	ix.seenMu.Unlock()
	if seen == nil || seen.gen != gen {
		return nil, false
	}
	return rowsOf(seen.rows, items)
}

// rowsOf returns the rows in read (from readRows: id 0 for a path read
// without a row) of items' paths that have one, or false if a path was
// not read.
func rowsOf(read map[string]fileRow, items []index.Item) (map[string]fileRow, bool) {
	out := make(map[string]fileRow, len(items))
	for _, it := range items {
		r, ok := read[it.File.Path]
		if !ok {
			return nil, false
		}
		if r.id != 0 {
			out[it.File.Path] = r
		}
	}
	return out, true
}

// idScanner scans the id and grep_ok columns before the file columns.
type idScanner struct {
	rows *sql.Rows
	r    *fileRow
}

func (s idScanner) Scan(dest ...any) error {
	return s.rows.Scan(append([]any{&s.r.id, &s.r.grep}, dest...)...)
}

// WalkFiles implements index.Store. It reads in pages, so fn may write to
// the store.
func (ix *Index) WalkFiles(ctx context.Context, root string, fn func(index.File) error) error {
	cond, args := below("path", root)
	after := ""
	for {
		q := `SELECT ` + fileCols + ` FROM files WHERE ` + cond + ` AND path > ? ORDER BY path LIMIT 1000`
		rows, err := ix.db.QueryContext(ctx, q, append(append([]any{}, args...), after)...)
		if err != nil {
			return storeErr("walk", root, err)
		}
		var page []index.File
		for rows.Next() {
			f, err := scanFile(rows)
			if err != nil {
				rows.Close()
				return storeErr("walk", root, err)
			}
			page = append(page, f)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return storeErr("walk", root, err)
		}
		for _, f := range page {
			if err := fn(f); err != nil {
				return err
			}
		}
		if len(page) < 1000 {
			return nil
		}
		after = page[len(page)-1].Path
	}
}

// PendingFiles implements index.Store.
func (ix *Index) PendingFiles(ctx context.Context, limit int) ([]string, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT path FROM files WHERE state = 'pending' ORDER BY path LIMIT ?`, limit)
	if err != nil {
		return nil, storeErr("reindex", "/", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, storeErr("reindex", "/", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
