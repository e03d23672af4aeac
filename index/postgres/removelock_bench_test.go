package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/internal/testserver"
)

// BenchmarkRemoveRename measures the writers that lock the rows they
// found first (lockRows) on one daemon: a file's Rename (a file linking
// to it), a Put of a file of 3 chunks and its Remove, and a Put of 16
// such files in a directory and the directory's Remove.
func BenchmarkRemoveRename(b *testing.B) {
	pg := testserver.StartPostgres(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.DSN)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE rmbench"); err != nil {
		b.Fatal(err)
	}
	conn.Close(ctx)
	ix, err := Open(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/rmbench?sslmode=disable", pg.Port), Options{NoListen: true})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	b.Run("rename-file", func(b *testing.B) {
		src := contentItem("/r/src.md", 0, 1)
		src.File.Links = []string{"/r/a.md"}
		if err := ix.Put(ctx, src, contentItem("/r/a.md", 0, 3)); err != nil {
			b.Fatal(err)
		}
		from, to := "/r/a.md", "/r/b.md"
		for b.Loop() {
			if err := ix.Rename(ctx, from, to); err != nil {
				b.Fatal(err)
			}
			from, to = to, from
		}
	})
	b.Run("put-remove-file", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			p := fmt.Sprintf("/f/%d.md", i)
			if err := ix.Put(ctx, contentItem(p, i, 3)); err != nil {
				b.Fatal(err)
			}
			if err := ix.Remove(ctx, p, false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("put-remove-dir16", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			items := make([]index.Item, 16)
			for j := range items {
				items[j] = contentItem(fmt.Sprintf("/d/%d/%d.md", i, j), i, 3)
			}
			if err := ix.Put(ctx, items...); err != nil {
				b.Fatal(err)
			}
			if err := ix.Remove(ctx, fmt.Sprintf("/d/%d", i), true); err != nil {
				b.Fatal(err)
			}
		}
	})
}
