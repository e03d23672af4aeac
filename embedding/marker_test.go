package embedding_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/embedding/embeddingtest"
)

var ctx = context.Background()

// fixture is an index directory with a store of rows in both spaces.
type fixture struct {
	dir   string
	store *embeddingtest.Store
}

const rows = 12

func newFixture(t *testing.T) *fixture {
	f := &fixture{dir: t.TempDir(), store: embeddingtest.NewStore()}
	for i := range rows {
		f.store.Put(embedding.SpaceTags, fmt.Sprintf("k%02d", i), fmt.Sprintf("task %d notes about item %d", i, i%4))
		f.store.Put(embedding.SpaceContent, fmt.Sprintf("k%02d", i), fmt.Sprintf("contents of file %d", i))
	}
	return f
}

// drain fills every vector of space with e.
func (f *fixture) drain(t *testing.T, space string, e embedding.Embedder) {
	t.Helper()
	w := &embedding.Worker{Store: f.store, Space: space, Embedder: e}
	st, err := w.Drain(ctx)
	if err != nil || st.Remaining != 0 {
		t.Fatalf("drain %s: %+v, %v", space, st, err)
	}
}

func (f *fixture) missing(t *testing.T, space string) int {
	t.Helper()
	n, err := f.store.CountNeedingEmbedding(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// dims returns the set of vector lengths stored in space.
func (f *fixture) dims(t *testing.T, space string) map[int]int {
	t.Helper()
	out := map[int]int{}
	if err := f.store.Vectors(ctx, space, func(_ string, v []float32) error { out[len(v)]++; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func (f *fixture) marker(t *testing.T) map[string]embedding.SpaceState {
	t.Helper()
	m, err := embedding.ReadMarker(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func ensure(t *testing.T, dir string, store embedding.Store, spaces map[string]embedding.Embedder) embedding.Report {
	t.Helper()
	rep, err := embedding.EnsureModel(ctx, dir, store, spaces)
	if err != nil {
		t.Fatalf("EnsureModel: %v", err)
	}
	return rep
}

func action(rep embedding.Report, space string) embedding.SpaceReport {
	for _, s := range rep.Spaces {
		if s.Space == space {
			return s
		}
	}
	return embedding.SpaceReport{Action: "absent from report"}
}

var (
	modelA = &embeddingtest.Embedder{Dims: 32}
	modelB = &embeddingtest.Embedder{Dims: 48} // a different vector space
)

func both(e embedding.Embedder) map[string]embedding.Embedder {
	return embedding.Spaces{Tags: e, Content: e}.Map()
}

// bootSettled runs a first boot with modelA and fills the vectors.
func bootSettled(t *testing.T, f *fixture) {
	t.Helper()
	ensure(t, f.dir, f.store, both(modelA))
	f.drain(t, embedding.SpaceTags, modelA)
	f.drain(t, embedding.SpaceContent, modelA)
}

// Row: matching model, settled marker → no-op.
func TestMarkerMatchingSettledIsNoop(t *testing.T) {
	f := newFixture(t)
	bootSettled(t, f)
	before, err := os.ReadFile(filepath.Join(f.dir, embedding.MarkerFile))
	if err != nil {
		t.Fatal(err)
	}
	rep := ensure(t, f.dir, f.store, both(modelA))
	for _, sp := range []string{embedding.SpaceTags, embedding.SpaceContent} {
		if a := action(rep, sp); a.Action != embedding.ActionNone || a.Wiped {
			t.Errorf("%s: %+v, want no action", sp, a)
		}
		if n := f.missing(t, sp); n != 0 {
			t.Errorf("%s: %d rows lost their vectors", sp, n)
		}
	}
	after, _ := os.ReadFile(filepath.Join(f.dir, embedding.MarkerFile))
	if string(before) != string(after) {
		t.Errorf("marker rewritten on a no-op boot:\n%s\n→\n%s", before, after)
	}
	if len(rep.Owed()) != 0 || rep.MarkerErr != nil {
		t.Errorf("report %+v: want nothing owed", rep)
	}
}

// Row: model changed between versions → marker mismatch → vectors wiped →
// drain re-embeds → marker settled on the new model. Only the changed space
// is touched.
func TestMarkerModelChangedWipesAndReembeds(t *testing.T) {
	f := newFixture(t)
	bootSettled(t, f)
	rep := ensure(t, f.dir, f.store, map[string]embedding.Embedder{
		embedding.SpaceTags: modelB, embedding.SpaceContent: modelA,
	})
	var logs bytes.Buffer
	rep.Log(slog.New(slog.NewTextHandler(&logs, nil)))
	if !strings.Contains(logs.String(), "space=tags model=test-hash version=1 was=\"test-hash v1 (settled)\"") || strings.Contains(logs.String(), "space=content") {
		t.Errorf("report log should name the tags reset only:\n%s", logs.String())
	}
	tags := action(rep, embedding.SpaceTags)
	if tags.Action != embedding.ActionReset || !tags.Wiped || tags.Before == nil || tags.Before.Dims != 32 {
		t.Fatalf("tags: %+v, want a reset from the 32-dim model", tags)
	}
	if a := action(rep, embedding.SpaceContent); a.Action != embedding.ActionNone {
		t.Errorf("content: %+v, want untouched", a)
	}
	if n := f.missing(t, embedding.SpaceTags); n != rows {
		t.Errorf("tags: %d rows need vectors after the reset, want all %d", n, rows)
	}
	if n := f.missing(t, embedding.SpaceContent); n != 0 {
		t.Errorf("content: %d rows lost vectors", n)
	}
	m := f.marker(t)
	if got := m[embedding.SpaceTags]; got.Dims != 48 || got.State != embedding.StateSettled {
		t.Errorf("marker tags entry %+v, want settled on the 48-dim model", got)
	}
	f.drain(t, embedding.SpaceTags, modelB)
	if d := f.dims(t, embedding.SpaceTags); d[48] != rows || len(d) != 1 {
		t.Errorf("tags vectors by length %v, want all %d from the new model", d, rows)
	}
}

// Row: a pre-upgrade index with no marker self-migrates: wiped, settled, and
// refilled by the drain.
func TestMarkerAbsentSelfMigrates(t *testing.T) {
	f := newFixture(t)
	old := &embeddingtest.Embedder{Dims: 16}
	f.drain(t, embedding.SpaceTags, old) // vectors from an unknown earlier model
	rep := ensure(t, f.dir, f.store, both(modelA))
	for _, sp := range []string{embedding.SpaceTags, embedding.SpaceContent} {
		if a := action(rep, sp); a.Action != embedding.ActionReset || a.Before != nil {
			t.Errorf("%s: %+v, want a reset from no marker", sp, a)
		}
		if e := f.marker(t)[sp]; e.State != embedding.StateSettled || e.Dims != 32 {
			t.Errorf("%s: marker %+v, want settled on modelA", sp, e)
		}
	}
	if n := f.missing(t, embedding.SpaceTags); n != rows {
		t.Errorf("old vectors kept for %d rows", rows-n)
	}
	f.drain(t, embedding.SpaceTags, modelA)
	if d := f.dims(t, embedding.SpaceTags); d[32] != rows {
		t.Errorf("after drain: vectors by length %v", d)
	}
}

// Row: data dir unwritable at reset → boot proceeds, index untouched, reset
// retried next boot.
func TestMarkerUnwritableDirLeavesIndexUntouched(t *testing.T) {
	f := newFixture(t)
	bootSettled(t, f)
	// The directory becomes unusable: a regular file where it should be.
	moved := f.dir + ".moved"
	if err := os.Rename(f.dir, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.dir, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := ensure(t, f.dir, f.store, both(modelB))
	for _, sp := range []string{embedding.SpaceTags, embedding.SpaceContent} {
		a := action(rep, sp)
		if a.Action != embedding.ActionOwed || a.Wiped || a.Err == nil {
			t.Errorf("%s: %+v, want an owed reset with nothing wiped", sp, a)
		}
		if n := f.missing(t, sp); n != 0 {
			t.Errorf("%s: %d vectors wiped although the marker could not be written", sp, n)
		}
	}
	if len(rep.Owed()) != 2 {
		t.Errorf("Owed() = %v, want both spaces", rep.Owed())
	}
	var logs bytes.Buffer
	rep.Log(slog.New(slog.NewTextHandler(&logs, nil)))
	if got := strings.Count(logs.String(), "level=WARN msg=\"embedding: model reset owed"); got != 2 {
		t.Errorf("report logged %d owed warnings, want 2:\n%s", got, logs.String())
	}
	// Next boot, with the directory back: the reset happens.
	os.Remove(f.dir)
	if err := os.Rename(moved, f.dir); err != nil {
		t.Fatal(err)
	}
	rep = ensure(t, f.dir, f.store, both(modelB))
	for _, sp := range []string{embedding.SpaceTags, embedding.SpaceContent} {
		if a := action(rep, sp); a.Action != embedding.ActionReset || !a.Wiped {
			t.Errorf("next boot %s: %+v, want the reset done", sp, a)
		}
	}
}

// Same row, with the directory present but every marker write failing.
func TestMarkerWriteFailureLeavesIndexUntouched(t *testing.T) {
	f := newFixture(t)
	bootSettled(t, f)
	restore := embedding.SetWriteMarker(func(string, func() error) error { return errors.New("disk full") })
	rep := ensure(t, f.dir, f.store, both(modelB))
	restore()
	if a := action(rep, embedding.SpaceTags); a.Action != embedding.ActionOwed || a.Wiped {
		t.Errorf("tags: %+v", a)
	}
	if n := f.missing(t, embedding.SpaceTags); n != 0 {
		t.Errorf("%d vectors wiped", n)
	}
	if e := f.marker(t)[embedding.SpaceTags]; e.Dims != 32 || e.State != embedding.StateSettled {
		t.Errorf("marker changed to %+v", e)
	}
}

// Row: reset interrupted after the wipe → the marker stays pending, the drain
// refills, and the next boot wipes again and settles.
func TestMarkerInterruptedAfterWipeIsRedone(t *testing.T) {
	f := newFixture(t)
	bootSettled(t, f)
	writes := 0
	restore := embedding.SetWriteMarker(func(_ string, write func() error) error {
		writes++
		if writes == 2 { // the settling write of the first space
			return errors.New("power lost")
		}
		return write()
	})
	rep := ensure(t, f.dir, f.store, map[string]embedding.Embedder{embedding.SpaceTags: modelB})
	restore()
	a := action(rep, embedding.SpaceTags)
	if a.Action != embedding.ActionOwed || !a.Wiped {
		t.Fatalf("tags: %+v, want wiped but owed", a)
	}
	if e := f.marker(t)[embedding.SpaceTags]; e.State != embedding.StatePending || e.Dims != 48 {
		t.Fatalf("marker %+v, want pending on the new model", e)
	}
	if owed := embedding.ResetOwed(f.marker(t)[embedding.SpaceTags], true, modelB.Info()); !owed {
		t.Error("ResetOwed is false for a pending entry; doctor would not warn")
	}
	if owed, err := embedding.OwedResets(f.dir, both(modelB)); err != nil || fmt.Sprint(owed) != "[content tags]" {
		t.Errorf("OwedResets = %v, %v; want both spaces (tags pending, content on the old model)", owed, err)
	}
	// The drain refills some rows before the next boot.
	w := &embedding.Worker{Store: f.store, Space: embedding.SpaceTags, Embedder: modelB, Batch: 5}
	if _, err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	rep = ensure(t, f.dir, f.store, map[string]embedding.Embedder{embedding.SpaceTags: modelB})
	if a := action(rep, embedding.SpaceTags); a.Action != embedding.ActionReset || !a.Wiped {
		t.Errorf("next boot: %+v, want the reset redone", a)
	}
	if e := f.marker(t)[embedding.SpaceTags]; e.State != embedding.StateSettled {
		t.Errorf("marker %+v, want settled", e)
	}
	if embedding.ResetOwed(f.marker(t)[embedding.SpaceTags], true, modelB.Info()) {
		t.Error("ResetOwed still true after a settled boot")
	}
	if owed, err := embedding.OwedResets(f.dir, map[string]embedding.Embedder{embedding.SpaceTags: modelB}); err != nil || len(owed) != 0 {
		t.Errorf("OwedResets after a settled boot = %v, %v", owed, err)
	}
}

// A failing wipe leaves the marker pending; the next boot redoes it.
func TestMarkerWipeFailureStaysPending(t *testing.T) {
	f := newFixture(t)
	bootSettled(t, f)
	f.store.Fail = func(op, space, _ string) error {
		if op == "wipe" {
			return errors.New("database is locked")
		}
		return nil
	}
	rep := ensure(t, f.dir, f.store, both(modelB))
	f.store.Fail = nil
	if a := action(rep, embedding.SpaceContent); a.Action != embedding.ActionOwed || a.Wiped || a.Err == nil {
		t.Errorf("content: %+v", a)
	}
	if e := f.marker(t)[embedding.SpaceContent]; e.State != embedding.StatePending {
		t.Errorf("marker %+v, want pending", e)
	}
	rep = ensure(t, f.dir, f.store, both(modelB))
	if a := action(rep, embedding.SpaceContent); a.Action != embedding.ActionReset {
		t.Errorf("next boot: %+v", a)
	}
	if n := f.missing(t, embedding.SpaceContent); n != rows {
		t.Errorf("%d rows need vectors, want %d", n, rows)
	}
}

// A corrupt marker is reported and treated as absent: spaces are reset and
// the marker rewritten.
func TestMarkerCorruptIsRebuilt(t *testing.T) {
	f := newFixture(t)
	bootSettled(t, f)
	if err := os.WriteFile(filepath.Join(f.dir, embedding.MarkerFile), []byte(`{"version":1,"spa`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := embedding.ReadMarker(f.dir); !errors.Is(err, embedding.ErrCorruptMarker) {
		t.Errorf("ReadMarker: %v, want ErrCorruptMarker", err)
	}
	if owed, err := embedding.OwedResets(f.dir, both(modelA)); !errors.Is(err, embedding.ErrCorruptMarker) || len(owed) != 2 {
		t.Errorf("OwedResets on a corrupt marker = %v, %v; want both spaces and the error", owed, err)
	}
	rep := ensure(t, f.dir, f.store, both(modelA))
	if !errors.Is(rep.MarkerErr, embedding.ErrCorruptMarker) {
		t.Errorf("MarkerErr = %v", rep.MarkerErr)
	}
	if a := action(rep, embedding.SpaceTags); a.Action != embedding.ActionReset {
		t.Errorf("tags: %+v", a)
	}
	if e := f.marker(t)[embedding.SpaceTags]; e.State != embedding.StateSettled {
		t.Errorf("rewritten marker %+v", e)
	}
	entries, _ := os.ReadDir(f.dir)
	if len(entries) != 1 {
		t.Errorf("index dir holds %d entries, want only the marker (no temp files left)", len(entries))
	}
}

func TestEnsureModelCancelled(t *testing.T) {
	f := newFixture(t)
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := embedding.EnsureModel(c, f.dir, f.store, both(modelA)); !errors.Is(err, context.Canceled) {
		t.Errorf("EnsureModel with a cancelled context: %v", err)
	}
}

// An empty directory must not send the marker to the working or temporary
// directory: nothing is wiped and the resets are owed.
func TestMarkerEmptyDir(t *testing.T) {
	f := newFixture(t)
	bootSettled(t, f)
	t.Chdir(t.TempDir())
	rep := ensure(t, "", f.store, both(modelB))
	if len(rep.Owed()) != 2 || rep.MarkerErr == nil {
		t.Errorf("report %+v: want both spaces owed and a marker error", rep)
	}
	if n := f.missing(t, embedding.SpaceTags); n != 0 {
		t.Errorf("%d vectors wiped", n)
	}
	if _, err := os.Stat(embedding.MarkerFile); err == nil {
		t.Error("marker written to the working directory")
	}
}
