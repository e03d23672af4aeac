package postgres

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/internal/testserver"
)

// testNextLookupSeesOtherDaemon: B's first lookup after A's write
// returns shows it — no polling — and so do A's own lookups.
func testNextLookupSeesOtherDaemon(t *testing.T, pg *testserver.Postgres) {
	dsn := freshDB(t, pg)
	ctx := context.Background()
	a := openStore(t, dsn)
	b := openStore(t, dsn)
	for round := range 20 { // notifications race the lookup: try often
		f := index.File{}
		f.Path, f.Task = "/shared/x.md", "deploy pipeline"
		if err := a.Put(ctx, index.Item{File: f, TagText: "deploy pipeline /shared/x.md"}); err != nil {
			t.Fatal(err)
		}
		if err := a.SetEmbedding(ctx, embedding.SpaceTags, "/shared/x.md", "deploy pipeline /shared/x.md", []float32{0, 1}); err != nil {
			t.Fatal(err)
		}
		for name, ix := range map[string]*Index{"A": a, "B": b} {
			if _, ok := ix.Vector(ctx, embedding.SpaceTags, "/shared/x.md"); !ok {
				t.Fatalf("round %d: %s: no vector right after A's SetEmbedding returned", round, name)
			}
			if got, _ := ix.TagKeywordCandidates(ctx, "pi"); !slices.Equal(got, []string{"/shared/x.md"}) {
				t.Fatalf("round %d: %s: candidates for pi = %v right after A's Put returned", round, name, got)
			}
		}
		if err := b.Remove(ctx, "/shared", true); err != nil {
			t.Fatal(err)
		}
		for name, ix := range map[string]*Index{"A": a, "B": b} {
			hits, err := ix.Nearest(ctx, embedding.SpaceTags, []float32{0, 1}, 5, 0.5)
			if err != nil || len(hits) != 0 {
				t.Fatalf("round %d: %s: nearest = %v, %v right after B's Remove returned; want none", round, name, hits, err)
			}
		}
	}
}

// BenchmarkFreshVector measures a vector lookup from memory with the
// freshness check (a listening store: one SELECT of semfs_gen) and
// without (NoListen: no check, as every lookup was before).
//
//	go test -run '^$' -bench FreshVector ./index/postgres
func BenchmarkFreshVector(b *testing.B) {
	pg := testserver.StartPostgres(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.DSN)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE freshbench"); err != nil {
		b.Fatal(err)
	}
	conn.Close(ctx)
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/freshbench?sslmode=disable", pg.Port)
	for _, c := range []struct {
		name string
		opts Options
	}{{"checked", Options{}}, {"unchecked", Options{NoListen: true}}} {
		ix, err := Open(ctx, dsn, c.opts)
		if err != nil {
			b.Fatal(err)
		}
		f := index.File{}
		f.Path = "/x.md"
		if err := ix.Put(ctx, index.Item{File: f, TagText: "x"}); err != nil {
			b.Fatal(err)
		}
		if err := ix.SetEmbedding(ctx, embedding.SpaceTags, "/x.md", "x", []float32{0, 1}); err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, ok := ix.Vector(ctx, embedding.SpaceTags, "/x.md"); !ok {
					b.Fatal("no vector")
				}
			}
		})
		ix.Close()
	}
}
