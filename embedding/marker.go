package embedding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
)

// MarkerFile is the model-identity marker, kept in the index's directory. It
// records, per vector space, which model produced the stored vectors and
// whether a reset to that model is settled or still pending:
//
//	{"version":1,"spaces":{"tags":{"model":"glove-6b-100d-int8","model_version":"1",
//	  "dims":100,"weights_sha256":"66a2…","state":"settled"}}}
//
// Vectors are derived data: when the model changes they are wiped and the
// drain worker re-embeds every row. The marker makes that crash-safe.
const MarkerFile = "embedding-state.json"

// markerVersion is the marker's format version. 1: first version.
const markerVersion = 1

// Marker states of a space.
const (
	StateSettled = "settled" // the space's vectors (stored or still to come) are from this model
	StatePending = "pending" // a reset to this model has begun and not yet been confirmed
)

// SpaceState is one space's entry in the marker.
type SpaceState struct {
	Model         string `json:"model"`
	ModelVersion  string `json:"model_version"`
	Dims          int    `json:"dims"`
	WeightsSHA256 string `json:"weights_sha256"`
	State         string `json:"state"`
}

// sameModel reports whether s records the model info describes.
func (s SpaceState) sameModel(info ModelInfo) bool {
	return s.Model == info.Name && s.ModelVersion == info.Version &&
		s.Dims == info.Dims && s.WeightsSHA256 == info.WeightsSHA256
}

func stateOf(info ModelInfo, state string) SpaceState {
	return SpaceState{Model: info.Name, ModelVersion: info.Version, Dims: info.Dims,
		WeightsSHA256: info.WeightsSHA256, State: state}
}

type marker struct {
	Version int                   `json:"version"`
	Spaces  map[string]SpaceState `json:"spaces"`
}

// Actions EnsureModel reports for a space.
const (
	ActionNone  = "none"  // marker matched and was settled: nothing done
	ActionReset = "reset" // vectors wiped and the marker settled on the model
	ActionOwed  = "owed"  // a reset is needed but did not complete; retried next boot
)

// SpaceReport says what EnsureModel did for one space.
type SpaceReport struct {
	Space  string
	Model  ModelInfo
	Before *SpaceState // the marker's entry before, nil if absent
	Action string      // ActionNone, ActionReset or ActionOwed
	Wiped  bool        // the space's vectors were wiped (also possible with ActionOwed)
	Err    error       // why a reset is owed (ActionOwed), else nil
}

// Report says what EnsureModel did. Problems are in it, not returned as an
// error: marker trouble never stops a boot.
type Report struct {
	Dir    string
	Spaces []SpaceReport // in space-name order
	// MarkerErr is a problem reading the marker (unreadable or corrupt); the
	// marker was then treated as absent, so every space was reset.
	MarkerErr error
}

// Owed lists the spaces whose reset is owed: their vectors may come from
// another model until a later boot settles them, so dense results for them
// are unreliable. Doctor reports it.
func (r Report) Owed() []string {
	var out []string
	for _, s := range r.Spaces {
		if s.Action == ActionOwed {
			out = append(out, s.Space)
		}
	}
	return out
}

// Log writes the report to l: a warning for a marker problem and for each
// owed reset (dense results for that space are unreliable until a boot
// settles it), an info line for each reset done, nothing for spaces that
// needed nothing.
func (r Report) Log(l *slog.Logger) {
	if r.MarkerErr != nil {
		l.Warn("embedding: marker unreadable; treated as absent", "dir", r.Dir, "err", r.MarkerErr)
	}
	for _, s := range r.Spaces {
		switch s.Action {
		case ActionReset:
			was := "none"
			if s.Before != nil {
				was = s.Before.Model + " v" + s.Before.ModelVersion + " (" + s.Before.State + ")"
			}
			l.Info("embedding: vectors reset for the model; the drain re-embeds them",
				"space", s.Space, "model", s.Model.Name, "version", s.Model.Version, "was", was)
		case ActionOwed:
			l.Warn("embedding: model reset owed; dense results unreliable until a boot settles it",
				"space", s.Space, "model", s.Model.Name, "wiped", s.Wiped, "err", s.Err)
		}
	}
}

