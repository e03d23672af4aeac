package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// An index of schema version 1 (files_task and files_created_by holding
// every row) is migrated on open to version 2 (partial indexes), keeps its
// rows and derived data, and a task filter then uses the partial index.
func TestMigrateTo2PartialIndexes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	ix := open(t, path)
	if err := ix.Put(ctx,
		item("/a.md", "hello world\n", semfs.Tags{Task: "greet"}),
		item("/b.md", "hello there\n", semfs.Tags{}),
	); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	// Make it what version 1 wrote.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DROP INDEX files_task`, `CREATE INDEX files_task ON files(task)`,
		`DROP INDEX files_created_by`, `CREATE INDEX files_created_by ON files(created_by)`,
		`DELETE FROM schema_version WHERE version > 1`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	db.Close()

	ix = open(t, path)
	if len(ix.Repaired) > 0 {
		t.Fatalf("the migration rebuilt derived data: %v", ix.Repaired)
	}
	var v int
	if err := ix.db.QueryRow(`SELECT max(version) FROM schema_version`).Scan(&v); err != nil || v != SchemaVersion || v < 2 {
		t.Fatalf("schema version %d (%v), want %d", v, err, SchemaVersion)
	}
	for name, where := range map[string]string{"files_task": "WHERE task != ''", "files_created_by": "WHERE created_by != ''"} {
		var def string
		if err := ix.db.QueryRow(`SELECT sql FROM sqlite_master WHERE name = ?`, name).Scan(&def); err != nil || !strings.Contains(def, where) {
			t.Errorf("%s: %q (%v), want %q", name, def, err, where)
		}
	}
	hits, err := ix.SearchChunks(ctx, index.QueryTokens("hello"), index.Filter{Task: "greet"}, 10)
	if err != nil || len(hits) != 1 || hits[0].Path != "/a.md" {
		t.Fatalf("task filter after the migration: %+v %v", hits, err)
	}
	hits, err = ix.SearchChunks(ctx, index.QueryTokens("hello"), index.Filter{CreatedBy: "app"}, 10)
	if err != nil || len(hits) != 2 {
		t.Fatalf("created_by filter after the migration: %+v %v", hits, err)
	}
	var detail strings.Builder
	rows, err := ix.db.Query(`EXPLAIN QUERY PLAN `+filesChunks+` WHERE f.task = ? AND f.task != ''`, "greet")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, parent, notused int
		var d string
		if err := rows.Scan(&id, &parent, &notused, &d); err != nil {
			t.Fatal(err)
		}
		detail.WriteString(d + "; ")
	}
	rows.Close()
	if !strings.Contains(detail.String(), "INDEX files_task (task=?)") {
		t.Errorf("task filter plan %q does not use files_task", detail.String())
	}
	ix.Close()
	if re := open(t, path); len(re.Repaired) > 0 {
		t.Fatalf("reopen repaired %v", re.Repaired)
	}
}
