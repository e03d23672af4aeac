package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/postgres"
	"github.com/semfs/semfs/internal/testserver"
)

// searchPlan is one SQL plan for content search: the query ranking the
// chunks that hold the terms joined by op (" && " all, " || " any), best
// first, at most limit; placeholders $1..$len(terms) are the terms and
// $len(terms)+1 the limit.
type searchPlan struct {
	name string
	sql  func(termQuery string) string
}

// termQuery is the tsquery of the terms joined by op, as the store builds
// it: each term matches its English stem or its exact form.
func termQuery(n int, op string) string {
	var tq []string
	for i := 1; i <= n; i++ {
		tq = append(tq, fmt.Sprintf(`(to_tsquery('english', $%d) || to_tsquery('simple', $%d))`, i, i))
	}
	return strings.Join(tq, op)
}

// shortest ranks the n shortest matches (by the generated column len, read
// without the tsvector), as the store does with Options.RankCandidates.
func shortest(n int) func(string) string {
	return func(q string) string {
		return `WITH q AS (SELECT ` + q + ` AS q),
			cand AS (SELECT c.id FROM chunks c CROSS JOIN q WHERE c.tsv @@ q.q ORDER BY c.len, c.id LIMIT ` + strconv.Itoa(n) + `)
			SELECT c.key, ts_rank(c.tsv, q.q, 1) AS r FROM cand JOIN chunks c ON c.id = cand.id CROSS JOIN q
			ORDER BY r DESC, c.key LIMIT $LIMIT`
	}
}

var searchPlans = []searchPlan{
	{"rank every match", func(q string) string {
		return `WITH q AS (SELECT ` + q + ` AS q)
			SELECT c.key, ts_rank(c.tsv, q.q, 1) AS r FROM chunks c CROSS JOIN q WHERE c.tsv @@ q.q
			ORDER BY r DESC, c.key LIMIT $LIMIT`
	}},
	{"rank the 4000 shortest matches", shortest(4000)},
	{"rank the 1000 shortest matches", shortest(1000)},
	{"rank the 250 shortest matches", shortest(250)},
}

// TestPGSearchPlans compares SQL plans for content search on PostgreSQL
// side by side, query by query, on one loaded database (SEMFS_BENCH=1,
// SEMFS_BENCH_SIZES: one size, default 100000), each with the store's
// all-tokens-first rule. It reports latency and, for each plan, the share
// of the first plan's top 20 it returns (the first plan ranks every
// match: the exact result).
//
// SEMFS_BENCH_PG_DSN runs on a database already holding the corpus's
// first files instead of loading one; SEMFS_BENCH_HOLD=file keeps the
// loaded server up until that file is removed (for psql experiments and
// reuse by TestIndexScale).
func TestPGSearchPlans(t *testing.T) {
	benchEnabled(t)
	ctx := context.Background()
	c := NewCorpus(1, 30000, 100)
	n := sizes("100000")[0]
	dsn := os.Getenv("SEMFS_BENCH_PG_DSN")
	if dsn == "" {
		dsn = testserver.StartPostgres(t).DSN
		pix, err := postgres.Open(ctx, dsn, postgres.Options{NoListen: true})
		if err != nil {
			t.Fatal(err)
		}
		// The bulk through Load, the last files through Put (timed), as
		// in TestIndexScale.
		bulkTo := n - min(n, putSample)
		load, build, bytes := bulkLoad(t, c, dsn, 0, bulkTo)
		t.Logf("Load of %d files: %v, then GIN index builds %v", bulkTo, rate{bulkTo, bytes, load.Seconds()}, build.Round(time.Second))
		took := make([]time.Duration, 1)
		bytes = ingest(t, c, []store{{"postgres", pix}}, bulkTo, n, took)
		t.Logf("Put of the last %d files: %v", n-bulkTo, rate{n - bulkTo, bytes, took[0].Seconds()})
		pix.Close()
		if _, err := pgExec(ctx, dsn, "VACUUM ANALYZE"); err != nil {
			t.Fatal(err)
		}
	}
	if hold := os.Getenv("SEMFS_BENCH_HOLD"); hold != "" {
		if err := os.WriteFile(hold, []byte(dsn+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("holding the server at %s until %s is removed", dsn, hold)
		for {
			if _, err := os.Stat(hold); err != nil {
				break
			}
			time.Sleep(time.Second)
		}
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	const limit = 20
	search := func(p searchPlan, terms []string) []string {
		args := make([]any, 0, len(terms)+1)
		for _, tm := range terms {
			args = append(args, tm)
		}
		args = append(args, limit)
		run := func(op string) []string {
			sql := strings.ReplaceAll(p.sql(termQuery(len(terms), op)), "$LIMIT", "$"+strconv.Itoa(len(args)))
			rows, err := conn.Query(ctx, sql, args...)
			if err != nil {
				t.Fatal(err)
			}
			keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
				var k string
				var rank float32
				err := r.Scan(&k, &rank)
				return k, err
			})
			if err != nil {
				t.Fatal(err)
			}
			return keys
		}
		if len(terms) > 1 {
			if keys := run(" && "); len(keys) >= index.AllTokensEnough(limit) {
				return keys
			}
		}
		return run(" || ")
	}
	meter, err := newCPUMeter(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	lats, cpus := make([]lat, len(searchPlans)), make([]lat, len(searchPlans))
	same := make([]float64, len(searchPlans))
	queries := c.Queries(200)
	for qi, q := range queries {
		terms := index.QueryTokens(q)
		results := make([][]string, len(searchPlans))
		for j := range searchPlans {
			k := (j + qi) % len(searchPlans)
			wall, cpu := meter.measure(func() { results[k] = search(searchPlans[k], terms) })
			lats[k], cpus[k] = append(lats[k], wall), append(cpus[k], cpu)
		}
		for k := range searchPlans {
			if len(results[0]) == 0 {
				same[k]++
				continue
			}
			hit := 0
			for _, key := range results[0] {
				if slices.Contains(results[k], key) {
					hit++
				}
			}
			same[k] += float64(hit) / float64(len(results[0]))
		}
	}
	fmt.Printf("\n| files | plan | p50 ms | p90 ms | p99 ms | CPU p50 ms | CPU p99 ms | share of the exact top %d |\n|---|---|---|---|---|---|---|---|\n", limit)
	for k, p := range searchPlans {
		fmt.Printf("| %d | %s | %s | %s | %s | %s | %s | %.3f |\n", n, p.name, ms(lats[k].pct(.5)), ms(lats[k].pct(.9)), ms(lats[k].pct(.99)),
			ms(cpus[k].pct(.5)), ms(cpus[k].pct(.99)), same[k]/float64(len(queries)))
	}
}
