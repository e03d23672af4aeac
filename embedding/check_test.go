package embedding_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/embedding/embeddingtest"
)

// broken wraps an embedder and damages its output.
type broken struct {
	embedding.Embedder
	damage func([][]float32) [][]float32
}

func (b broken) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	v, err := b.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	return b.damage(v), nil
}

func TestCheckRejectsBrokenModels(t *testing.T) {
	base := embeddingtest.New()
	for _, c := range []struct {
		name string
		e    embedding.Embedder
		want string
	}{
		// Word hashing shares no meaning between paraphrases without common
		// words: exactly what Check exists to catch.
		{"not semantic", base, "paraphrase similarity"},
		{"failing", &embeddingtest.Embedder{Dims: 64, Fail: func(string) bool { return true }}, "injected inference failure"},
		{"short vectors", broken{base, func(v [][]float32) [][]float32 {
			for i := range v {
				v[i] = v[i][:10]
			}
			return v
		}}, "has 10 values"},
		{"unnormalised", broken{base, func(v [][]float32) [][]float32 {
			for i := range v[1] {
				v[1][i] *= 2
			}
			return v
		}}, "length 2.0000"},
		{"missing vector", broken{base, func(v [][]float32) [][]float32 { return v[:2] }}, "2 vectors for 3 texts"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := embedding.Check(context.Background(), c.e)
			if !errors.Is(err, embedding.ErrBrokenModel) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Check = %v; want ErrBrokenModel saying %q", err, c.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := embedding.Check(ctx, base); !errors.Is(err, context.Canceled) || errors.Is(err, embedding.ErrBrokenModel) {
		t.Errorf("Check with a cancelled context = %v, want context.Canceled only", err)
	}
}
