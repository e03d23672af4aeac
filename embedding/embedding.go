// Package embedding defines the contract between semfs and its embedding
// models, and the engine around them: the model-identity marker that keeps
// stored vectors honest across model changes, and the drain worker that fills
// vectors in the background.
//
// A model is code: its weights are compiled into the binary (see the glove and
// use subpackages), so loading needs no network, no key and no configuration.
// Vectors from different models live in different spaces and are never
// compared with each other; an index keeps one vector per key per space.
//
// # Boot
//
// The daemon gets its models from package models (models.Default), runs
// Check on each and refuses to start if one fails (no degraded mode), then
// calls EnsureModel with the index's directory and Store, logs its Report,
// and starts one Worker per space. EnsureModel never fails the boot: what it
// could not do is in the Report and is retried on the next boot.
//
// # Save path
//
// After writing a row's text to the Store, call Worker.EmbedNow so the row
// has a vector before duplicate detection; if that fails the row simply
// stays queued and the Worker's next pass fills it.
//
// # Doctor
//
// Worker.Progress (done/remaining), Worker.Telemetry (nearest-neighbour
// similarity p50/p90/max when the queue last drained), and ReadMarker with
// ResetOwed (a reset that is pending or not yet done) are what doctor shows.
package embedding

import "context"

// ModelInfo identifies a model and the vectors it produces. Two models with
// equal Name, Version, Dims and WeightsSHA256 produce interchangeable vectors;
// anything else is a different vector space (see Marker).
type ModelInfo struct {
	Name          string // short stable name, e.g. "glove-6b-100d-int8"
	Version       string // bumped whenever tokenisation, pooling or weights change
	Dims          int
	WeightsSHA256 string // hex SHA-256 of the compiled-in weight bytes

	// TagThreshold is seed 000's admission threshold: a file whose tag-text
	// embedding reaches this cosine similarity with the query is returned even
	// without a keyword hit. Calibrated per model on data; not a user knob.
	TagThreshold float32
	// DuplicateThreshold is seed 001's VEC_THRESHOLD: at or above it, two
	// texts are reported as likely duplicates at save time.
	DuplicateThreshold float32
}

// Embedder turns texts into L2-normalised vectors of Info().Dims float32s,
// one per input text, in order. A text with nothing to embed (empty, or no
// word the model knows how to read) may come back as the zero vector, whose
// cosine similarity with everything is 0; consumers must not divide by its
// norm. Implementations are safe for concurrent use.
type Embedder interface {
	Info() ModelInfo
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Pending is one row that needs a vector: Key identifies the row within its
// space (for example a file path, or a path plus chunk number) and Text is
// what to embed.
type Pending struct {
	Key  string
	Text string
}

// Store is what an index offers the engine for one or more vector spaces
// ("tags", "content", ...). Index stores implement it.
type Store interface {
	// NeedingEmbedding returns up to limit rows of space whose vector is
	// missing or stale, with Key > after, in ascending Key order. Paging by
	// key makes a drain resumable and lets it step over a failing row.
	NeedingEmbedding(ctx context.Context, space, after string, limit int) ([]Pending, error)
	// CountNeedingEmbedding reports how many rows of space still need a vector.
	CountNeedingEmbedding(ctx context.Context, space string) (int, error)
	// SetEmbedding stores vec for key and marks it fresh. text is the text
	// that was embedded; a store ignores the vector if the row's text has
	// changed since (the row stays stale and is embedded again).
	SetEmbedding(ctx context.Context, space, key, text string, vec []float32) error
	// WipeVectors deletes every vector of space and marks all its rows missing.
	WipeVectors(ctx context.Context, space string) error
	// Vectors calls fn for each stored vector of space until fn returns an
	// error, which Vectors then returns.
	Vectors(ctx context.Context, space string, fn func(key string, vec []float32) error) error
}

// Spaces names the vector spaces semfs keeps, and which model fills each.
type Spaces struct {
	// Tags embeds short tag text (task, related apps, path) and tag queries.
	Tags Embedder
	// Content embeds chunks of file contents and content-search queries.
	Content Embedder
}

// Space names used by the index.
const (
	SpaceTags    = "tags"
	SpaceContent = "content"
)

// Map returns the spaces by name (SpaceTags, SpaceContent), leaving out nil
// embedders, in the form EnsureModel takes.
func (s Spaces) Map() map[string]Embedder {
	m := map[string]Embedder{}
	if s.Tags != nil {
		m[SpaceTags] = s.Tags
	}
	if s.Content != nil {
		m[SpaceContent] = s.Content
	}
	return m
}
