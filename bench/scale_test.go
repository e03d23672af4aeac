package bench

import (
	"context"
	"encoding/json"
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

// ingest puts files [from, to) into every store through Put, in batches of
// 500 (one transaction each), timing each store separately on the same
// batches, and stores each file's tag vector (not timed).
func ingest(t *testing.T, c *Corpus, stores []store, from, to int, took []time.Duration) (bytes int64) {
	const batch = 500
	for lo := from; lo < to; lo += batch {
		items, n := c.Items(lo, min(lo+batch, to))
		bytes += n
		for k, s := range stores {
			start := time.Now()
			if err := s.s.Put(context.Background(), items...); err != nil {
				t.Fatalf("%s Put: %v", s.name, err)
			}
			took[k] += time.Since(start)
			setTagVectors(t, c, s, items)
		}
	}
	return bytes
}

// bulkLoad adds files [from, to) to a PostgreSQL store through Load (COPY),
// 10 000 files a transaction, plus their tag vectors, and returns the time
// Load took.
func bulkLoad(t *testing.T, c *Corpus, pix *postgres.Index, from, to int) (took time.Duration, bytes int64) {
	const batch = 10000
	for lo := from; lo < to; lo += batch {
		items, n := c.Items(lo, min(lo+batch, to))
		bytes += n
		start := time.Now()
		if err := pix.Load(context.Background(), items); err != nil {
			t.Fatalf("postgres Load: %v", err)
		}
		took += time.Since(start)
		setTagVectors(t, c, store{"postgres", pix}, items)
	}
	return took, bytes
}

func setTagVectors(t *testing.T, c *Corpus, s store, items []index.Item) {
	rows := make([]embedding.Pending, len(items))
	vecs := make([][]float32, len(items))
	for i, it := range items {
		rows[i] = embedding.Pending{Key: it.File.Path, Text: it.TagText}
		vecs[i] = c.Vector(it.File.Path)
	}
	if err := s.s.(embedding.BatchStore).SetEmbeddings(context.Background(), embedding.SpaceTags, rows, vecs); err != nil {
		t.Fatalf("%s SetEmbeddings: %v", s.name, err)
	}
}

type lat []time.Duration

func (l lat) pct(p float64) time.Duration {
	s := slices.Clone(l)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }

// putSample is how many files at the end of each size are put into both
// stores through Put, timed: the ingest rate of a store that already holds
// about that many files.
const putSample = 10000

// rate is a timed ingest: files, bytes, seconds.
type rate struct {
	Files   int     `json:"files"`
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
}

func (r rate) String() string {
	return fmt.Sprintf("%.0f files/s, %.2f MB/s", float64(r.Files)/r.Seconds, float64(r.Bytes)/r.Seconds/1e6)
}

// sqliteMark records what a kept SQLite index (SEMFS_BENCH_DIR) holds: its
// first Files corpus files, and the Put rate measured on the last
// putSample files of each size.
type sqliteMark struct {
	Files int             `json:"files"`
	Put   map[string]rate `json:"put"`
}

// TestIndexScale compares the PostgreSQL and SQLite stores on the store
// work of a tag query (keyword candidates of each word + Nearest over tag
// vectors), of content search (SearchChunks), and on ingest, at growing
// sizes (SEMFS_BENCH_SIZES, default 10000,100000).
//
// Both stores take the last putSample files of each size through Put,
// timed, batch by batch in turn (the ingest columns). The files before
// them go into SQLite through Put too, and into PostgreSQL through the
// bulk Load (COPY, the same rows), which makes 1M files feasible; the
// SQLite index can be kept across runs in SEMFS_BENCH_DIR (it is reused
// when it holds the corpus's first files, with the rates measured when it
// was built).
func TestIndexScale(t *testing.T) {
	benchEnabled(t)
	ctx := context.Background()
	pg := testserver.StartPostgres(t)
	pix, err := postgres.Open(ctx, pg.DSN, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pix.Close()
	dir := os.Getenv("SEMFS_BENCH_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	markPath := filepath.Join(dir, "sqlite-corpus1.json")
	var mark sqliteMark
	if b, err := os.ReadFile(markPath); err == nil {
		if err := json.Unmarshal(b, &mark); err != nil {
			t.Fatalf("%s: %v (delete it and the index next to it to rebuild)", markPath, err)
		}
	}
	if mark.Put == nil {
		mark.Put = map[string]rate{}
	}
	six, err := sqlite.Open(ctx, filepath.Join(dir, "sqlite-corpus1.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer six.Close()
	c := NewCorpus(1, 30000, 100)
	// The kept index holds files [0, mark.Files) of the corpus: the last
	// one is there, the next one is not.
	if mark.Files > 0 {
		last, _ := c.Item(mark.Files - 1)
		next, _ := c.Item(mark.Files)
		_, errLast := six.File(ctx, last.File.Path)
		_, errNext := six.File(ctx, next.File.Path)
		if errLast != nil || errNext == nil {
			t.Fatalf("the SQLite index in %s does not hold the %d files %s says (%v): delete both to rebuild", dir, mark.Files, markPath, errLast)
		}
	}
	sq, ps := store{"sqlite", six}, store{"postgres", pix}
	stores := []store{sq, ps}
	queries := c.Queries(200)
	loaded := 0
	fmt.Printf("\n| files | store | ingest (Put, last %d files) | tag p50 ms | tag p99 ms | search p50 ms | search p99 ms |\n|---|---|---|---|---|---|---|\n", putSample)
	for _, n := range sizes("10000,100000") {
		bulkTo := max(loaded, n-putSample)
		if mark.Files < bulkTo {
			ingest(t, c, []store{sq}, max(loaded, mark.Files), bulkTo, make([]time.Duration, 1))
			mark.Files = bulkTo
		}
		if bulkTo > loaded {
			took, bytes := bulkLoad(t, c, pix, loaded, bulkTo)
			t.Logf("%d files: PostgreSQL Load of %d files: %v", n, bulkTo-loaded, rate{bulkTo - loaded, bytes, took.Seconds()})
		}
		var put [2]rate
		if r, ok := mark.Put[strconv.Itoa(n)]; ok && mark.Files >= n {
			put[0] = r
			took := make([]time.Duration, 1)
			b := ingest(t, c, []store{ps}, bulkTo, n, took)
			put[1] = rate{n - bulkTo, b, took[0].Seconds()}
		} else {
			took := make([]time.Duration, 2)
			b := ingest(t, c, stores, bulkTo, n, took)
			put[0], put[1] = rate{n - bulkTo, b, took[0].Seconds()}, rate{n - bulkTo, b, took[1].Seconds()}
			mark.Files, mark.Put[strconv.Itoa(n)] = n, put[0]
			b2, _ := json.Marshal(mark)
			if err := os.WriteFile(markPath, b2, 0o644); err != nil {
				t.Fatal(err)
			}
		}
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
			fmt.Printf("| %d | %s | %v | %s | %s | %s | %s |\n", n, s.name, put[k],
				ms(tagLat[k].pct(0.5)), ms(tagLat[k].pct(0.99)), ms(searchLat[k].pct(0.5)), ms(searchLat[k].pct(0.99)))
		}
		ratio := func(a, b time.Duration) string { return fmt.Sprintf("%.2f", a.Seconds()/b.Seconds()) }
		fmt.Printf("| %d | PG/SQLite | %.2f× throughput | %s | %s | %s | %s |\n", n, put[0].Seconds/put[1].Seconds,
			ratio(tagLat[1].pct(0.5), tagLat[0].pct(0.5)), ratio(tagLat[1].pct(0.99), tagLat[0].pct(0.99)),
			ratio(searchLat[1].pct(0.5), searchLat[0].pct(0.5)), ratio(searchLat[1].pct(0.99), searchLat[0].pct(0.99)))
		if hits[0] == 0 || hits[1] == 0 {
			t.Errorf("no search hits (sqlite %d, postgres %d): the workload is empty", hits[0], hits[1])
		}
		t.Logf("%d files: search hits sqlite %d postgres %d", n, hits[0], hits[1])
	}
}
