package embeddingtest_test

import (
	"testing"

	"github.com/semfs/semfs/embedding/embeddingtest"
)

func TestMemoryStore(t *testing.T) {
	embeddingtest.TestStore(t, func(t *testing.T) embeddingtest.Harness {
		s := embeddingtest.NewStore()
		return embeddingtest.Harness{Store: s, Put: s.Put}
	})
}

// TestMemoryStoreMappedKeys runs the suite with keys that differ from the
// suite's row names, as a store keyed by path or chunk would report them.
func TestMemoryStoreMappedKeys(t *testing.T) {
	key := func(space, name string) string { return "/" + space + "/" + name + ".md" }
	embeddingtest.TestStore(t, func(t *testing.T) embeddingtest.Harness {
		s := embeddingtest.NewStore()
		return embeddingtest.Harness{
			Store: s,
			Put:   func(space, name, text string) { s.Put(space, key(space, name), text) },
			Key:   key,
		}
	})
}
