package embeddingtest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/semfs/semfs/embedding"
)

// Store is an in-memory embedding.Store with the semantics index stores
// must have, for tests of the engine (marker, drain worker) and of code
// built on them. Rows are added with Put; the index's real stores keep the
// same behaviour in SQL.
type Store struct {
	// Fail, if set, is consulted before each operation ("needing", "count",
	// "set", "wipe", "vectors") with its space and key ("" when none); a
	// non-nil result is returned as the operation's error and nothing
	// changes.
	Fail func(op, space, key string) error

	// Batches counts SetEmbeddings calls (read it when no call is running).
	Batches int

	mu     sync.Mutex
	spaces map[string]map[string]*row
}

type row struct {
	text  string
	vec   []float32
	fresh bool
}

var (
	_ embedding.Store      = (*Store)(nil)
	_ embedding.BatchStore = (*Store)(nil)
)

// NewStore returns an empty Store.
func NewStore() *Store { return &Store{spaces: map[string]map[string]*row{}} }

func (s *Store) space(name string) map[string]*row {
	sp := s.spaces[name]
	if sp == nil {
		sp = map[string]*row{}
		s.spaces[name] = sp
	}
	return sp
}

func (s *Store) fail(op, space, key string) error {
	if s.Fail == nil {
		return nil
	}
	if err := s.Fail(op, space, key); err != nil {
		return fmt.Errorf("embeddingtest.Store %s %s %q: %w", op, space, key, err)
	}
	return nil
}

// Put adds or changes a row's text, as a write to the file would. A changed
// text makes the row's vector stale; an unchanged one keeps it.
func (s *Store) Put(space, key, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sp := s.space(space)
	if r, ok := sp[key]; ok && r.text == text {
		return
	}
	sp[key] = &row{text: text}
}

// Delete removes a row and its vector.
func (s *Store) Delete(space, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.space(space), key)
}

// Vector returns the stored vector of a row and whether it is fresh.
func (s *Store) Vector(space, key string) (vec []float32, fresh bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.space(space)[key]; ok {
		return r.vec, r.fresh
	}
	return nil, false
}

func (s *Store) sortedKeys(space string) []string {
	sp := s.space(space)
	keys := make([]string, 0, len(sp))
	for k := range sp {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// NeedingEmbedding implements embedding.Store.
func (s *Store) NeedingEmbedding(ctx context.Context, space, after string, limit int) ([]embedding.Pending, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.fail("needing", space, after); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []embedding.Pending
	for _, k := range s.sortedKeys(space) {
		if len(out) == limit {
			break
		}
		if r := s.spaces[space][k]; k > after && !r.fresh {
			out = append(out, embedding.Pending{Key: k, Text: r.text})
		}
	}
	return out, nil
}

// CountNeedingEmbedding implements embedding.Store.
func (s *Store) CountNeedingEmbedding(ctx context.Context, space string) (int, error) {
	if err := s.fail("count", space, ""); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.space(space) {
		if !r.fresh {
			n++
		}
	}
	return n, nil
}

// SetEmbedding implements embedding.Store: the vector is kept only if the
// row still has text.
func (s *Store) SetEmbedding(ctx context.Context, space, key, text string, vec []float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.fail("set", space, key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.space(space)[key]
	if !ok || r.text != text {
		return nil
	}
	r.vec, r.fresh = slices.Clone(vec), true
	return nil
}

// SetEmbeddings implements embedding.BatchStore: all or nothing, like the
// one transaction of a database store.
func (s *Store) SetEmbeddings(ctx context.Context, space string, rows []embedding.Pending, vecs [][]float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, r := range rows {
		if err := s.fail("set", space, r.Key); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Batches++
	for i, p := range rows {
		if r, ok := s.space(space)[p.Key]; ok && r.text == p.Text {
			r.vec, r.fresh = slices.Clone(vecs[i]), true
		}
	}
	return nil
}

// WipeVectors implements embedding.Store.
func (s *Store) WipeVectors(ctx context.Context, space string) error {
	if err := s.fail("wipe", space, ""); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.space(space) {
		r.vec, r.fresh = nil, false
	}
	return nil
}

// Vectors implements embedding.Store, in key order.
func (s *Store) Vectors(ctx context.Context, space string, fn func(key string, vec []float32) error) error {
	if err := s.fail("vectors", space, ""); err != nil {
		return err
	}
	s.mu.Lock()
	type kv struct {
		k string
		v []float32
	}
	var all []kv
	for _, k := range s.sortedKeys(space) {
		if r := s.spaces[space][k]; r.vec != nil {
			all = append(all, kv{k, r.vec})
		}
	}
	s.mu.Unlock()
	for _, e := range all {
		if err := fn(e.k, e.v); err != nil {
			return err
		}
	}
	return nil
}
