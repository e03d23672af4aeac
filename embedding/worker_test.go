package embedding_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/embedding/embeddingtest"
)

// countingEmbedder wraps the test embedder and counts texts embedded per
// call size, to see batching and fallback.
type countingEmbedder struct {
	*embeddingtest.Embedder
	mu    sync.Mutex
	calls []int
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	c.calls = append(c.calls, len(texts))
	c.mu.Unlock()
	return c.Embedder.Embed(ctx, texts)
}

// TestMain keeps the workers' default logging out of test output; tests
// that check logs give their worker a Logger.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

func fill(s *embeddingtest.Store, space string, n int) {
	for i := range n {
		s.Put(space, fmt.Sprintf("row%03d", i), fmt.Sprintf("text number %d about topic %d", i, i%7))
	}
}

func TestDrainBatchesAndReportsProgress(t *testing.T) {
	s := embeddingtest.NewStore()
	fill(s, "tags", 60)
	e := &countingEmbedder{Embedder: embeddingtest.New()}
	w := &embedding.Worker{Store: s, Space: "tags", Embedder: e}
	st, err := w.Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Embedded != 60 || st.Failed != 0 || st.Remaining != 0 {
		t.Errorf("stats %+v, want 60 embedded, none left", st)
	}
	if fmt.Sprint(e.calls) != "[25 25 10]" {
		t.Errorf("Embed call sizes %v, want default batches of 25", e.calls)
	}
	if s.Batches != 3 {
		t.Errorf("%d SetEmbeddings calls, want one per batch", s.Batches)
	}
	p := w.Progress()
	if p.Done != 60 || p.Remaining != 0 || p.LastPass.IsZero() || p.LastError != "" {
		t.Errorf("progress %+v", p)
	}
	for i := range 60 {
		key := fmt.Sprintf("row%03d", i)
		vec, fresh := s.Vector("tags", key)
		want, _ := e.Embedder.Embed(ctx, []string{fmt.Sprintf("text number %d about topic %d", i, i%7)})
		if !fresh || embedding.Cosine(vec, want[0]) < 0.9999 {
			t.Fatalf("%s: fresh %v, vector is not the embedding of its text", key, fresh)
		}
	}
}

