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
