package embedding

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Worker fills the missing and stale vectors of one space in the background:
// after a marker reset, after saves whose inline embedding failed, and for
// rows written without one. It is resumable by construction: every pass asks
// the Store for what is still missing, paging by key, so a crash or a failing
// row loses nothing.
//
// Set the fields, then call Run (or Drain for one pass); do not change them
// afterwards.
type Worker struct {
	Store    Store
	Space    string
	Embedder Embedder
	Batch    int           // rows per Embed call; default 25
	Interval time.Duration // time between passes; default 30s
	// MeasureEvery is the least time between two telemetry measurements
	// (default 10 min): a daemon under a stream of writes empties its
	// queue every few seconds, and each measurement reads every vector of
	// the space. The space is measured sooner when it has grown by half
	// since the last measurement.
	MeasureEvery time.Duration
	Logger       *slog.Logger // default slog.Default()
	// Yield, when set, is called before each batch of a pass and the
	// worker waits for it to return. The daemon sets it to hold the
	// drain back while programs stream requests to the mount, so that
	// embedding — the heaviest background work — leaves the cores to
	// them. It must return within a bounded time (a stream that never
	// pauses must still be drained) and at once when ctx is done.
	Yield func(ctx context.Context)

	once sync.Once
	kick chan struct{}

	mu        sync.Mutex
	progress  Progress
	telemetry Telemetry
	// doneAtMeasure is progress.Done when telemetry was last measured.
	doneAtMeasure int
}

// Stats describes one drain pass.
type Stats struct {
	Embedded  int // rows that got a vector
	Failed    int // rows whose embedding failed; retried next pass
	Remaining int // rows still needing a vector after the pass; 0 if the pass failed
}

// Progress is what doctor and the CLI show about a worker.
type Progress struct {
	Done      int       // rows embedded since the worker started (drain and EmbedNow)
	Failed    int       // rows that failed in the last pass
	Remaining int       // rows needing a vector, as of the last pass or EmbedNow
	LastPass  time.Time // end of the last pass; zero before the first
	LastError string    // the last pass's error, "" if it succeeded
}

// Telemetry is the nearest-neighbour similarity distribution of a space's
// vectors, computed when the queue last drained. It sanity-checks the model's
// DuplicateThreshold against real data: a p90 near or above it means most
// rows would be reported as duplicates of something.
type Telemetry struct {
	When    time.Time
	Vectors int // vectors in the space
	Sampled int // rows whose nearest neighbour was measured
	P50     float32
	P90     float32
	Max     float32
}

// Telemetry bounds: nearest neighbours are searched among at most
// telemetryPool sampled vectors for at most telemetryQueries of them.
const (
	telemetryPool    = 2000
	telemetryQueries = 200
)

func (w *Worker) init() {
	w.once.Do(func() { w.kick = make(chan struct{}, 1) })
}

func (w *Worker) batch() int {
	if w.Batch > 0 {
		return w.Batch
	}
	return 25
}

func (w *Worker) logger() *slog.Logger {
	if w.Logger != nil {
		return w.Logger
	}
	return slog.Default()
}

