package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/postgres"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/internal/testserver"
)

func benchEnabled(t *testing.T) {
	if os.Getenv("SEMFS_BENCH") != "1" {
		t.Skip("benchmark harness: run with SEMFS_BENCH=1 (see docs/bench/scale.md)")
	}
}

func sizes(def string) []int {
	s := os.Getenv("SEMFS_BENCH_SIZES")
	if s == "" {
		s = def
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

type store struct {
	name string
	s    index.Store
}

// ingest loads files [from, to) into every store, in batches, timing each
// store separately on the same batches.
func ingest(t *testing.T, c *Corpus, stores []store, from, to int, took []time.Duration) (bytes int64) {
	ctx := context.Background()
	const batch = 500
	for lo := from; lo < to; lo += batch {
		hi := min(lo+batch, to)
		items := make([]index.Item, 0, hi-lo)
		var rows []embedding.Pending
		var vecs [][]float32
		for i := lo; i < hi; i++ {
			it, n := c.Item(i)
			bytes += int64(n)
			items = append(items, it)
			rows = append(rows, embedding.Pending{Key: it.File.Path, Text: it.TagText})
			vecs = append(vecs, c.Vector(it.File.Path))
		}
		for k, s := range stores {
			start := time.Now()
			if err := s.s.Put(ctx, items...); err != nil {
				t.Fatalf("%s Put: %v", s.name, err)
			}
			took[k] += time.Since(start)
			if err := s.s.(embedding.BatchStore).SetEmbeddings(ctx, embedding.SpaceTags, rows, vecs); err != nil {
				t.Fatalf("%s SetEmbeddings: %v", s.name, err)
			}
		}
	}
	return bytes
}

type lat []time.Duration

func (l lat) pct(p float64) time.Duration {
	s := slices.Clone(l)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }

// TestIndexScale compares the PostgreSQL and SQLite stores on the store
// work of a tag query (keyword candidates of each word + Nearest over tag
// vectors), of content search (SearchChunks), and on bulk ingest, at
// growing sizes (SEMFS_BENCH_SIZES, default 10000,100000).
func TestIndexScale(t *testing.T) {
	benchEnabled(t)
	ctx := context.Background()
	pg := testserver.StartPostgres(t)
	pix, err := postgres.Open(ctx, pg.DSN, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pix.Close()
	six, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer six.Close()
	stores := []store{{"sqlite", six}, {"postgres", pix}}
	c := NewCorpus(1, 30000, 100)
	queries := c.Queries(200)
	loaded := 0
	fmt.Printf("\n| files | store | ingest files/s | ingest MB/s | tag p50 ms | tag p90 ms | search p50 ms | search p90 ms |\n|---|---|---|---|---|---|---|---|\n")
	for _, n := range sizes("10000,100000") {
		took := make([]time.Duration, len(stores))
		bytes := ingest(t, c, stores, loaded, n, took)
		added := n - loaded
		loaded = n
		// Let PostgreSQL's statistics catch up, as autovacuum would.
		if _, err := pgExec(ctx, pg.DSN, "VACUUM ANALYZE"); err != nil {
			t.Fatal(err)
		}
		tagLat := make([]lat, len(stores))
		searchLat := make([]lat, len(stores))
		hits := make([]int, len(stores))
		for qi, q := range queries {
			words := strings.Fields(q)
			qvec := c.Vector("query " + q)
			toks := index.QueryTokens(q)
			for j := range stores {
				k := (j + qi) % len(stores) // alternate who goes first
				s := stores[k].s
				start := time.Now()
				for _, w := range words {
					if _, err := s.TagKeywordCandidates(ctx, w); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := s.Nearest(ctx, embedding.SpaceTags, qvec, 50, 0.2); err != nil {
					t.Fatal(err)
				}
				tagLat[k] = append(tagLat[k], time.Since(start))
				start = time.Now()
				h, err := s.SearchChunks(ctx, toks, index.Filter{}, 20)
				if err != nil {
					t.Fatal(err)
				}
				searchLat[k] = append(searchLat[k], time.Since(start))
				hits[k] += len(h)
			}
		}
		for k, s := range stores {
			sec := took[k].Seconds()
			fmt.Printf("| %d | %s | %.0f | %.2f | %s | %s | %s | %s |\n", n, s.name,
				float64(added)/sec, float64(bytes)/sec/1e6,
				ms(tagLat[k].pct(0.5)), ms(tagLat[k].pct(0.9)), ms(searchLat[k].pct(0.5)), ms(searchLat[k].pct(0.9)))
		}
		ratio := func(a, b time.Duration) string { return fmt.Sprintf("%.2f", a.Seconds()/b.Seconds()) }
		fmt.Printf("| %d | PG/SQLite | %.2f (throughput) | | %s | %s | %s | %s |\n", n, took[0].Seconds()/took[1].Seconds(),
			ratio(tagLat[1].pct(0.5), tagLat[0].pct(0.5)), ratio(tagLat[1].pct(0.9), tagLat[0].pct(0.9)),
			ratio(searchLat[1].pct(0.5), searchLat[0].pct(0.5)), ratio(searchLat[1].pct(0.9), searchLat[0].pct(0.9)))
		if hits[0] == 0 || hits[1] == 0 {
			t.Errorf("no search hits (sqlite %d, postgres %d): the workload is empty", hits[0], hits[1])
		}
		t.Logf("%d files: search hits sqlite %d postgres %d", n, hits[0], hits[1])
	}
}
