// Package sqlstore keeps docfs sites in SQLite (modernc.org/sqlite, pure Go):
// each site's page list as one compressed record, loaded whole at open (the
// path tree seed 003 keeps as __path_tree__), and each page's chunks as
// rows. It can share the file of the semfs index (its tables are prefixed
// doc_), or use a file of its own.
package sqlstore

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	_ "modernc.org/sqlite"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/docfs"
)

// SchemaVersion of the doc_ tables.
//
//	1: doc_sites (gzip JSON page list), doc_chunks, doc_blobs.
const SchemaVersion = 1

const schema = `
CREATE TABLE IF NOT EXISTS doc_schema (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS doc_sites (
	site    TEXT PRIMARY KEY,
	pages   BLOB NOT NULL,
	updated INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS doc_chunks (
	site TEXT NOT NULL,
	path TEXT NOT NULL,
	no   INTEGER NOT NULL,
	text TEXT NOT NULL,
	PRIMARY KEY (site, path, no)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS doc_blobs (
	site TEXT NOT NULL,
	name TEXT NOT NULL,
	data BLOB NOT NULL,
	PRIMARY KEY (site, name)
) WITHOUT ROWID;
`

// Store is a docfs.Store in one SQLite file.
type Store struct {
	db   *sql.DB
	path string
	wmu  sync.Mutex
}

var _ docfs.Store = (*Store)(nil)

// Open opens (creating if needed) the store at path.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("docs store: cannot create the directory of %s: %v", filepath.Base(path), err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("docs store: %w", err)
	}
	db.SetMaxOpenConns(4)
	s := &Store{db: db, path: path}
	if _, err := db.ExecContext(ctx, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("docs store: cannot create tables in %s: %v", filepath.Base(path), err)
	}
	var v sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT max(version) FROM doc_schema`).Scan(&v); err != nil {
		db.Close()
		return nil, fmt.Errorf("docs store: %w", err)
	}
	switch {
	case !v.Valid:
		if _, err := db.ExecContext(ctx, `INSERT INTO doc_schema(version) VALUES (?)`, SchemaVersion); err != nil {
			db.Close()
			return nil, fmt.Errorf("docs store: %w", err)
		}
	case v.Int64 > SchemaVersion:
		db.Close()
		return nil, fmt.Errorf("docs store: schema version %d is newer than this binary's %d; upgrade semfs", v.Int64, SchemaVersion)
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Pages implements docfs.Store.
func (s *Store) Pages(ctx context.Context, site string) ([]docfs.Page, error) {
	var blob []byte
	err := s.db.QueryRowContext(ctx, `SELECT pages FROM doc_sites WHERE site = ?`, site).Scan(&blob)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, semfs.PathErr("open site", site, semfs.ErrNotExist, "no such docs site; create it with 'semfs docs ingest DIR --site "+site+"'")
	}
	if err != nil {
		return nil, fmt.Errorf("docs store: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		return nil, fmt.Errorf("docs store: page list of site %q is damaged (%v); re-ingest it", site, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("docs store: page list of site %q is damaged (%v); re-ingest it", site, err)
	}
	var pages []docfs.Page
	if err := json.Unmarshal(raw, &pages); err != nil {
		return nil, fmt.Errorf("docs store: page list of site %q is damaged (%v); re-ingest it", site, err)
	}
	return pages, nil
}

// Chunks implements docfs.Store.
func (s *Store) Chunks(ctx context.Context, site, path string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT text FROM doc_chunks WHERE site = ? AND path = ? ORDER BY no`, site, path)
	if err != nil {
		return nil, fmt.Errorf("docs store: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("docs store: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// ReplaceSite implements docfs.Store in one transaction.
func (s *Store) ReplaceSite(ctx context.Context, site string, pages []docfs.Page, chunks map[string][]string) error {
	raw, err := json.Marshal(pages)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(raw)
	zw.Close()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("docs store: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM doc_chunks WHERE site = ?`, site); err != nil {
		return fmt.Errorf("docs store: %w", err)
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO doc_chunks(site, path, no, text) VALUES (?,?,?,?)`)
	if err != nil {
		return fmt.Errorf("docs store: %w", err)
	}
	defer stmt.Close()
	for p, cs := range chunks {
		for i, c := range cs {
			if _, err := stmt.ExecContext(ctx, site, p, i, c); err != nil {
				return fmt.Errorf("docs store: %w", err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO doc_sites(site, pages, updated) VALUES (?,?,strftime('%s','now'))
		ON CONFLICT(site) DO UPDATE SET pages = excluded.pages, updated = excluded.updated`, site, buf.Bytes()); err != nil {
		return fmt.Errorf("docs store: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM doc_blobs WHERE site = ?`, site); err != nil {
		return fmt.Errorf("docs store: %w", err)
	}
	return tx.Commit()
}

// Sites implements docfs.Store.
func (s *Store) Sites(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT site FROM doc_sites ORDER BY site`)
	if err != nil {
		return nil, fmt.Errorf("docs store: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// PutBlob implements docfs.Store.
func (s *Store) PutBlob(ctx context.Context, site, name string, data []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.db.ExecContext(ctx, `INSERT INTO doc_blobs(site, name, data) VALUES (?,?,?)
		ON CONFLICT(site, name) DO UPDATE SET data = excluded.data`, site, name, data)
	if err != nil {
		return fmt.Errorf("docs store: %w", err)
	}
	return nil
}

// Blob implements docfs.Store.
func (s *Store) Blob(ctx context.Context, site, name string) ([]byte, bool, error) {
	var data []byte
	err := s.db.QueryRowContext(ctx, `SELECT data FROM doc_blobs WHERE site = ? AND name = ?`, site, name).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("docs store: %w", err)
	}
	return data, true, nil
}
