package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/internal/testserver"
	"github.com/semfs/semfs/meta"
)

// BenchmarkMetaSave measures a small file's save (WriteFile: the bytes,
// then the row built from the stored one) and a tag (SetTags) through a
// meta layer over PostgreSQL: new files, rewrites of 64 files whose rows
// exist, and tags of those files.
func BenchmarkMetaSave(b *testing.B) {
	pg := testserver.StartPostgres(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.DSN)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE savebench"); err != nil {
		b.Fatal(err)
	}
	conn.Close(ctx)
	ix, err := Open(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/savebench?sslmode=disable", pg.Port), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	host, err := hostfs.Open(b.TempDir(), hostfs.ReadWrite)
	if err != nil {
		b.Fatal(err)
	}
	defer host.Close()
	m, err := meta.New(host, ix, meta.Options{PeerPoll: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	app := semfs.WithPrincipal(ctx, semfs.Principal{ID: "app"})
	data := []byte("a small note about the deploy pipeline\n")
	b.Run("new", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if err := m.WriteFile(app, fmt.Sprintf("/new/%d.md", i), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rewrite", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if err := m.WriteFile(app, fmt.Sprintf("/new/%d.md", 1+i%64), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tag", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if err := m.SetTags(ctx, fmt.Sprintf("/new/%d.md", 1+i%64), semfs.Tags{Groups: []string{"finance"}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPut measures Put of files with content straight into the
// store: one file of 3 chunks replacing its stored chunks, and 16 such
// files in one Put (their chunks locked and deleted in one statement).
func BenchmarkPut(b *testing.B) {
	pg := testserver.StartPostgres(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.DSN)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE putbench"); err != nil {
		b.Fatal(err)
	}
	conn.Close(ctx)
	ix, err := Open(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/putbench?sslmode=disable", pg.Port), Options{NoListen: true})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	item := func(p string, v int) index.Item {
		m := semfs.Meta{Path: p, CreatedBy: "bench", Tags: semfs.Tags{Task: "bench"}}
		c := &index.Content{GrepOK: true, Grep: p}
		for no := range 3 {
			c.Chunks = append(c.Chunks, index.Chunk{No: no, StartLine: no + 1, EndLine: no + 1, Text: fmt.Sprintf("version %d of chunk %d of %s", v, no, p)})
		}
		return index.Item{File: index.File{Meta: m, State: index.StateIndexed}, TagText: index.TagText(m), Content: c}
	}
	b.Run("one", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if err := ix.Put(ctx, item(fmt.Sprintf("/one/%d.md", i%64), i)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("16", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			items := make([]index.Item, 16)
			for j := range items {
				items[j] = item(fmt.Sprintf("/many/%d/%d.md", i%8, j), i)
			}
			if err := ix.Put(ctx, items...); err != nil {
				b.Fatal(err)
			}
		}
	})
}
