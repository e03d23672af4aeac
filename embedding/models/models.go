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
)

// Default returns the models semfs uses for each space. Both spaces use the
// fast GloVe model for now.
//
// TODO(lead): wire in the quality model (embedding/use, Universal Sentence
// Encoder Lite) here once it lands, e.g. for Content and/or Tags; its
// thresholds come from its own calibration on embedding/testdata. Changing a
// space's model changes its ModelInfo, so the next boot wipes and re-embeds
// that space (see embedding.EnsureModel); nothing else needs to change.
func Default() (embedding.Spaces, error) {
	g, err := glove.Load()
	if err != nil {
		return embedding.Spaces{}, err
	}
	return embedding.Spaces{Tags: g, Content: g}, nil
}

// loaders maps each model's names (short and ModelInfo.Name) to its loader.
var loaders = map[string]func() (embedding.Embedder, error){
	"glove":    loadGlove,
	glove.Name: loadGlove,
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
