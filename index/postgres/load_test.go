package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/internal/testserver"
)

// loadItems are files of every shape Put handles: with content and links,
// metadata only, binary (no grep text), several chunks.
func loadItems() []index.Item {
	now := time.Unix(1700000000, 5).UTC()
	var items []index.Item
	add := func(p, text string, links ...string) {
		f := index.File{Meta: semfs.Meta{Path: p, CreatedBy: "agent", Tags: semfs.Tags{Task: "load " + p, RelatedApps: []string{"ci"},
			Links: links, Extra: map[string]string{"k": "v"}}, CreatedAt: now, UpdatedAt: now, Size: int64(len(text))}, ModTime: now}
		it := index.Item{File: f, TagText: index.TagText(f.Meta)}
		if text != "" {
			c, state, reason := index.Analyze(p, []byte(text))
			it.Content, it.File.State, it.File.Reason = c, state, reason
		}
		items = append(items, it)
	}
	add("/docs/kestrel.md", "# Kestrels\n\nThe kestrel hovers over running fields.\n", "/docs/hawk.md", "/docs/hawk.md")
	add("/docs/hawk.md", "# Hawks\n\nHawks circle.\n")
	add("/meta-only.txt", "")
	add("/bin/blob.bin", "\x00\x01\x02binary")
	var long string
	for i := range 400 {
		long += fmt.Sprintf("Paragraph %d about falcons and their prey.\n\n", i)
	}
	add("/docs/long.md", long)
	return items
}

// dump returns every stored row a Put or Load writes, ids left out (they
// differ by insertion order), in a stable order.
func dump(t *testing.T, dsn string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var out []string
	for _, q := range []string{
		`SELECT f.path, created_by, task, related_apps::text, summary, links::text, provenance, extra::text, groups::text, public,
			created_at, updated_at, size, hash, mtime, state, reason, ext, grep_ok, tag_text, tag_hay, tag_vec IS NULL, tag_fresh,
			g.body FROM files f LEFT JOIN grep g ON g.file_id = f.id ORDER BY f.path`,
		`SELECT dst, src FROM links ORDER BY dst, src`,
		`SELECT key, path, no, start_line, end_line, text, tsv::text, vec IS NULL, fresh FROM chunks ORDER BY key`,
	} {
		rows, err := conn.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			v, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(v))
		}
		rows.Close()
	}
	return out
}

// testLoadWritesWhatPutWrites: Load stores exactly the rows Put stores for
// the same items, searchable the same way; a path already stored fails the
// whole load with ErrExist and changes nothing.
func testLoadWritesWhatPutWrites(t *testing.T, pg *testserver.Postgres) {
	ctx := context.Background()
	items := loadItems()
	putDSN, loadDSN := freshDB(t, pg), freshDB(t, pg)
	put, load := openStore(t, putDSN), openStore(t, loadDSN)
	if err := put.Put(ctx, items...); err != nil {
		t.Fatal(err)
	}
	if err := load.Load(ctx, items); err != nil {
		t.Fatal(err)
	}
	want, got := dump(t, putDSN), dump(t, loadDSN)
	if len(want) < 10 {
		t.Fatalf("Put stored only %d rows: the comparison would prove little", len(want))
	}
	if !slices.Equal(got, want) {
		for i := range max(len(got), len(want)) {
			var g, w string
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w {
				t.Fatalf("row %d differs:\n Load %s\n  Put %s", i, g, w)
			}
		}
	}
	hits, err := load.SearchChunks(ctx, index.QueryTokens("kestrel fields"), index.Filter{}, 5)
	if err != nil || len(hits) != 1 || hits[0].Path != "/docs/kestrel.md" {
		t.Fatalf("search after Load = %+v, %v", hits, err)
	}
	if c, _ := load.TagKeywordCandidates(ctx, "load /docs/hawk"); !slices.Equal(c, []string{"/docs/hawk.md"}) {
		t.Fatalf("tag keyword after Load = %v (the in-memory tag table was not refreshed?)", c)
	}

	more := loadItems()[:1]
	more[0].File.Path = "/new.md"
	again := append(more, items[1])
	if err := load.Load(ctx, again); !errors.Is(err, semfs.ErrExist) {
		t.Fatalf("Load of a stored path: %v, want ErrExist", err)
	}
	if _, err := load.File(ctx, "/new.md"); !errors.Is(err, semfs.ErrNotExist) {
		t.Fatalf("a failed Load kept /new.md: %v", err)
	}
}
