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
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
			if err := setTagVectors(c, s.s, items); err != nil {
				t.Fatalf("%s SetEmbeddings: %v", s.name, err)
			}
		}
	}
	return bytes
}

// bulkLoad adds files [from, to) to the PostgreSQL database at dsn through
// Load (COPY), 10 000 files a transaction, from two connections at once,
// plus their tag vectors, as an initial import would: the GIN indexes
// (full text, trigrams) are dropped first and built again at the end with
// CREATE INDEX, since growing them row by row makes a load of 1M files take
// hours. It returns the wall time Load and the index builds took.
func bulkLoad(t *testing.T, c *Corpus, dsn string, from, to int) (load, build time.Duration, bytes int64) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND indexdef LIKE '% USING gin %' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Name, Def string }])
	if err != nil || len(defs) == 0 {
		t.Fatalf("no GIN index found (%v): the store's schema changed?", err)
	}
	for _, d := range defs {
		if _, err := conn.Exec(ctx, `DROP INDEX `+d.Name); err != nil {
			t.Fatal(err)
		}
	}
	const batch, workers = 10000, 2
	next := make(chan int)
	go func() {
		for lo := from; lo < to; lo += batch {
			next <- lo
		}
		close(next)
	}()
	var mu sync.Mutex
	var wg sync.WaitGroup
	var failed error
	start := time.Now()
	for range workers {
		ix, err := postgres.Open(ctx, dsn, postgres.Options{NoListen: true})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lo := range next {
				items, n := c.Items(lo, min(lo+batch, to))
				err := ix.Load(ctx, items)
				if err == nil {
					err = setTagVectors(c, ix, items)
				}
				mu.Lock()
				bytes += n
				if err != nil && failed == nil {
					failed = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		t.Fatalf("postgres Load: %v", failed)
	}
	load = time.Since(start)
	start = time.Now()
	if _, err := conn.Exec(ctx, `SET maintenance_work_mem = '1GB'`); err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		if _, err := conn.Exec(ctx, d.Def); err != nil {
			t.Fatal(err)
		}
	}
	return load, time.Since(start), bytes
}

