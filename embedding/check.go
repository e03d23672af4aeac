package embedding

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// ErrBrokenModel is wrapped by every error that means a model cannot be
// trusted: weights that fail their checksum or layout, or a model that fails
// Check. The daemon refuses to start on it; there is no degraded mode.
var ErrBrokenModel = errors.New("embedding model is broken")

// The trio Check embeds: two paraphrases and one unrelated sentence. Any
// working English sentence model places the first two closer together than
// either is to the third.
var trio = [3]string{
	"fix the authentication bug in the login handler",
	"repair the broken sign-in code that rejects valid passwords",
	"the recipe needs two cups of flour and a pinch of salt",
}

// checkMargin is how much closer the paraphrases must be than the unrelated
// pair. Every model semfs ships clears it widely (see
// docs/bench/embedding.md); a model with scrambled weights does not.
const checkMargin = 0.15

// Check embeds a fixed trio of sentences and verifies what every working
// model guarantees: one vector per text, Info().Dims values each, unit
// length, finite, and the two paraphrases clearly more similar to each other
// than to the unrelated sentence. Daemon boot runs it and aborts on error.
// Errors wrap ErrBrokenModel (or the context's error).
func Check(ctx context.Context, e Embedder) error {
	info := e.Info()
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: model %s version %s: %s; rebuild the binary from a clean checkout (weights are compiled in)",
			ErrBrokenModel, info.Name, info.Version, fmt.Sprintf(format, args...))
	}
	if info.Dims <= 0 {
		return fail("Info().Dims is %d", info.Dims)
	}
	vecs, err := e.Embed(ctx, trio[:])
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fail("embedding the check sentences: %v", err)
	}
	if len(vecs) != len(trio) {
		return fail("Embed returned %d vectors for %d texts", len(vecs), len(trio))
	}
	for i, v := range vecs {
		if len(v) != info.Dims {
			return fail("vector %d has %d values, Info().Dims is %d", i, len(v), info.Dims)
		}
		var n float64
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fail("vector %d holds %v", i, x)
			}
			n += float64(x) * float64(x)
		}
		if math.Abs(math.Sqrt(n)-1) > 1e-3 {
			return fail("vector %d has length %.4f, want 1", i, math.Sqrt(n))
		}
	}
	para := Cosine(vecs[0], vecs[1])
	far := max(Cosine(vecs[0], vecs[2]), Cosine(vecs[1], vecs[2]))
	if para < far+checkMargin {
		return fail("paraphrase similarity %.3f does not exceed unrelated similarity %.3f by %.2f", para, far, checkMargin)
	}
	return nil
}

// Cosine returns the cosine similarity of a and b, which must have equal
// length; for unit vectors it is their dot product. It is 0 if either is
// the zero vector.
func Cosine(a, b []float32) float32 {
	var dot, na, nb float64
	b = b[:len(a)]
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return float32(dot / math.Sqrt(na*nb))
}