// Row: a single inference error in the drain → the row is skipped and
// retried next tick; the rest of its batch is embedded.
func TestDrainSkipsFailingRowAndRetriesIt(t *testing.T) {
	s := embeddingtest.NewStore()
	fill(s, "tags", 30)
	bad := "text number 7 about topic 0"
	broken := true
	e := &countingEmbedder{Embedder: &embeddingtest.Embedder{Dims: 64, Fail: func(text string) bool { return broken && text == bad }}}
	var logs bytes.Buffer
	w := &embedding.Worker{Store: s, Space: "tags", Embedder: e, Batch: 10, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	st, err := w.Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Embedded != 29 || st.Failed != 1 || st.Remaining != 1 {
		t.Errorf("stats %+v, want 29 embedded, 1 failed and left", st)
	}
	if _, fresh := s.Vector("tags", "row007"); fresh {
		t.Error("the failing row has a vector")
	}
	if !strings.Contains(logs.String(), "row007") {
		t.Errorf("log does not name the failing row:\n%s", logs.String())
	}
	if _, ok := w.Telemetry(); ok {
		t.Error("telemetry recorded although the queue did not drain")
	}
	broken = false
	st, err = w.Drain(ctx)
	if err != nil || st.Embedded != 1 || st.Remaining != 0 {
		t.Errorf("retry pass: %+v, %v; want the failed row embedded", st, err)
	}
	if w.Progress().Done != 30 {
		t.Errorf("progress done %d, want 30", w.Progress().Done)
	}
}

// rowStore hides the in-memory Store's BatchStore method, so the worker
// falls back to SetEmbedding row by row.
type rowStore struct{ embedding.Store }

// A store failure in mid-pass stops the pass; the next pass picks up where
// the store says work remains. With a BatchStore the failing batch is
// stored not at all (one transaction); row by row, the rows before the
// failing one are kept.
func TestDrainResumesAfterStoreFailure(t *testing.T) {
	for _, c := range []struct {
		name                  string
		batch                 bool
		first, second, embeds int
	}{
		{"batch store", true, 16, 24, 40 + 8}, // the batch of row016..row023 is embedded twice
		{"row by row", false, 23, 17, 40 + 1}, // only row023 is embedded twice
	} {
		t.Run(c.name, func(t *testing.T) {
			s := embeddingtest.NewStore()
			fill(s, "content", 40)
			s.Fail = func(op, _, key string) error {
				if op == "set" && key == "row023" {
					return errors.New("disk I/O error")
				}
				return nil
			}
			var store embedding.Store = s
			if !c.batch {
				store = rowStore{s}
			}
			e := &countingEmbedder{Embedder: embeddingtest.New()}
			w := &embedding.Worker{Store: store, Space: "content", Embedder: e, Batch: 8}
			st, err := w.Drain(ctx)
			if err == nil || !strings.Contains(err.Error(), "disk I/O error") {
				t.Fatalf("Drain: %v, want the store error", err)
			}
			if st.Embedded != c.first {
				t.Errorf("embedded %d before the failure, want %d", st.Embedded, c.first)
			}
			if w.Progress().LastError == "" {
				t.Error("progress does not show the error")
			}
			s.Fail = nil
			st, err = w.Drain(ctx)
			if err != nil || st.Embedded != c.second || st.Remaining != 0 {
				t.Errorf("second pass: %+v, %v; want the other %d", st, err, c.second)
			}
			total := 0
			for _, n := range e.calls {
				total += n
			}
			if total != c.embeds {
				t.Errorf("embedded %d texts in all, want %d", total, c.embeds)
			}
			if wantBatches := 0; !c.batch && s.Batches != wantBatches {
				t.Errorf("row-by-row store got %d batch calls", s.Batches)
			}
		})
	}
}

// A row whose text changes while it is being embedded keeps needing a vector.
func TestDrainDoesNotStoreStaleVector(t *testing.T) {
	s := embeddingtest.NewStore()
	fill(s, "tags", 3)
	e := &embeddingtest.Embedder{Dims: 16, Fail: func(text string) bool {
		if text == "text number 1 about topic 1" {
			s.Put("tags", "row001", "rewritten while embedding")
		}
		return false
	}}
	w := &embedding.Worker{Store: s, Space: "tags", Embedder: e}
	st, err := w.Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Remaining != 1 {
		t.Errorf("remaining %d, want the rewritten row", st.Remaining)
	}
	st, _ = w.Drain(ctx)
	if st.Remaining != 0 {
		t.Errorf("second pass left %d", st.Remaining)
	}
}

func TestDrainTelemetry(t *testing.T) {
	s := embeddingtest.NewStore()
	for i := range 50 {
		// pairs of identical texts: every row's nearest neighbour is exact.
		s.Put("tags", fmt.Sprintf("a%02d", i), fmt.Sprintf("alpha %d beta %d", i/2, i/2))
	}
	s.Put("tags", "z", "completely different words here")
	var logs bytes.Buffer
	w := &embedding.Worker{Store: s, Space: "tags", Embedder: embeddingtest.New(), Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	if _, err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	tel, ok := w.Telemetry()
	if !ok {
		t.Fatal("no telemetry after the queue drained")
	}
	if tel.Vectors != 51 || tel.Sampled != 51 || tel.Max < 0.999 || tel.P90 < 0.999 || tel.P50 > tel.P90 || tel.P90 > tel.Max {
		t.Errorf("telemetry %+v: want p50 <= p90 <= max, duplicates at 1", tel)
	}
	for _, want := range []string{"queue drained", "p50=", "p90=", "max="} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

// Row: a single inference error at save → the save proceeds, the row stays
// queued, and the drain fills it.
func TestEmbedNow(t *testing.T) {
	s := embeddingtest.NewStore()
	broken := true
	e := &embeddingtest.Embedder{Dims: 32, Fail: func(string) bool { return broken }}
	w := &embedding.Worker{Store: s, Space: "tags", Embedder: e, Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))}
	s.Put("tags", "notes.md", "meeting notes")
	if err := w.EmbedNow(ctx, "notes.md", "meeting notes"); err == nil {
		t.Fatal("EmbedNow with a failing model returned nil")
	}
	if _, fresh := s.Vector("tags", "notes.md"); fresh {
		t.Fatal("row has a vector after a failed inline embed")
	}
	broken = false
	if st, err := w.Drain(ctx); err != nil || st.Embedded != 1 {
		t.Errorf("drain after a failed save: %+v, %v", st, err)
	}
	s.Put("tags", "todo.md", "things to do")
	if err := w.EmbedNow(ctx, "todo.md", "things to do"); err != nil {
		t.Fatal(err)
	}
	if _, fresh := s.Vector("tags", "todo.md"); !fresh {
		t.Error("EmbedNow did not store the vector")
	}
}

func TestRunDrainsOnKick(t *testing.T) {
	s := embeddingtest.NewStore()
	w := &embedding.Worker{Store: s, Space: "tags", Embedder: embeddingtest.New(), Interval: time.Hour}
	c, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(c) }()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !cond(); {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; progress %+v", what, w.Progress())
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitFor("the first pass", func() bool { return !w.Progress().LastPass.IsZero() })
	fill(s, "tags", 5)
	w.Kick()
	waitFor("the kicked pass", func() bool { return w.Progress().Done == 5 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v, want context.Canceled", err)
	}
}

// A model that returns vectors of the wrong size must not get them stored.
func TestDrainRejectsWrongSizedVectors(t *testing.T) {
	s := embeddingtest.NewStore()
	fill(s, "tags", 4)
	e := broken{embeddingtest.New(), func(v [][]float32) [][]float32 {
		v[len(v)-1] = v[len(v)-1][:3]
		return v
	}}
	w := &embedding.Worker{Store: s, Space: "tags", Embedder: e, Logger: slog.New(slog.DiscardHandler)}
	st, err := w.Drain(ctx)
	if err != nil || st.Embedded != 3 || st.Failed != 1 || st.Remaining != 1 {
		t.Errorf("drain: %+v, %v; want 3 stored and the short vector refused", st, err)
	}
	if err := w.EmbedNow(ctx, "row001", "text number 1 about topic 1"); err == nil {
		t.Error("EmbedNow stored a vector of the wrong size")
	}
}

func TestRunDrainsOnTick(t *testing.T) {
	s := embeddingtest.NewStore()
	w := &embedding.Worker{Store: s, Space: "tags", Embedder: embeddingtest.New(), Interval: 5 * time.Millisecond}
	c, cancel := context.WithCancel(ctx)
	defer cancel()
	go w.Run(c)
	fill(s, "tags", 3) // no Kick: the next tick must find them
	for deadline := time.Now().Add(5 * time.Second); w.Progress().Done != 3; {
		if time.Now().After(deadline) {
			t.Fatalf("rows not drained by the ticker; progress %+v", w.Progress())
		}
		time.Sleep(time.Millisecond)
	}
}

// A worker under a stream of writes empties its queue every few seconds;
// it measures the space again only when the last measurement is old or
// the space has grown by half since.
func TestTelemetryRateLimited(t *testing.T) {
	s := embeddingtest.NewStore()
	put := func(from, n int) {
		for i := from; i < from+n; i++ {
			s.Put("tags", fmt.Sprintf("r%03d", i), fmt.Sprintf("row %d text", i))
		}
	}
	w := &embedding.Worker{Store: s, Space: "tags", Embedder: embeddingtest.New(), Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))}
	drain := func() embedding.Telemetry {
		t.Helper()
		if st, err := w.Drain(ctx); err != nil || st.Remaining != 0 {
			t.Fatalf("drain: %+v, %v", st, err)
		}
		tel, ok := w.Telemetry()
		if !ok {
			t.Fatal("no telemetry after the queue drained")
		}
		return tel
	}
	put(0, 40)
	first := drain()
	if first.Vectors != 40 {
		t.Fatalf("first measurement saw %d vectors, want 40", first.Vectors)
	}
	put(40, 5)
	if tel := drain(); tel != first {
		t.Errorf("measured again after 5 new rows of 40: %+v, want the first measurement kept", tel)
	}
	put(45, 20)
	if tel := drain(); tel.Vectors != 65 {
		t.Errorf("after the space grew by half the telemetry saw %d vectors, want 65", tel.Vectors)
	}
	w.MeasureEvery = time.Nanosecond
	put(65, 1)
	if tel := drain(); tel.Vectors != 66 {
		t.Errorf("with MeasureEvery elapsed the telemetry saw %d vectors, want 66", tel.Vectors)
	}
}

