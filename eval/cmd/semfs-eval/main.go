// Command semfs-eval runs the retrieval eval of package eval over GOROOT/src
// and, optionally, a synthetic corpus, and prints a Markdown report. See
// scripts/eval.sh.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/embedding/models"
	"github.com/semfs/semfs/eval"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/meta"
)

func main() {
	src := flag.String("src", filepath.Join(runtime.GOROOT(), "src"), "corpus: a host directory")
	qpath := flag.String("questions", "eval/testdata/goroot_questions.tsv", "questions TSV")
	synthetic := flag.Int("synthetic", 0, "also measure latency on a synthetic corpus of this many files (0: skip)")
	sweep := flag.Bool("sweep", true, "choose fusion weights on the even questions, report the odd ones")
	onlySynthetic := flag.Bool("only-synthetic", false, "skip the GOROOT eval (needs -synthetic)")
	flag.StringVar(&indexDir, "index", "", "keep the indexes under this directory and reuse them on the next run (default: a temporary directory, removed)")
	flag.StringVar(&dumpPath, "dump", "", "write every question's top 10 per method, its answers and its signals (path, score) to this JSON file")
	flag.BoolVar(&noReconcile, "no-reconcile", false, "with -index: measure the kept indexes as they are, without bringing them in line with the corpus first (which re-reads it)")
	flag.IntVar(&latencyRounds, "latency-rounds", 3, "rounds over the questions for the latency figures (0: skip)")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the latency rounds (queries only) to this file")
	flag.Parse()
	var err error
	if *onlySynthetic {
		var qs []eval.Question
		if qs, err = eval.LoadQuestions(*qpath, *src); err == nil {
			err = runSynthetic(context.Background(), *synthetic, qs)
		}
	} else {
		err = run(context.Background(), *src, *qpath, *synthetic, *sweep)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "semfs-eval:", err)
		os.Exit(1)
	}
}

var (
	indexDir, dumpPath string
	cpuProfile         string
	latencyRounds      int
	noReconcile        bool
)

// workDir returns the directory for the index named name and a function
// that removes it unless -index asked to keep it.
func workDir(name string) (string, func(), error) {
	if indexDir == "" {
		dir, err := os.MkdirTemp("", "semfs-"+name+"-")
		return dir, func() { os.RemoveAll(dir) }, err
	}
	dir := filepath.Join(indexDir, name)
	return dir, func() {}, os.MkdirAll(dir, 0o755)
}

func open(ctx context.Context, base semfs.FS, dir string) (*meta.FS, *sqlite.Index, embedding.Spaces, error) {
	ix, err := sqlite.Open(ctx, filepath.Join(dir, "index.db"))
	if err != nil {
		return nil, nil, embedding.Spaces{}, err
	}
	spaces, err := models.Default()
	if err != nil {
		return nil, nil, spaces, err
	}
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	f, err := meta.New(base, ix, meta.Options{Spaces: spaces, Logger: quiet})
	return f, ix, spaces, err
}

// cpuTime is the process's user+system CPU time so far: with other work
// on the machine, rates per CPU second are the comparable numbers.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type buildStats struct {
	files      int
	bytes      int64
	ingest     time.Duration
	ingestCPU  time.Duration
	embedCPU   time.Duration
	recon2CPU  time.Duration
	embed      time.Duration
	vectors    int
	reconcile2 time.Duration
}

func build(ctx context.Context, f *meta.FS, ix *sqlite.Index, spaces embedding.Spaces) (buildStats, error) {
	var st buildStats
	t0, c0 := time.Now(), cpuTime()
	rep, err := f.Reconcile(ctx, meta.ReconcileOptions{})
	if err != nil {
		return st, err
	}
	st.ingest, st.ingestCPU = time.Since(t0), cpuTime()-c0
	st.files, st.bytes = rep.Files, rep.Bytes
	fmt.Fprintf(os.Stderr, "ingest: %d files, %d bytes in %v\n", st.files, st.bytes, st.ingest)
	t0, c0 = time.Now(), cpuTime()
	for _, s := range []struct {
		name string
		e    embedding.Embedder
	}{{embedding.SpaceTags, spaces.Tags}, {embedding.SpaceContent, spaces.Content}} {
		w := &embedding.Worker{Store: ix, Space: s.name, Embedder: s.e, Batch: 512,
			Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))}
		ds, err := w.Drain(ctx)
		if err != nil {
			return st, err
		}
		st.vectors += ds.Embedded
	}
	st.embed, st.embedCPU = time.Since(t0), cpuTime()-c0
	fmt.Fprintf(os.Stderr, "embed: %d vectors in %v\n", st.vectors, st.embed)
	t0, c0 = time.Now(), cpuTime()
	rep, err = f.Reconcile(ctx, meta.ReconcileOptions{})
	if err != nil {
		return st, err
	}
	st.reconcile2, st.recon2CPU = time.Since(t0), cpuTime()-c0
	if rep.Unchanged != rep.Files {
		return st, fmt.Errorf("second reconcile changed files: %+v", rep)
	}
	// Every file must have its tag vector and every chunk its content
	// vector, or the vector signals are measured on a partial index.
	chk, err := ix.Check(ctx, false)
	if err != nil {
		return st, err
	}
	fmt.Fprintf(os.Stderr, "index: %d files (%d skipped), %d tag vectors, %d chunks, %d chunk vectors\n",
		chk.Files, chk.Skipped, chk.TagVectors, chk.Chunks, chk.ChunkVectors)
	if chk.TagVectors != chk.Files || chk.ChunkVectors != chk.Chunks {
		return st, fmt.Errorf("vectors missing after the drain: %+v", chk)
	}
	return st, nil
}