func setTagVectors(c *Corpus, s index.Store, items []index.Item) error {
	rows := make([]embedding.Pending, len(items))
	vecs := make([][]float32, len(items))
	for i, it := range items {
		rows[i] = embedding.Pending{Key: it.File.Path, Text: it.TagText}
		vecs[i] = c.Vector(it.File.Path)
	}
	return s.(embedding.BatchStore).SetEmbeddings(context.Background(), embedding.SpaceTags, rows, vecs)
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

func writeMark(t *testing.T, path string, m sqliteMark) {
	b, _ := json.Marshal(m)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// holds returns how many of the corpus's first files s holds, counting
// in whole batches of 500 (the batch Put and Load commit at once) from
// at least.
func holds(t *testing.T, c *Corpus, s index.Store, at int) int {
	has := func(i int) bool {
		it, _ := c.Item(i)
		_, err := s.File(context.Background(), it.File.Path)
		return err == nil
	}
	if at > 0 && !has(at-1) {
		t.Fatalf("the index does not hold the corpus's first %d files as recorded: start from an empty one", at)
	}
	for has(at) {
		at += 500
	}
	return at
}

// TestIndexScale compares the PostgreSQL and SQLite stores on the store
// work of a tag query (keyword candidates of each word + Nearest over tag
// vectors), of content search (SearchChunks), and on ingest, at growing
// sizes (SEMFS_BENCH_SIZES, default 10000,100000).
//
// The last putSample files of each size go into the stores through Put,
// timed, batch by batch in turn (the ingest columns). The files before
// them go into SQLite through Put too, and into PostgreSQL through the
// bulk Load (COPY, the same rows), which makes 1M files feasible.
//
// Loaded stores can be reused: SEMFS_BENCH_DIR keeps the SQLite index
// (with the Put rates measured while building it), SEMFS_BENCH_PG_DSN
// names a PostgreSQL database already holding the corpus's first files
// (TestPGSearchPlans with SEMFS_BENCH_HOLD leaves one), and
// SEMFS_BENCH_STORES=sqlite or =postgres builds and measures that store alone. A reused
// store must not hold more files than the first size.
func TestIndexScale(t *testing.T) {
	benchEnabled(t)
	ctx := context.Background()
	c := NewCorpus(1, 30000, 100)
	var stores []store
	held := map[string]int{}
	only := os.Getenv("SEMFS_BENCH_STORES") // "sqlite" or "postgres": that store alone

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
	if only != "postgres" {
		six, err := sqlite.Open(ctx, filepath.Join(dir, "sqlite-corpus1.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer six.Close()
		stores = append(stores, store{"sqlite", six})
		mark.Files = holds(t, c, six, mark.Files)
		held["sqlite"] = mark.Files
	}

	var pix *postgres.Index
	var dsn string
	if only != "sqlite" {
		dsn = os.Getenv("SEMFS_BENCH_PG_DSN")
		if dsn == "" {
			dsn = testserver.StartPostgres(t).DSN
		}
		var err error
		pix, err = postgres.Open(ctx, dsn, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer pix.Close()
		stores = append(stores, store{"postgres", pix})
		held["postgres"] = holds(t, c, pix, 0)
	}
	meters := make([]cpuMeter, len(stores))
	for k, s := range stores {
		if s.name == "postgres" {
			m, err := newCPUMeter(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			meters[k] = m
		}
	}
	queries := c.Queries(200)
	fmt.Printf("\n| files | store | ingest (Put, last %d files) | tag p50 ms | tag p99 ms | tag CPU p50 ms | search p50 ms | search p99 ms | search CPU p50 ms |\n|---|---|---|---|---|---|---|---|---|\n", putSample)
	for _, n := range sizes("10000,100000") {
		for name, h := range held {
			if h > n {
				t.Fatalf("the %s index holds %d files, more than the size %d: start from an empty one", name, h, n)
			}
		}
		bulkTo := n - min(n, putSample)
		for only != "postgres" && held["sqlite"] < bulkTo {
			to := min(bulkTo, held["sqlite"]+10000)
			ingest(t, c, stores[:1], held["sqlite"], to, make([]time.Duration, 1))
			held["sqlite"], mark.Files = to, to
			writeMark(t, markPath, mark)
		}
		if pix != nil && held["postgres"] < bulkTo {
			load, build, bytes := bulkLoad(t, c, dsn, held["postgres"], bulkTo)
			t.Logf("%d files: PostgreSQL Load of %d files: %v, then GIN index builds %v", n, bulkTo-held["postgres"],
				rate{bulkTo - held["postgres"], bytes, load.Seconds()}, build.Round(time.Second))
			held["postgres"] = bulkTo
		}
		// The timed Put of the last files, in the stores that lack them.
		var timed []store
		for _, s := range stores {
			if held[s.name] < n {
				if held[s.name] != bulkTo {
					t.Fatalf("the %s index holds %d files, inside the timed part (%d, %d]: start from an empty one", s.name, held[s.name], bulkTo, n)
				}
				timed = append(timed, s)
			}
		}
		put := map[string]rate{}
		if len(timed) > 0 {
			took := make([]time.Duration, len(timed))
			b := ingest(t, c, timed, bulkTo, n, took)
			for k, s := range timed {
				put[s.name] = rate{n - bulkTo, b, took[k].Seconds()}
				held[s.name] = n
			}
		}
		if only != "postgres" {
			if r, ok := put["sqlite"]; ok {
				mark.Put[strconv.Itoa(n)] = r
			}
			mark.Files = held["sqlite"]
			writeMark(t, markPath, mark)
			if _, ok := put["sqlite"]; !ok {
				put["sqlite"] = mark.Put[strconv.Itoa(n)]
			}
		}
		if pix != nil {
			// Let PostgreSQL's statistics catch up, as autovacuum would.
			if _, err := pgExec(ctx, dsn, "VACUUM ANALYZE"); err != nil {
				t.Fatal(err)
			}
		}
		tagLat, tagCPU := make([]lat, len(stores)), make([]lat, len(stores))
		searchLat, searchCPU := make([]lat, len(stores)), make([]lat, len(stores))
		hits := make([]int, len(stores))
		for qi, q := range queries {
			words := strings.Fields(q)
			qvec := c.Vector("query " + q)
			toks := index.QueryTokens(q)
			for j := range stores {
				k := (j + qi) % len(stores) // alternate who goes first
				s := stores[k].s
				var err error
				wall, cpu := meters[k].measure(func() {
					for _, w := range words {
						if _, err = s.TagKeywordCandidates(ctx, w); err != nil {
							return
						}
					}
					_, err = s.Nearest(ctx, embedding.SpaceTags, qvec, 50, 0.2)
				})
				if err != nil {
					t.Fatal(err)
				}
				tagLat[k], tagCPU[k] = append(tagLat[k], wall), append(tagCPU[k], cpu)
				var h []index.ChunkHit
				wall, cpu = meters[k].measure(func() { h, err = s.SearchChunks(ctx, toks, index.Filter{}, 20) })
				if err != nil {
					t.Fatal(err)
				}
				searchLat[k], searchCPU[k] = append(searchLat[k], wall), append(searchCPU[k], cpu)
				hits[k] += len(h)
			}
		}
		for k, s := range stores {
			ingest := "measured when loaded"
			if r, ok := put[s.name]; ok && r.Seconds > 0 {
				ingest = r.String()
			}
			fmt.Printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", n, s.name, ingest,
				ms(tagLat[k].pct(0.5)), ms(tagLat[k].pct(0.99)), ms(tagCPU[k].pct(0.5)),
				ms(searchLat[k].pct(0.5)), ms(searchLat[k].pct(0.99)), ms(searchCPU[k].pct(0.5)))
		}
		if len(stores) == 2 {
			ratio := func(a, b time.Duration) string { return fmt.Sprintf("%.2f", a.Seconds()/b.Seconds()) }
			tput := "—"
			if put["sqlite"].Seconds > 0 && put["postgres"].Seconds > 0 {
				tput = fmt.Sprintf("%.2f× throughput", put["sqlite"].Seconds/put["postgres"].Seconds)
			}
			fmt.Printf("| %d | PG/SQLite | %s | %s | %s | %s | %s | %s | %s |\n", n, tput,
				ratio(tagLat[1].pct(0.5), tagLat[0].pct(0.5)), ratio(tagLat[1].pct(0.99), tagLat[0].pct(0.99)),
				ratio(tagCPU[1].pct(0.5), tagCPU[0].pct(0.5)),
				ratio(searchLat[1].pct(0.5), searchLat[0].pct(0.5)), ratio(searchLat[1].pct(0.99), searchLat[0].pct(0.99)),
				ratio(searchCPU[1].pct(0.5), searchCPU[0].pct(0.5)))
		}
		for k, s := range stores {
			if hits[k] == 0 {
				t.Errorf("no %s search hits: the workload is empty", s.name)
			}
			t.Logf("%d files: %s search hits %d", n, s.name, hits[k])
		}
	}
}
