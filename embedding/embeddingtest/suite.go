package embeddingtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"

	"github.com/semfs/semfs/embedding"
)

// Harness gives TestStore a fresh, empty store and a way to change its rows,
// which embedding.Store itself cannot do (rows come from the index).
type Harness struct {
	Store embedding.Store
	// Put adds the row named name or changes its text; a changed text
	// makes its vector stale, an unchanged one keeps it.
	Put func(space, name, text string)
	// Key, if set, maps a row name the suite uses ("a", "k07") to the key
	// the store reports for it (a path, a chunk key). It must keep the
	// names' order. Default: the name itself.
	Key func(space, name string) string
}

func (h Harness) key(space, name string) string {
	if h.Key == nil {
		return name
	}
	return h.Key(space, name)
}

// names maps keys back to names for messages and comparisons.
func (h Harness) names(space string, ps []embedding.Pending, all ...string) []string {
	var out []string
	for _, p := range ps {
		name := "?" + p.Key
		for _, n := range all {
			if h.key(space, n) == p.Key {
				name = n
			}
		}
		out = append(out, name)
	}
	return out
}

// TestStore checks that an embedding.Store has the semantics the engine
// relies on: paging by key, counting, ignoring vectors for changed text,
// wiping one space only, iteration with error propagation, the batch form
// if the store is an embedding.BatchStore, and a full marker reset plus
// drain through EnsureModel and Worker. Index stores run
// it from their tests with a fresh store per call of open:
//
//	embeddingtest.TestStore(t, func(t *testing.T) embeddingtest.Harness { ... })
func TestStore(t *testing.T, open func(t *testing.T) Harness) {
	ctx := context.Background()
	vec := func(x float32) []float32 { return []float32{x, 1 - x, 0.5} }
	const tags, content = embedding.SpaceTags, embedding.SpaceContent
	all := []string{"a", "b", "c", "d", "e", "gone"}

	t.Run("paging", func(t *testing.T) {
		h := open(t)
		for _, k := range []string{"c", "a", "e", "b", "d"} {
			h.Put(tags, k, "text "+k)
		}
		h.Put(content, "a", "other space")
		got, err := h.Store.NeedingEmbedding(ctx, tags, "", 2)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(h.names(tags, got, all...)) != "[a b]" || got[0].Text != "text a" {
			t.Errorf("first page %+v, want a and b with their texts", got)
		}
		got, _ = h.Store.NeedingEmbedding(ctx, tags, h.key(tags, "b"), 10)
		if fmt.Sprint(h.names(tags, got, all...)) != "[c d e]" {
			t.Errorf("page after b: %v, want [c d e]", h.names(tags, got, all...))
		}
		got, _ = h.Store.NeedingEmbedding(ctx, tags, h.key(tags, "e"), 10)
		if len(got) != 0 {
			t.Errorf("page after the last key: %v, want empty", h.names(tags, got, all...))
		}
		if n, err := h.Store.CountNeedingEmbedding(ctx, tags); n != 5 || err != nil {
			t.Errorf("count %d, %v; want 5", n, err)
		}
		if n, err := h.Store.CountNeedingEmbedding(ctx, content); n != 1 || err != nil {
			t.Errorf("count in the other space %d, %v; want 1", n, err)
		}
	})

	t.Run("set and stale", func(t *testing.T) {
		h := open(t)
		h.Put(tags, "a", "one")
		h.Put(tags, "b", "two")
		if err := h.Store.SetEmbedding(ctx, tags, h.key(tags, "a"), "one", vec(0.1)); err != nil {
			t.Fatal(err)
		}
		got, _ := h.Store.NeedingEmbedding(ctx, tags, "", 10)
		if fmt.Sprint(h.names(tags, got, all...)) != "[b]" {
			t.Errorf("needing after setting a: %v, want [b]", h.names(tags, got, all...))
		}
		// The text changed while b was being embedded: the vector is for
		// the old text and must be ignored.
		h.Put(tags, "b", "two, edited")
		if err := h.Store.SetEmbedding(ctx, tags, h.key(tags, "b"), "two", vec(0.2)); err != nil {
			t.Fatal(err)
		}
		got, _ = h.Store.NeedingEmbedding(ctx, tags, "", 10)
		if len(got) != 1 || got[0].Text != "two, edited" {
			t.Errorf("needing %+v, want b with its new text", got)
		}
		// A vector for a row that does not exist is ignored too.
		if err := h.Store.SetEmbedding(ctx, tags, h.key(tags, "gone"), "x", vec(0.3)); err != nil {
			t.Errorf("SetEmbedding for a missing row: %v, want it ignored", err)
		}
		// Putting the same text again keeps a fresh vector.
		h.Put(tags, "a", "one")
		if n, _ := h.Store.CountNeedingEmbedding(ctx, tags); n != 1 {
			t.Errorf("count %d after re-putting an unchanged text, want 1", n)
		}
		// Changing it makes it stale.
		h.Put(tags, "a", "uno")
		if n, _ := h.Store.CountNeedingEmbedding(ctx, tags); n != 2 {
			t.Errorf("count %d after changing a's text, want 2", n)
		}
	})

	if _, ok := open(t).Store.(embedding.BatchStore); ok {
		t.Run("batch", func(t *testing.T) {
			h := open(t)
			b := h.Store.(embedding.BatchStore)
			h.Put(tags, "a", "one")
			h.Put(tags, "b", "two")
			h.Put(tags, "c", "three")
			rows := []embedding.Pending{
				{Key: h.key(tags, "a"), Text: "one"},
				{Key: h.key(tags, "b"), Text: "two (old)"},
				{Key: h.key(tags, "gone"), Text: "x"},
			}
			if err := b.SetEmbeddings(ctx, tags, rows, [][]float32{vec(0.1), vec(0.2), vec(0.3)}); err != nil {
				t.Fatal(err)
			}
			got, _ := h.Store.NeedingEmbedding(ctx, tags, "", 10)
			if fmt.Sprint(h.names(tags, got, all...)) != "[b c]" {
				t.Errorf("after a batch storing a (b's text differs, gone is absent): needing %v, want [b c]", h.names(tags, got, all...))
			}
		})
	}

	t.Run("wipe and vectors", func(t *testing.T) {
		h := open(t)
		abc := []string{"a", "b", "c"}
		for i, k := range abc {
			for _, sp := range []string{tags, content} {
				h.Put(sp, k, k)
				if err := h.Store.SetEmbedding(ctx, sp, h.key(sp, k), k, vec(float32(i))); err != nil {
					t.Fatal(err)
				}
			}
		}
		var seen []string
		err := h.Store.Vectors(ctx, tags, func(key string, v []float32) error {
			i := slices.IndexFunc(abc, func(n string) bool { return h.key(tags, n) == key })
			if i < 0 || !slices.Equal(v, vec(float32(i))) {
				return fmt.Errorf("key %q has vector %v", key, v)
			}
			seen = append(seen, abc[i])
			return nil
		})
		slices.Sort(seen)
		if err != nil || fmt.Sprint(seen) != "[a b c]" {
			t.Errorf("Vectors saw %v, %v; want a, b, c with their vectors", seen, err)
		}
		stop := errors.New("stop")
		calls := 0
		err = h.Store.Vectors(ctx, tags, func(string, []float32) error { calls++; return stop })
		if !errors.Is(err, stop) || calls != 1 {
			t.Errorf("Vectors with a failing callback: %v after %d calls, want the callback's error after 1", err, calls)
		}
		if err := h.Store.WipeVectors(ctx, tags); err != nil {
			t.Fatal(err)
		}
		if n, _ := h.Store.CountNeedingEmbedding(ctx, tags); n != 3 {
			t.Errorf("after wipe, %d tags rows need vectors, want 3", n)
		}
		if n, _ := h.Store.CountNeedingEmbedding(ctx, content); n != 0 {
			t.Errorf("wiping tags touched content: %d rows need vectors", n)
		}
		calls = 0
		h.Store.Vectors(ctx, tags, func(string, []float32) error { calls++; return nil })
		if calls != 0 {
			t.Errorf("after wipe, Vectors saw %d tags vectors", calls)
		}
	})

	t.Run("reset and drain", func(t *testing.T) {
		h := open(t)
		for i := range 30 {
			h.Put(tags, fmt.Sprintf("k%02d", i), fmt.Sprintf("row %d about %d", i, i%5))
		}
		dir := t.TempDir()
		oldModel, newModel := &Embedder{Dims: 16}, &Embedder{Dims: 24}
		for _, e := range []*Embedder{oldModel, newModel} {
			spaces := map[string]embedding.Embedder{tags: e}
			rep, err := embedding.EnsureModel(ctx, dir, h.Store, spaces)
			if err != nil || len(rep.Owed()) != 0 {
				t.Fatalf("EnsureModel: %+v, %v", rep, err)
			}
			w := &embedding.Worker{Store: h.Store, Space: tags, Embedder: e, Batch: 7, Logger: slog.New(slog.DiscardHandler)}
			if st, err := w.Drain(ctx); err != nil || st.Embedded != 30 || st.Remaining != 0 {
				t.Fatalf("drain with the %d-dim model: %+v, %v", e.Dims, st, err)
			}
			n := 0
			h.Store.Vectors(ctx, tags, func(_ string, v []float32) error {
				if len(v) == e.Dims {
					n++
				}
				return nil
			})
			if n != 30 {
				t.Errorf("%d of 30 vectors come from the %d-dim model", n, e.Dims)
			}
		}
	})
}
