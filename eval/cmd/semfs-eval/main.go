// Command semfs-eval runs the retrieval eval of package eval over GOROOT/src
// and, optionally, a synthetic corpus, and prints a Markdown report. See
// scripts/eval.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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
	tmp, err := os.MkdirTemp("", "semfs-eval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	f, ix, spaces, err := open(ctx, host.Tree(), tmp)
	if err != nil {
		return err
	}
	defer ix.Close()
	defer f.Close()
	st, err := build(ctx, f, ix, spaces)
	if err != nil {
		return err
	}
	fmt.Printf("## GOROOT/src eval (%d questions)\n\n", len(qs))
	fmt.Printf("corpus: %s — %d files, %.1f MB of text read; model: %s\n\n", src, st.files, float64(st.bytes)/1e6, spaces.Content.Info().Name)
	printBuild(st)

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
	if sweep {
		// Signals once per training question; fusion is cheap to redo.
		sigs := make([]meta.Signals, len(train))
		for i, qi := range train {
			if sigs[i], err = f.SearchSignals(ctx, qs[qi].Text); err != nil {
				return err
			}
		}
		tq, tr := subset(train)
		best, bw := -1.0, [2]float64{}
		for _, wv := range []float64{0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2} {
			for _, wt := range []float64{0, 0.1, 0.2, 0.4, 0.8} {
				meta.WeightVector, meta.WeightTag = wv, wt
				for i := range tr {
					tr[i]["fused-sum"] = rankedSum(sigs[i])
				}
				s := eval.Average("fused-sum", tq, tr)
				if s.MRR > best {
					best, bw = s.MRR, [2]float64{wv, wt}
				}
			}
		}
		meta.WeightVector, meta.WeightTag = bw[0], bw[1]
		fmt.Printf("fused-sum weights chosen on the %d even questions (BM25 1): vector %g, tag %g (train MRR %.3f)\n\n", len(train), bw[0], bw[1], best)
		// RRF weights on the same split.
		bestR, bwR := -1.0, [2]float64{}
		for _, wv := range []float64{0, 0.25, 0.5, 1} {
			for _, wt := range []float64{0, 0.25, 0.5, 1} {
				for i := range tr {
					tr[i]["fused-rrf"] = index.Ranked(fuseRRF(sigs[i], wv, wt))
				}
				s := eval.Average("fused-rrf", tq, tr)
				if s.MRR > bestR {
					bestR, bwR = s.MRR, [2]float64{wv, wt}
				}
			}
		}
		fmt.Printf("fused-rrf weights chosen on the even questions: vector %g, tag %g (train MRR %.3f)\n\n", bwR[0], bwR[1], bestR)
		rrfW = bwR
		eval.RRF = func(sig meta.Signals) map[string]float64 { return fuseRRF(sig, rrfW[0], rrfW[1]) }
		if rs, err = rank(); err != nil {
			return err
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
	// Latency over the questions, three rounds.
	var tq, sq []time.Duration
	for range 3 {
		for _, q := range qs {
			t0 := time.Now()
			if _, err := f.Query(ctx, q.Text, 10); err != nil {
				return err
			}
			tq = append(tq, time.Since(t0))
			t0 = time.Now()
			if _, err := f.Search(ctx, semfs.SearchRequest{Query: q.Text, Limit: 10}, func(semfs.SearchHit) error { return nil }); err != nil {
				return err
			}
			sq = append(sq, time.Since(t0))
		}
	}
	a, b := eval.Percentiles(tq)
	c, d := eval.Percentiles(sq)
	fmt.Printf("latency over %d queries: tag query p50 %v p99 %v; content search p50 %v p99 %v\n\n", len(tq), round(a), round(b), round(c), round(d))
	if synthetic > 0 {
		return runSynthetic(ctx, synthetic, qs)
	}
	return nil
}

func printBuild(st buildStats) {
	mb := float64(st.bytes) / 1e6
	fmt.Printf("| step | wall | CPU (user+sys) | rate per wall s | rate per CPU s |\n|---|---|---|---|---|\n")
	fmt.Printf("| ingest %.1f MB (read, hash, chunk, FTS5 + trigram; no embedding) | %.2fs | %.2fs | %.1f MB/s | %.1f MB/s |\n",
		mb, st.ingest.Seconds(), st.ingestCPU.Seconds(), mb/st.ingest.Seconds(), mb/st.ingestCPU.Seconds())
	fmt.Printf("| embed %d vectors (tag texts + content chunks) | %.2fs | %.2fs | %.0f/s | %.0f/s |\n", st.vectors,
		st.embed.Seconds(), st.embedCPU.Seconds(), float64(st.vectors)/st.embed.Seconds(), float64(st.vectors)/st.embedCPU.Seconds())
	fmt.Printf("| incremental re-index of %d unchanged files | %.2fs | %.2fs | | |\n\n", st.files, st.reconcile2.Seconds(), st.recon2CPU.Seconds())
}

// rrfW are the RRF weights (vector, tag) the sweep chose; BM25 has 1.
var rrfW = [2]float64{1, 1}

func fuseRRF(sig meta.Signals, wv, wt float64) map[string]float64 {
	var l [3][]string
	for _, c := range sig.BM25 {
		l[0] = append(l[0], c.Path)
	}
	for _, c := range sig.Vector {
		l[1] = append(l[1], c.Path)
	}
	l[2] = sig.TagRanking()
	return index.RRF(l[:], []float64{1, wv, wt})
}

func rankedSum(sig meta.Signals) []string { return index.Ranked(meta.Fuse(sig, meta.FusionSum)) }

func round(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }

// runSynthetic builds a corpus of n text files from a Zipf-distributed
// vocabulary in memory and measures ingest and query latency.
func runSynthetic(ctx context.Context, n int, qs []eval.Question) error {
	vocab := vocabulary(qs)
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.1, 2, uint64(len(vocab)-1))
	base := memfs.New()
	var total int64
	for i := range n {
		var b strings.Builder
		paras := 1 + rng.IntN(3)
		for range paras {
			words := 20 + rng.IntN(60)
			for w := range words {
				if w > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(vocab[zipf.Uint64()])
			}
			b.WriteString(".\n\n")
		}
		p := fmt.Sprintf("/d%03d/%s-%d.md", i%500, vocab[rng.IntN(len(vocab))], i)
		if err := semfs.WriteFile(ctx, base, p, []byte(b.String()), 0o644); err != nil {
			return err
		}
		total += int64(b.Len())
	}
	tmp, err := os.MkdirTemp("", "semfs-synth-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	f, ix, spaces, err := open(ctx, base, tmp)
	if err != nil {
		return err
	}
	defer ix.Close()
	defer f.Close()
	st, err := build(ctx, f, ix, spaces)
	if err != nil {
		return err
	}
	fmt.Printf("## synthetic corpus: %d files, %.1f MB\n\n", n, float64(total)/1e6)
	printBuild(st)
	var tq, sq []time.Duration
	for r := range 3 {
		for i, q := range qs {
			text := q.Text
			if (i+r)%3 == 0 {
				text = vocab[rng.IntN(200)] + " " + vocab[rng.IntN(len(vocab))]
			}
			t0 := time.Now()
			if _, err := f.Query(ctx, text, 10); err != nil {
				return err
			}
			tq = append(tq, time.Since(t0))
			t0 = time.Now()
			if _, err := f.Search(ctx, semfs.SearchRequest{Query: text, Limit: 10}, func(semfs.SearchHit) error { return nil }); err != nil {
				return err
			}
			sq = append(sq, time.Since(t0))
		}
	}
	a, b := eval.Percentiles(tq)
	c, d := eval.Percentiles(sq)
	fmt.Printf("latency over %d queries: tag query p50 %v p99 %v; content search p50 %v p99 %v\n\n", len(tq), round(a), round(b), round(c), round(d))
	return nil
}

// vocabulary is the words of the questions plus common English words, so
// that synthetic text shares words with the queries.
func vocabulary(qs []eval.Question) []string {
	seen := map[string]bool{}
	var out []string
	add := func(w string) {
		w = strings.ToLower(w)
		if w != "" && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	for w := range strings.FieldsSeq(common) {
		add(w)
	}
	for _, q := range qs {
		for w := range strings.FieldsSeq(q.Text) {
			add(w)
		}
	}
	return out
}

const common = `the of and to a in is it you that he was for on are with as his they be at one have this from or had by
word but what some we can out other were all there when up use your how said an each she which do their time if will way
about many then them write would like so these her long make thing see him two has look more day could go come did number
sound no most people my over know water than call first who may down side been now find any new work part take get place
made live where after back little only round man year came show every good me give our under name very through just form
sentence great think say help low line differ turn cause much mean before move right boy old too same tell does set three
want air well also play small end put home read hand port large spell add even land here must big high such follow act why
ask men change went light kind off need house picture try us again animal point mother world near build self earth father
head stand own page should country found answer school grow study still learn plant cover food sun four between state keep
eye never last let thought city tree cross farm hard start might story saw far sea draw left late run while press close
night real life few north open seem together next white children begin got walk example ease paper group always music those
both mark often letter until mile river car feet care second book carry took science eat room friend began idea fish
mountain stop once base hear horse cut sure watch color face wood main enough plain girl usual young ready above ever red
list though feel talk bird soon body dog family direct pose leave song measure door product black short numeral class wind
question happen complete ship area half rock order fire south problem piece told knew pass since top whole king space heard
best hour better true during hundred five remember step early hold west ground interest reach fast verb sing listen six
table travel less morning ten simple several vowel toward war lay against pattern slow center love person money serve
appear road map rain rule govern pull cold notice voice unit power town fine certain fly fall lead cry dark machine note
wait plan figure star box noun field rest correct able pound done beauty drive stood contain front teach week final gave
green oh quick develop ocean warm free minute strong special mind behind clear tail produce fact street inch multiply
nothing course stay wheel full force blue object decide surface deep moon island foot system busy test record boat common
gold possible plane stead dry wonder laugh thousand ago ran check game shape equate hot miss brought heat snow tire bring
yes distant fill east paint language among server client request handler buffer stream token parse error config deploy
cache index query vector model budget report invoice meeting release ticket customer account schedule backup database`
