package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/postgres"
	"github.com/semfs/semfs/internal/testserver"
)

// TestPGSearchPlans compares SQL plans for content search on PostgreSQL
// side by side, query by query, on one loaded database (SEMFS_BENCH=1,
// SEMFS_BENCH_SIZES: one size, default 100000).
func TestPGSearchPlans(t *testing.T) {
	benchEnabled(t)
	ctx := context.Background()
	pg := testserver.StartPostgres(t)
	pix, err := postgres.Open(ctx, pg.DSN, postgres.Options{NoListen: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pix.Close()
	c := NewCorpus(1, 30000, 100)
	n := sizes("100000")[0]
	// The bulk through Load, the last files through Put (timed), as in
	// TestIndexScale.
	bulkTo := n - min(n, putSample)
	load, build, bytes := bulkLoad(t, c, pix, pg.DSN, 0, bulkTo)
	t.Logf("Load of %d files: %v, then GIN index builds %v", bulkTo, rate{bulkTo, bytes, load.Seconds()}, build.Round(time.Second))
	took := make([]time.Duration, 1)
	bytes = ingest(t, c, []store{{"postgres", pix}}, bulkTo, n, took)
	t.Logf("Put of the last %d files: %v", n-bulkTo, rate{n - bulkTo, bytes, took[0].Seconds()})
	if _, err := pgExec(ctx, pg.DSN, "VACUUM ANALYZE"); err != nil {
		t.Fatal(err)
	}
	if hold := os.Getenv("SEMFS_BENCH_HOLD"); hold != "" {
		// Keep the loaded server up for manual plan experiments (psql)
		// until the file named by SEMFS_BENCH_HOLD is removed.
		if err := os.WriteFile(hold, []byte(pg.DSN+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("holding the server at %s until %s is removed", pg.DSN, hold)
		for {
			if _, err := os.Stat(hold); err != nil {
				break
			}
			time.Sleep(time.Second)
		}
	}
	conn, err := pgx.Connect(ctx, pg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	plans := map[string]string{
		"rank all, fetch all": `WITH q AS (SELECT to_tsquery('english', $1) || to_tsquery('simple', $1) AS q)
			SELECT c.path, c.no, c.start_line, c.end_line, c.text, ts_rank(c.tsv, q.q) AS r
			FROM chunks c CROSS JOIN q WHERE c.tsv @@ q.q ORDER BY r DESC, c.key LIMIT $2`,
		"rank all, fetch top": `WITH q AS (SELECT to_tsquery('english', $1) || to_tsquery('simple', $1) AS q),
			top AS (SELECT c.id, c.key, ts_rank(c.tsv, q.q) AS r FROM chunks c CROSS JOIN q WHERE c.tsv @@ q.q ORDER BY r DESC, c.key LIMIT $2)
			SELECT c.path, c.no, c.start_line, c.end_line, c.text, top.r FROM top JOIN chunks c ON c.id = top.id ORDER BY top.r DESC, top.key`,
	}
	names := []string{"rank all, fetch all", "rank all, fetch top"}
	lats := make([]lat, len(names))
	for qi, q := range c.Queries(100) {
		var terms []string
		for _, tok := range index.QueryTokens(q) {
			terms = append(terms, tok)
		}
		tq := strings.Join(terms, " | ")
		var first []string
		for j := range names {
			k := (j + qi) % len(names)
			start := time.Now()
			rows, err := conn.Query(ctx, plans[names[k]], tq, 20)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for rows.Next() {
				v, _ := rows.Values()
				got = append(got, fmt.Sprint(v[0], v[1]))
			}
			rows.Close()
			lats[k] = append(lats[k], time.Since(start))
			if first == nil {
				first = got
			} else if strings.Join(first, ",") != strings.Join(got, ",") {
				t.Errorf("query %q: plans disagree", q)
			}
		}
	}
	for k, name := range names {
		fmt.Printf("| %d | %s | %s | %s |\n", n, name, ms(lats[k].pct(.5)), ms(lats[k].pct(.9)))
	}
	if os.Getenv("SEMFS_BENCH_EXPLAIN") != "" {
		q := c.Queries(1)[0]
		rows, _ := conn.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+plans[names[0]], strings.Join(index.QueryTokens(q), " | "), 20)
		for rows.Next() {
			var line string
			rows.Scan(&line)
			fmt.Println(line)
		}
		rows.Close()
	}
}
