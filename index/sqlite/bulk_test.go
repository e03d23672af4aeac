package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// dumpRows returns every row of q as strings, in order.
func dumpRows(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// loggedPaths returns the paths fresh_log names (but the reset entry's
// ""), each once, sorted.
func loggedPaths(t *testing.T, ix *Index) []string {
	t.Helper()
	rows, err := ix.db.Query(`SELECT path FROM fresh_log WHERE path != ''`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			t.Fatal(err)
		}
		eachLogged(e, func(p string) { out = append(out, p) })
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// A bulk Put inserts new files rows many per statement with ids it gives
// itself; it must leave the same rows, ids and postings as putting the
// items one by one — including a path put twice in the batch, a path
// that existed before, tags, links, binary content and an item without
// content.
func TestBulkPutEqualsOneByOne(t *testing.T) {
	ctx := context.Background()
	var items []index.Item
	for i := range 300 {
		tags := semfs.Tags{Task: fmt.Sprintf("task %d", i%7)}
		if i%10 == 3 {
			tags.Links = []string{fmt.Sprintf("/n/%03d.md", i-1), "/old.md"}
			tags.Extra = map[string]string{"k": fmt.Sprint(i)}
			tags.RelatedApps = []string{"editor"}
		}
		items = append(items, item(fmt.Sprintf("/n/%03d.md", i), fmt.Sprintf("note %d about kestrels\n\nand hawks %d\n", i, i*7), tags))
	}
	bin := item("/n/blob.bin", "\x00\x01\x02binary", semfs.Tags{})
	items = append(items, bin)
	// The same paths again, later in the batch: new text and tags. Rows
	// go in 256 at a time, so /n/299.md is still waiting, /n/005.md not.
	items = append(items, item("/n/299.md", "rewritten merlin text\n", semfs.Tags{Task: "again"}))
	items = append(items, item("/n/005.md", "rewritten falcon text\n", semfs.Tags{Task: "again"}))
	items = append(items, item("/old.md", "old file, new words: osprey\n", semfs.Tags{Task: "kept"}))
	meta := items[7]
	meta.Content = nil
	meta.File.Task = "tags only"
	meta.TagText = index.TagText(meta.File.Meta)
	items = append(items, meta)

	build := func(bulk bool) *Index {
		ix := open(t, filepath.Join(t.TempDir(), "i.db"))
		if err := ix.Put(ctx, item("/old.md", "an old file about owls\n", semfs.Tags{Task: "old"})); err != nil {
			t.Fatal(err)
		}
		if bulk {
			if err := ix.Put(ctx, items...); err != nil {
				t.Fatal(err)
			}
		} else {
			for _, it := range items {
				if err := ix.Put(ctx, it); err != nil {
					t.Fatal(err)
				}
			}
		}
		ix.waitMerges()
		return ix
	}
	one, bulk := build(false), build(true)
	for _, q := range []string{
		`SELECT * FROM files ORDER BY id`,
		`SELECT id, key, start_line, end_line, text, fresh FROM chunks ORDER BY id`,
		`SELECT * FROM links ORDER BY dst, src`,
	} {
		a, b := dumpRows(t, one.db, q), dumpRows(t, bulk.db, q)
		if !slices.Equal(a, b) {
			t.Errorf("%s:\none by one: %q\nbulk:       %q", q, a, b)
		}
	}
	if n := len(dumpRows(t, bulk.db, `SELECT id FROM files`)); n != 302 {
		t.Errorf("%d files rows, want 302", n)
	}
	// Every row written is logged for other processes (new rows by
	// putItems, updates by a trigger).
	if a, b := loggedPaths(t, one), loggedPaths(t, bulk); !slices.Equal(a, b) {
		t.Errorf("paths logged in fresh_log:\none by one: %q\nbulk:       %q", a, b)
	}
	if a, b := dumpRows(t, bulk.db, `SELECT path FROM files ORDER BY path`), loggedPaths(t, bulk); !slices.Equal(a, b) {
		t.Errorf("paths logged in fresh_log: %d, files: %d", len(b), len(a))
	}
	for _, q := range []string{"kestrels", "falcon", "merlin", "osprey", "owls", "hawks 35", "hawks 2093"} {
		a, b := searchPaths(t, one, q), searchPaths(t, bulk, q)
		if !slices.Equal(a, b) {
			t.Errorf("search %q: one by one %v, bulk %v", q, a, b)
		}
	}
	if got := searchPaths(t, bulk, "falcon"); !slices.Equal(got, []string{"/n/005.md:rewritten falcon text\n"}) {
		t.Errorf("search falcon: %v", got)
	}
	if got := searchPaths(t, bulk, "merlin"); !slices.Equal(got, []string{"/n/299.md:rewritten merlin text\n"}) {
		t.Errorf("search merlin: %v", got)
	}
	if got := searchPaths(t, bulk, "owls"); len(got) != 0 {
		t.Errorf("search owls found the replaced text: %v", got)
	}
	for _, p := range []string{"kestrel", "falcon", "binary"} {
		a, b := grepPaths(t, one, p), grepPaths(t, bulk, p)
		if !slices.Equal(a, b) {
			t.Errorf("grep %q: one by one %v, bulk %v", p, a, b)
		}
	}
	f, err := bulk.File(ctx, "/n/007.md")
	if err != nil || f.Task != "tags only" || f.State != index.StateIndexed {
		t.Errorf("/n/007.md: %+v %v", f, err)
	}
	checkIDs(t, bulk)
}

// A bulk Put whose new file ids would pass the postings' range renumbers
// the files and writes again, as a single row's did.
func TestBulkPutFileIDsRenumbered(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "i.db"))
	if err := ix.Put(ctx, item("/a.txt", "alpha apple\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.db.ExecContext(ctx, `UPDATE files SET id = ? WHERE path = '/a.txt'`, int64(maxDocID)-2); err != nil {
		t.Fatal(err)
	}
	// The grep postings name the file by its old id: reopen rebuilds them.
	ix.Close()
	ix = open(t, ix.path)
	var items []index.Item
	for i := range 5 {
		items = append(items, item(fmt.Sprintf("/b%d.txt", i), fmt.Sprintf("banana %d bread\n", i), semfs.Tags{}))
	}
	if err := ix.Put(ctx, items...); err != nil {
		t.Fatal(err)
	}
	if got := searchPaths(t, ix, "banana 3"); len(got) == 0 || got[0] != "/b3.txt:banana 3 bread\n" {
		t.Errorf("search banana 3: %v", got)
	}
	checkIDs(t, ix)
}

// The values insertRows leaves out as defaults are the columns' DEFAULTs
// in the schema: a row inserted without them reads back values that each
// column's isDefault accepts (else a bulk insert would store other values
// than the ones it was given).
func TestBulkDefaultsAsBound(t *testing.T) {
	ix := open(t, filepath.Join(t.TempDir(), "i.db"))
	for _, c := range []struct {
		t      *bulkTable
		insert string
		read   string
	}{
		{&filesTable, `INSERT INTO files(id, path, created_at, updated_at) VALUES (7, '/d', 1, 1)`, `SELECT * FROM files WHERE id = 7`},
		{&chunksTable, `INSERT INTO chunks(id, key, start_line, end_line, text) VALUES (7, '/d#00000', 1, 1, 'x')`, `SELECT * FROM chunks WHERE id = 7`},
	} {
		if _, err := ix.db.Exec(c.insert); err != nil {
			t.Fatal(err)
		}
		rows, err := ix.db.Query(c.read)
		if err != nil {
			t.Fatal(err)
		}
		names, _ := rows.Columns()
		vals := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if !rows.Next() {
			t.Fatalf("%s: no row", c.read)
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		stored := map[string]any{}
		for i, n := range names {
			if v, ok := vals[i].(int64); ok {
				vals[i] = int(v) // bound as int
			}
			stored[n] = vals[i]
		}
		defaults := 0
		for i, col := range c.t.cols {
			v, ok := stored[col]
			if !ok {
				t.Errorf("%s has no column %s", c.t.name, col)
				continue
			}
			if is := c.t.isDefault[i]; is != nil {
				defaults++
				if !is(v) {
					t.Errorf("%s.%s defaults to %#v, which insertRows does not take for its default", c.t.name, col, v)
				}
			}
		}
		if want := map[string]int{"files": 11, "chunks": 2}[c.t.name]; defaults != want {
			t.Errorf("%s: %d columns left out when default, want %d", c.t.name, defaults, want)
		}
	}
	// And a value other than the default is bound.
	if filesTable.isDefault[4]("[\"editor\"]") || chunksTable.isDefault[5]([]byte{1}) || filesTable.isDefault[10](1) {
		t.Error("a value other than the default taken for it")
	}
}