// Kick wakes Run for a pass now, without waiting for the interval. It never
// blocks; kicks while a pass runs coalesce into one more pass.
func (w *Worker) Kick() {
	w.init()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Run drains the queue now, then every Interval and whenever Kick is called,
// until ctx is done; it returns ctx's error. A failing pass is logged and
// retried at the next tick.
func (w *Worker) Run(ctx context.Context) error {
	w.init()
	interval := w.Interval
	if interval <= 0 {
		interval = 30 * time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := w.Drain(ctx); err != nil && ctx.Err() == nil {
			w.logger().Warn("embedding: drain pass failed; retrying next tick", "space", w.Space, "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-w.kick:
		}
	}
}

// Drain makes one full pass over the rows needing a vector, in batches. If a
// batch fails to embed, its rows are embedded one by one so a bad row is
// skipped (and retried next pass) without holding up the others. It returns
// early only on a Store error or when ctx is done. When a pass leaves the
// queue empty after it had work, it logs the nearest-neighbour similarity
// distribution and keeps it for Telemetry.
func (w *Worker) Drain(ctx context.Context) (Stats, error) {
	w.mu.Lock()
	hadWork := w.progress.Remaining > 0 || w.progress.LastPass.IsZero()
	w.mu.Unlock()

	var st Stats
	err := w.pass(ctx, &st)
	if err == nil {
		st.Remaining, err = w.Store.CountNeedingEmbedding(ctx, w.Space)
	}
	w.mu.Lock()
	w.progress.Done += st.Embedded
	w.progress.Failed = st.Failed
	w.progress.LastPass = time.Now()
	w.progress.LastError = ""
	if err != nil {
		w.progress.LastError = err.Error()
	} else {
		w.progress.Remaining = st.Remaining
	}
	w.mu.Unlock()
	if err != nil {
		return st, err
	}
	if st.Remaining == 0 && (st.Embedded > 0 || hadWork) && w.measureDue() {
		w.measure(ctx)
	}
	return st, nil
}

// measureDue reports whether the telemetry should be measured again: never
// measured, measured more than MeasureEvery ago, or the rows embedded
// since then number at least half the vectors measured then.
func (w *Worker) measureDue() bool {
	every := w.MeasureEvery
	if every <= 0 {
		every = 10 * time.Minute
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.telemetry
	return t.When.IsZero() || time.Since(t.When) >= every ||
		2*(w.progress.Done-w.doneAtMeasure) >= t.Vectors
}

func (w *Worker) pass(ctx context.Context, st *Stats) error {
	dims := w.Embedder.Info().Dims
	after := ""
	for {
		if w.Yield != nil {
			w.Yield(ctx)
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		rows, err := w.Store.NeedingEmbedding(ctx, w.Space, after, w.batch())
		if err != nil || len(rows) == 0 {
			return err
		}
		after = rows[len(rows)-1].Key
		texts := make([]string, len(rows))
		for i, r := range rows {
			texts[i] = r.Text
		}
		vecs, err := w.Embedder.Embed(ctx, texts)
		if err != nil || len(vecs) != len(rows) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// Fall back to one row at a time to find the bad ones.
			vecs = make([][]float32, len(rows))
			for i, r := range rows {
				v, err := w.Embedder.Embed(ctx, texts[i:i+1])
				if err != nil || len(v) != 1 {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					st.Failed++
					w.logger().Warn("embedding: row failed; skipped, retried next pass", "space", w.Space, "key", r.Key, "err", err)
					continue
				}
				vecs[i] = v[0]
			}
		}
		var okRows []Pending
		var okVecs [][]float32
		for i, r := range rows {
			if vecs[i] == nil {
				continue
			}
			if len(vecs[i]) != dims {
				st.Failed++
				w.logger().Warn("embedding: model returned a vector of the wrong size; row skipped", "space", w.Space, "key", r.Key, "got", len(vecs[i]), "want", dims)
				continue
			}
			okRows, okVecs = append(okRows, r), append(okVecs, vecs[i])
		}
		n, err := setEmbeddings(ctx, w.Store, w.Space, okRows, okVecs)
		st.Embedded += n
		if err != nil {
			return err
		}
	}
}

// BatchStore is an optional Store capability: SetEmbeddings stores vecs[i]
// for rows[i], each with SetEmbedding's semantics (ignored if the row's text
// changed), in one write, for example one transaction. The Worker uses it
// when the Store has it and falls back to SetEmbedding row by row.
type BatchStore interface {
	SetEmbeddings(ctx context.Context, space string, rows []Pending, vecs [][]float32) error
}

// setEmbeddings stores a batch through BatchStore if s has it, and reports
// how many rows it stored.
func setEmbeddings(ctx context.Context, s Store, space string, rows []Pending, vecs [][]float32) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	if b, ok := s.(BatchStore); ok {
		if err := b.SetEmbeddings(ctx, space, rows, vecs); err != nil {
			return 0, err
		}
		return len(rows), nil
	}
	for i, r := range rows {
		if err := s.SetEmbedding(ctx, space, r.Key, r.Text, vecs[i]); err != nil {
			return i, err
		}
	}
	return len(rows), nil
}

// EmbedNow embeds one row inline, for the save path, so a new row has a
// vector before duplicate detection runs. On failure it logs and returns the
// error; the caller carries on, since the row stays queued for the drain.
func (w *Worker) EmbedNow(ctx context.Context, key, text string) error {
	vecs, err := w.Embedder.Embed(ctx, []string{text})
	if err == nil && (len(vecs) != 1 || len(vecs[0]) != w.Embedder.Info().Dims) {
		err = fmt.Errorf("model %s returned %d vectors, want 1 of %d values", w.Embedder.Info().Name, len(vecs), w.Embedder.Info().Dims)
	}
	if err == nil {
		err = w.Store.SetEmbedding(ctx, w.Space, key, text, vecs[0])
	}
	if err != nil {
		w.logger().Warn("embedding: inline embed failed; the drain retries", "space", w.Space, "key", key, "err", err)
		w.Kick()
		return err
	}
	w.mu.Lock()
	w.progress.Done++
	w.mu.Unlock()
	return nil
}

// Progress returns the worker's progress as of its last pass.
func (w *Worker) Progress() Progress {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.progress
}

// Telemetry returns the similarity distribution measured when the queue
// last drained, and false if it has not drained yet.
func (w *Worker) Telemetry() (Telemetry, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.telemetry, !w.telemetry.When.IsZero()
}

// measure samples the space's vectors (reservoir sampling bounds memory and
// time) and records each sampled query's similarity to its nearest
// neighbour within the sample.
func (w *Worker) measure(ctx context.Context) {
	var pool [][]float32
	seen := 0
	rng := rand.New(rand.NewPCG(1, 2))
	err := w.Store.Vectors(ctx, w.Space, func(_ string, v []float32) error {
		seen++
		// Stores may reuse v after fn returns: keep a copy.
		if len(pool) < telemetryPool {
			pool = append(pool, slices.Clone(v))
		} else if j := rng.IntN(seen); j < telemetryPool {
			pool[j] = slices.Clone(v)
		}
		return ctx.Err()
	})
	if err != nil {
		w.logger().Warn("embedding: cannot read vectors for telemetry", "space", w.Space, "err", err)
		return
	}
	if len(pool) < 2 {
		return
	}
	queries := min(len(pool), telemetryQueries)
	nearest := make([]float32, 0, queries)
	for i := range queries {
		best := float32(-1)
		for j, v := range pool {
			if j != i {
				best = max(best, Cosine(pool[i], v))
			}
		}
		nearest = append(nearest, best)
	}
	slices.Sort(nearest)
	t := Telemetry{
		When: time.Now(), Vectors: seen, Sampled: queries,
		P50: nearest[len(nearest)/2],
		P90: nearest[len(nearest)*9/10],
		Max: nearest[len(nearest)-1],
	}
	w.mu.Lock()
	w.telemetry = t
	w.doneAtMeasure = w.progress.Done
	w.mu.Unlock()
	info := w.Embedder.Info()
	w.logger().Info("embedding: queue drained; nearest-neighbour similarity",
		"space", w.Space, "model", info.Name, "vectors", seen, "sampled", queries,
		"p50", t.P50, "p90", t.P90, "max", t.Max, "duplicate_threshold", info.DuplicateThreshold)
}