// EnsureModel makes the vectors of each space in spaces consistent with the
// model that fills it, using the marker in dir (the index's directory). For
// each space, in name order:
//
//   - marker entry matches the model and is settled: nothing to do;
//   - otherwise (different model, no entry, no marker, pending reset): the
//     entry is written as pending (atomically, durably), the space's vectors
//     are wiped with store.WipeVectors, and the entry is settled. The drain
//     worker then re-embeds every row.
//
// Marker trouble never aborts a boot. If the pending entry cannot be
// written, the index is left untouched and the reset is owed; if the wipe or
// the settling fails, the entry stays pending and the next boot wipes again.
// Both appear in the Report (ActionOwed), which the daemon logs and doctor
// shows. An unreadable or corrupt marker is treated as absent. The returned
// error is non-nil only if ctx is done.
func EnsureModel(ctx context.Context, dir string, store Store, spaces map[string]Embedder) (Report, error) {
	rep := Report{Dir: dir}
	m, err := readMarker(dir)
	if err != nil {
		rep.MarkerErr = err
		m = marker{Version: markerVersion, Spaces: map[string]SpaceState{}}
	}
	names := make([]string, 0, len(spaces))
	for name := range spaces {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		info := spaces[name].Info()
		sr := SpaceReport{Space: name, Model: info, Action: ActionNone}
		before, ok := m.Spaces[name]
		if ok {
			sr.Before = &before
		}
		if ok && before.State == StateSettled && before.sameModel(info) {
			rep.Spaces = append(rep.Spaces, sr)
			continue
		}
		sr.Action = ActionOwed
		m.Spaces[name] = stateOf(info, StatePending)
		if err := writeMarker(dir, m); err != nil {
			// Nothing was wiped: the index still matches the old entry.
			if ok {
				m.Spaces[name] = before
			} else {
				delete(m.Spaces, name)
			}
			sr.Err = fmt.Errorf("index untouched, reset retried next boot: %w", err)
			rep.Spaces = append(rep.Spaces, sr)
			continue
		}
		if err := store.WipeVectors(ctx, name); err != nil {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			sr.Err = fmt.Errorf("wiping the %s vectors failed; marker left pending, reset redone next boot: %w", name, err)
			rep.Spaces = append(rep.Spaces, sr)
			continue
		}
		sr.Wiped = true
		m.Spaces[name] = stateOf(info, StateSettled)
		if err := writeMarker(dir, m); err != nil {
			m.Spaces[name] = stateOf(info, StatePending)
			sr.Err = fmt.Errorf("vectors wiped (the drain refills them) but the marker stays pending, so the next boot wipes again: %w", err)
			rep.Spaces = append(rep.Spaces, sr)
			continue
		}
		sr.Action, sr.Err = ActionReset, nil
		rep.Spaces = append(rep.Spaces, sr)
	}
	return rep, nil
}

// ReadMarker returns the marker's entries in dir, for doctor: nil with no
// error if there is no marker yet. Compare an entry with a model's Info:
// an entry that is pending, or records another model, means a reset is owed.
func ReadMarker(dir string) (map[string]SpaceState, error) {
	m, err := readMarker(dir)
	return m.Spaces, err
}

// ResetOwed reports whether the marker entry for a space (ok false if absent)
// leaves a reset owed for the model described by info.
func ResetOwed(entry SpaceState, ok bool, info ModelInfo) bool {
	return !ok || entry.State != StateSettled || !entry.sameModel(info)
}

// OwedResets is doctor's check: the spaces, in name order, whose marker in
// dir does not record a settled reset to the model that fills them now.
// Until a boot settles them, their stored vectors may come from another
// model and dense results for them are unreliable. A marker that cannot be
// read owes every space, and its error is returned too.
func OwedResets(dir string, spaces map[string]Embedder) ([]string, error) {
	m, err := readMarker(dir)
	var owed []string
	for name, e := range spaces {
		entry, ok := m.Spaces[name]
		if err != nil || ResetOwed(entry, ok, e.Info()) {
			owed = append(owed, name)
		}
	}
	slices.Sort(owed)
	return owed, err
}

func readMarker(dir string) (marker, error) {
	path := filepath.Join(dir, MarkerFile)
	m := marker{Version: markerVersion, Spaces: map[string]SpaceState{}}
	if dir == "" {
		return m, errors.New("no index directory given for the embedding marker")
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	var got marker
	if err := json.Unmarshal(data, &got); err != nil {
		return m, &fs.PathError{Op: "read embedding marker", Path: path,
			Err: fmt.Errorf("%w: %v; it is rewritten and every space's vectors rebuilt", ErrCorruptMarker, err)}
	}
	if got.Version != markerVersion {
		return m, &fs.PathError{Op: "read embedding marker", Path: path,
			Err: fmt.Errorf("%w: format version %d, this build writes %d; it is rewritten and every space's vectors rebuilt", ErrCorruptMarker, got.Version, markerVersion)}
	}
	if got.Spaces != nil {
		m.Spaces = got.Spaces
	}
	return m, nil
}

// ErrCorruptMarker is wrapped when the marker file cannot be parsed.
var ErrCorruptMarker = errors.New("embedding marker is corrupt")

// writeMarker replaces the marker atomically and durably: a temporary file
// in dir, fsynced, renamed over the marker, then dir fsynced.
var writeMarker = func(dir string, m marker) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(dir, MarkerFile, append(data, '\n'))
}

func writeFileAtomic(dir, name string, data []byte) error {
	if dir == "" {
		// os.CreateTemp would fall back to the system temp directory.
		return errors.New("no index directory given for the embedding marker")
	}
	f, err := os.CreateTemp(dir, name+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	ok = true
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