// TestDrainYieldsBeforeEachBatch: a worker with Yield waits for it before
// every batch, embeds nothing while it blocks, and stops when ctx ends
// during a wait.
func TestDrainYieldsBeforeEachBatch(t *testing.T) {
	s := embeddingtest.NewStore()
	fill(s, "tags", 60)
	e := &countingEmbedder{Embedder: embeddingtest.New()}
	gate := make(chan struct{})
	yields := make(chan struct{}, 16)
	w := &embedding.Worker{Store: s, Space: "tags", Embedder: e, Yield: func(ctx context.Context) {
		yields <- struct{}{}
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}}
	done := make(chan embedding.Stats)
	go func() {
		st, err := w.Drain(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- st
	}()
	for batch := range 3 {
		<-yields
		time.Sleep(20 * time.Millisecond)
		e.mu.Lock()
		calls := len(e.calls)
		e.mu.Unlock()
		if calls != batch {
			t.Fatalf("before batch %d was let go: %d Embed calls", batch, calls)
		}
		gate <- struct{}{}
	}
	<-yields // the pass looks once more and finds nothing
	gate <- struct{}{}
	if st := <-done; st.Embedded != 60 || st.Remaining != 0 {
		t.Errorf("stats %+v, want 60 embedded", st)
	}

	// A pass whose ctx ends while it yields returns ctx's error and
	// embeds nothing more.
	fill(s, "more", 30)
	cctx, cancel := context.WithCancel(ctx)
	w2 := &embedding.Worker{Store: s, Space: "more", Embedder: e, Yield: func(ctx context.Context) {
		cancel()
		<-ctx.Done()
	}}
	if _, err := w2.Drain(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Drain with ctx ended in Yield = %v, want context.Canceled", err)
	}
	if n, _ := s.CountNeedingEmbedding(ctx, "more"); n != 30 {
		t.Errorf("%d rows of the cancelled pass still need a vector, want 30", n)
	}
}