func run(ctx context.Context, src, qpath string, synthetic int, sweep bool) error {
	qs, err := eval.LoadQuestions(qpath, src)
	if err != nil {
		return err
	}
	host, err := hostfs.Open(src, hostfs.ReadOnly)
	if err != nil {
		return err
	}
	defer host.Close()
	tmp, done, err := workDir("goroot")
	if err != nil {
		return err
	}
	defer done()
	f, ix, spaces, err := open(ctx, host.Tree(), tmp)
	if err != nil {
		return err
	}
	defer ix.Close()
	defer f.Close()
	fmt.Printf("## GOROOT/src eval (%d questions)\n\n", len(qs))
	if noReconcile {
		fmt.Printf("corpus: %s — the index kept in %s, not reconciled; models: tags %s, content %s\n\n", src, tmp, spaces.Tags.Info().Name, spaces.Content.Info().Name)
	} else {
		st, err := build(ctx, f, ix, spaces)
		if err != nil {
			return err
		}
		fmt.Printf("corpus: %s — %d files, %.1f MB of text read; models: tags %s, content %s\n\n", src, st.files, float64(st.bytes)/1e6, spaces.Tags.Info().Name, spaces.Content.Info().Name)
		printBuild(st)
	}

	rank := func() ([]eval.Rankings, error) {
		rs := make([]eval.Rankings, len(qs))
		for i, q := range qs {
			r, err := eval.Rank(ctx, f, q.Text)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", q.Text, err)
			}
			rs[i] = r
		}
		return rs, nil
	}
	// BM25 path-column weight.
	fmt.Printf("BM25 path-column weight (body weight 1), all questions:\n\n| path weight | R@10 | MRR |\n|---|---|---|\n")
	bestPW, bestMRR := sqlite.WeightPath, -1.0
	for _, pw := range []float64{1, 3, 6, 10, 16} {
		sqlite.WeightPath = pw
		rs := make([]eval.Rankings, len(qs))
		for i, q := range qs {
			hits, err := ix.SearchChunks(ctx, index.QueryTokens(q.Text), index.Filter{}, 200)
			if err != nil {
				return err
			}
			seen := map[string]bool{}
			rs[i] = eval.Rankings{}
			for _, h := range hits {
				if !seen[h.Path] {
					seen[h.Path] = true
					rs[i]["bm25"] = append(rs[i]["bm25"], h.Path)
				}
			}
		}
		s := eval.Average("bm25", qs, rs)
		fmt.Printf("| %g | %.3f | %.3f |\n", pw, s.Recall10, s.MRR)
		if s.MRR > bestMRR {
			bestPW, bestMRR = pw, s.MRR
		}
	}
	sqlite.WeightPath = bestPW
	fmt.Printf("\nchosen path weight: %g\n\n", bestPW)
	rs, err := rank()
	if err != nil {
		return err
	}
	var train, test []int
	for i := range qs {
		if i%2 == 0 {
			train = append(train, i)
		} else {
			test = append(test, i)
		}
	}
	subset := func(idx []int) ([]eval.Question, []eval.Rankings) {
		var q []eval.Question
		var r []eval.Rankings
		for _, i := range idx {
			q = append(q, qs[i])
			r = append(r, rs[i])
		}
		return q, r
	}
	// The search as shipped is ranked before a sweep changes the weights.
	shipped := make([][]string, len(rs))
	for i := range rs {
		shipped[i] = rs[i]["search"]
	}
	if sweep {
		// Signals once per training question; fusion is cheap to redo.
		sigs := make([]meta.Signals, len(train))
		for i, qi := range train {
			if sigs[i], err = f.SearchSignals(ctx, qs[qi].Text); err != nil {
				return err
			}
		}
		tq, tr := subset(train)
		// Both metrics count (the issue asks the fused search to beat
		// every signal in each), so a setting is judged by its Recall@10 +
		// MRR on the training half; the first best in grid order wins.
		judge := func(method string, fuse func(meta.Signals) []string) float64 {
			for i := range tr {
				tr[i][method] = fuse(sigs[i])
			}
			s := eval.Average(method, tq, tr)
			return s.Recall10 + s.MRR
		}
		best, bw := -1.0, [2]float64{}
		for _, wv := range []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1, 1.2} {
			for _, wt := range []float64{0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1} {
				meta.WeightVector, meta.WeightTag = wv, wt
				if s := judge("fused-sum", rankedSum); s > best+1e-9 {
					best, bw = s, [2]float64{wv, wt}
				}
			}
		}
		meta.WeightVector, meta.WeightTag = bw[0], bw[1]
		fmt.Printf("fused-sum weights chosen on the %d even questions (BM25 1): vector %g, tag %g (train R@10+MRR %.3f)\n\n", len(train), bw[0], bw[1], best)
		bestR, bwR := -1.0, [3]float64{}
		for _, k := range []float64{10, 20, 40, 60} {
			for _, wv := range []float64{0, 0.1, 0.25, 0.5, 0.75, 1} {
				for _, wt := range []float64{0, 0.1, 0.25, 0.5, 0.75, 1} {
					meta.RRFK, meta.RRFWeightVector, meta.RRFWeightTag = k, wv, wt
					if s := judge("fused-rrf", rankedRRF); s > bestR+1e-9 {
						bestR, bwR = s, [3]float64{k, wv, wt}
					}
				}
			}
		}
		meta.RRFK, meta.RRFWeightVector, meta.RRFWeightTag = bwR[0], bwR[1], bwR[2]
		fmt.Printf("fused-rrf chosen on the even questions: k %g, vector %g, tag %g (BM25 1; train R@10+MRR %.3f)\n\n", bwR[0], bwR[1], bwR[2], bestR)
		if rs, err = rank(); err != nil {
			return err
		}
		for i := range rs {
			rs[i]["search"] = shipped[i]
		}
	}
	for _, part := range []struct {
		name string
		idx  []int
	}{{"all questions", nil}, {"held-out odd questions", test}} {
		q, r := qs, rs
		if part.idx != nil {
			q, r = subset(part.idx)
		}
		fmt.Printf("%s (%d):\n\n| method | Recall@10 | MRR |\n|---|---|---|\n", part.name, len(q))
		for _, m := range eval.Methods {
			s := eval.Average(m, q, r)
			fmt.Printf("| %s | %.3f | %.3f |\n", m, s.Recall10, s.MRR)
		}
		fmt.Println()
	}
	if dumpPath != "" {
		if err := dump(ctx, f, dumpPath, qs, rs); err != nil {
			return err
		}
	}
	// Latency over the questions, three rounds.
	var texts []string
	for range latencyRounds {
		for _, q := range qs {
			texts = append(texts, q.Text)
		}
	}
	if err := latency(ctx, f, texts); err != nil {
		return err
	}
	if synthetic > 0 {
		return runSynthetic(ctx, synthetic, qs)
	}
	return nil
}

