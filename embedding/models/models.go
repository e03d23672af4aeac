// Package models names the embedding models compiled into semfs and says
// which one fills each vector space. The CLI and the daemon get their models
// here, never from the model packages directly, so a change of model is one
// edit in this file (and, through the model-identity marker, a re-embed of
// the affected space on next boot).
package models

import (
	"fmt"
	"slices"
	"strings"

	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/embedding/glove"
	"github.com/semfs/semfs/embedding/use"
)

// Default returns the models semfs uses for each space, chosen from the
// measurements in docs/bench/embedding.md and docs/bench/use.md:
//
//   - Tags (short tag text and tag queries): the quality model, Universal
//     Sentence Encoder Lite. On the shared tag set it ranks the right file
//     first 45/60 times (MRR 0.84) against GloVe's 41/60 (0.77), and tag
//     texts are few and short, so its ~600 texts/s is plenty, inline on the
//     save path included.
//   - Content (chunks of file contents and content queries): the fast
//     GloVe model. Contents are bulk — tens of thousands of chunks — where
//     USE manages ~60 long chunks per CPU-second and GloVe hundreds of
//     thousands; and for content, BM25 and structure carry the ranking.
//
// Changing a space's model changes its ModelInfo, so the next boot wipes
// and re-embeds that space (see embedding.EnsureModel).
func Default() (embedding.Spaces, error) {
	u, err := use.Load()
	if err != nil {
		return embedding.Spaces{}, err
	}
	g, err := glove.Load()
	if err != nil {
		return embedding.Spaces{}, err
	}
	return embedding.Spaces{Tags: u, Content: g}, nil
}

// loaders maps each model's names (short and ModelInfo.Name) to its loader.
var loaders = map[string]func() (embedding.Embedder, error){
	"glove":    loadGlove,
	glove.Name: loadGlove,
	"use":      loadUSE,
	use.Name:   loadUSE,
}

func loadUSE() (embedding.Embedder, error) {
	m, err := use.Load()
	if err != nil {
		return nil, err
	}
	return m, nil
}

func loadGlove() (embedding.Embedder, error) {
	m, err := glove.Load()
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Names lists the names ByName accepts, sorted.
func Names() []string {
	names := make([]string, 0, len(loaders))
	for n := range loaders {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ByName returns the compiled-in model called name: a short name ("glove")
// or a ModelInfo.Name ("glove-6b-100d-int8").
func ByName(name string) (embedding.Embedder, error) {
	load, ok := loaders[name]
	if !ok {
		return nil, fmt.Errorf("embedding model %q is not compiled into this binary; known models: %s", name, strings.Join(Names(), ", "))
	}
	return load()
}