// dump writes each question's answers and every method's top 10 as JSON,
// for reading where a method fails.
func dump(ctx context.Context, f *meta.FS, path string, qs []eval.Question, rs []eval.Rankings) error {
	type scored struct {
		Path  string  `json:"path"`
		Score float64 `json:"score"`
	}
	type row struct {
		Question string              `json:"question"`
		Answers  []string            `json:"answers"`
		Top      map[string][]string `json:"top"`
		Signals  map[string][]scored `json:"signals"`
	}
	rows := make([]row, len(qs))
	for i, q := range qs {
		rows[i] = row{Question: q.Text, Answers: q.Answers, Top: map[string][]string{}, Signals: map[string][]scored{}}
		for m, r := range rs[i] {
			rows[i].Top[m] = r[:min(10, len(r))]
		}
		sig, err := f.SearchSignals(ctx, q.Text)
		if err != nil {
			return err
		}
		for _, c := range sig.BM25 {
			rows[i].Signals["bm25"] = append(rows[i].Signals["bm25"], scored{c.Path, c.Score})
		}
		for _, c := range sig.Vector {
			rows[i].Signals["vector"] = append(rows[i].Signals["vector"], scored{c.Path, c.Score})
		}
		paths, scores := sig.TagScores()
		for j, p := range paths {
			rows[i].Signals["tag"] = append(rows[i].Signals["tag"], scored{p, scores[j]})
		}
	}
	b, err := json.MarshalIndent(rows, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func printBuild(st buildStats) {
	mb := float64(st.bytes) / 1e6
	fmt.Printf("| step | wall | CPU (user+sys) | rate per wall s | rate per CPU s |\n|---|---|---|---|---|\n")
	fmt.Printf("| ingest %.1f MB (read, hash, chunk, full-text and grep postings; no embedding) | %.2fs | %.2fs | %.1f MB/s | %.1f MB/s |\n",
		mb, st.ingest.Seconds(), st.ingestCPU.Seconds(), mb/st.ingest.Seconds(), mb/st.ingestCPU.Seconds())
	fmt.Printf("| embed %d vectors (tag texts + content chunks) | %.2fs | %.2fs | %.0f/s | %.0f/s |\n", st.vectors,
		st.embed.Seconds(), st.embedCPU.Seconds(), float64(st.vectors)/st.embed.Seconds(), float64(st.vectors)/st.embedCPU.Seconds())
	fmt.Printf("| incremental re-index of %d unchanged files | %.2fs | %.2fs | | |\n\n", st.files, st.reconcile2.Seconds(), st.recon2CPU.Seconds())
}

func rankedSum(sig meta.Signals) []string { return index.Ranked(meta.Fuse(sig, meta.FusionSum)) }

func rankedRRF(sig meta.Signals) []string { return index.Ranked(meta.Fuse(sig, meta.FusionRRF)) }

func round(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }

// runSynthetic builds a corpus of n text files from a Zipf-distributed
// vocabulary in memory and measures ingest and query latency.
func runSynthetic(ctx context.Context, n int, qs []eval.Question) error {
	vocab := eval.Vocabulary(qs)
	base := memfs.New()
	files := n
	if noReconcile {
		files = 0 // the kept index is measured as it is
	}
	total, err := eval.SyntheticCorpus(ctx, base, files, vocab)
	if err != nil {
		return err
	}
	tmp, done, err := workDir(fmt.Sprintf("synthetic-%d", n))
	if err != nil {
		return err
	}
	defer done()
	f, ix, spaces, err := open(ctx, base, tmp)
	if err != nil {
		return err
	}
	defer ix.Close()
	defer f.Close()
	if noReconcile {
		fmt.Printf("## synthetic corpus: the index kept in %s, not reconciled\n\n", tmp)
	} else {
		st, err := build(ctx, f, ix, spaces)
		if err != nil {
			return err
		}
		fmt.Printf("## synthetic corpus: %d files, %.1f MB\n\n", n, float64(total)/1e6)
		printBuild(st)
	}
	return latency(ctx, f, eval.SyntheticQueries(qs, vocab, 3, rand.New(rand.NewPCG(5, 6))))
}

// latency runs each text as a tag query (limit 10) and as a content search
// (page of 10) and prints, for each, the wall-clock p50 and p99 and the
// process CPU time (user+sys) per query, mean and median: other work on a
// shared machine inflates the wall times much more than the CPU time.
func latency(ctx context.Context, f *meta.FS, texts []string) error {
	if len(texts) == 0 {
		return nil
	}
	if cpuProfile != "" {
		out, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		defer out.Close()
		if err := pprof.StartCPUProfile(out); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var tq, sq, tc, sc []time.Duration
	for _, text := range texts {
		t0, c0 := time.Now(), cpuTime()
		if _, err := f.Query(ctx, text, 10); err != nil {
			return err
		}
		tq, tc = append(tq, time.Since(t0)), append(tc, cpuTime()-c0)
		t0, c0 = time.Now(), cpuTime()
		if _, err := f.Search(ctx, semfs.SearchRequest{Query: text, Limit: 10}, func(semfs.SearchHit) error { return nil }); err != nil {
			return err
		}
		sq, sc = append(sq, time.Since(t0)), append(sc, cpuTime()-c0)
	}
	line := func(wall, cpu []time.Duration) string {
		p50, p99 := eval.Percentiles(wall)
		c50, _ := eval.Percentiles(cpu)
		var sum time.Duration
		for _, c := range cpu {
			sum += c
		}
		return fmt.Sprintf("p50 %v p99 %v (CPU per query: mean %v, median %v)", round(p50), round(p99), round(sum/time.Duration(len(cpu))), round(c50))
	}
	fmt.Printf("latency over %d queries: tag query %s; content search %s\n\n", len(texts), line(tq, tc), line(sq, sc))
	return nil
}
