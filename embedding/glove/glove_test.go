package glove

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/semfs/semfs/embedding"
)

func load(t testing.TB) *Model {
	t.Helper()
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func embed(t testing.TB, m *Model, texts ...string) [][]float32 {
	t.Helper()
	v, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestTrio is the build-time validation: two paraphrases and an unrelated
// sentence, with dims, unit length and a clear margin.
func TestTrio(t *testing.T) {
	m := load(t)
	v := embed(t, m,
		"fix the auth bug in the login handler",
		"repair authentication failure on sign-in",
		"the recipe needs two cups of flour and a pinch of salt")
	for i, x := range v {
		if len(x) != 100 || m.Info().Dims != 100 {
			t.Fatalf("vector %d has %d dims, Info says %d; want 100", i, len(x), m.Info().Dims)
		}
		var n float64
		for _, f := range x {
			n += float64(f) * float64(f)
		}
		if math.Abs(n-1) > 1e-4 {
			t.Errorf("vector %d has squared length %v, want 1", i, n)
		}
	}
	para := embedding.Cosine(v[0], v[1])
	far := max(embedding.Cosine(v[0], v[2]), embedding.Cosine(v[1], v[2]))
	t.Logf("paraphrase %.3f, unrelated %.3f", para, far)
	if para < far+0.3 {
		t.Errorf("paraphrase similarity %.3f does not exceed unrelated %.3f by 0.3", para, far)
	}
	if err := embedding.Check(context.Background(), m); err != nil {
		t.Errorf("Check: %v", err)
	}
}

func TestWords(t *testing.T) {
	m := load(t)
	for _, c := range []struct{ in, want string }{
		{"parseHTTPRequest", "parse http request"},
		{"getUserID userIDs", "get user id user ids"},
		{"PDFs URLs", "pdf urls"},
		{"readPDFsFast", "read pdf fast"},
		{"v2Beta", "v2 beta"},
		{"snake_case and kebab-case", "snake case and kebab case"},
		{"src/auth/login_handler.go", "src auth login handler go code"},
		{"README.md", "readme markdown"},
		{"JavaScript GitHub", "javascript github"},
		{"loginhandler", "login handler"},
		{"utf8", "?utf"}, // the single digit is dropped
		{"port 8080", "port ?8080"},
		{"xyzzyqq", "?xyzzyqq"},
		{"Crème Brûlée", "?crème ?brûlée"}, // the vocabulary is ASCII
		{"", ""},
		{"!!! ... ---", ""},
		{"A cat", "cat"},
	} {
		got := strings.Join(m.Words(c.in), " ")
		if got != c.want {
			t.Errorf("Words(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestUnknownWordsMatchThemselves(t *testing.T) {
	m := load(t)
	v := embed(t, m, "zqxvbn", "zqxvbn", "wkpfjd", "", "a 1 - ?")
	if s := embedding.Cosine(v[0], v[1]); s < 0.999 {
		t.Errorf("same unknown word: similarity %v, want 1", s)
	}
	if s := embedding.Cosine(v[0], v[2]); math.Abs(float64(s)) > 0.5 {
		t.Errorf("different unknown words: similarity %v, want near 0", s)
	}
	for _, z := range v[3:] {
		if slices.ContainsFunc(z, func(x float32) bool { return x != 0 }) {
			t.Errorf("text without readable words: got %v, want the zero vector", z)
		}
	}
}

// TestBatchMatchesSingle checks the parallel batch path against one-at-a-time
// embedding.
func TestBatchMatchesSingle(t *testing.T) {
	m := load(t)
	a, b := pairs(t, "../testdata/paraphrase.tsv")
	texts := slices.Concat(a, b)
	for len(texts) < 3*parallelMin {
		texts = append(texts, texts...)
	}
	batch := embed(t, m, texts...)
	for i, text := range texts {
		one := embed(t, m, text)[0]
		if !slices.Equal(one, batch[i]) {
			t.Fatalf("text %d %q: batch vector differs from single", i, text)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Embed(ctx, texts); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestCorruptWeights(t *testing.T) {
	good := weights
	sum := func(s string) string {
		h := sha256.Sum256([]byte(s))
		return hex.EncodeToString(h[:])
	}
	flip := func(s string, i int) string {
		b := []byte(s)
		b[i] ^= 0x55
		return string(b)
	}
	for _, c := range []struct {
		name, data, sha, want string
	}{
		{"hash mismatch", flip(good, len(good)/2), WeightsSHA256, "SHA-256"},
		{"bad magic", flip(good, 0), "", "bad magic"},
		{"truncated", good[:len(good)-100], "", "truncated"},
		{"shorter than header", good[:10], "", "header"},
		{"newer format", good[:8] + "\x02" + good[9:], "", "format version 2"},
		{"zero scale", good[:headerLen+400] + "\x00\x00\x00\x00" + good[headerLen+404:], "", "scale"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sha := c.sha
			if sha == "" {
				sha = sum(c.data) // reach the layout checks
			}
			m, err := parse(c.data, sha)
			if err == nil {
				t.Fatalf("parse succeeded (%d words), want an error", m.count)
			}
			var pe *fs.PathError
			if !errors.As(err, &pe) || pe.Path != weightsPath || !errors.Is(err, embedding.ErrBrokenModel) {
				t.Errorf("error %v: want *fs.PathError on %s wrapping ErrBrokenModel", err, weightsPath)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "scripts/models/glove.sh") {
				t.Errorf("error %q: want it to mention %q and how to fix it", err, c.want)
			}
		})
	}
	if _, err := parse(good, WeightsSHA256); err != nil {
		t.Errorf("the intact weights: %v", err)
	}
}

// TestCheckCatchesScrambledModel shuffles rows so words get other words'
// vectors: a corruption that keeps dims and normalisation, which only the
// similarity check can see.
func TestCheckCatchesScrambledModel(t *testing.T) {
	m, err := parse(weights, WeightsSHA256)
	if err != nil {
		t.Fatal(err)
	}
	rows := []byte(m.rows)
	d := m.dims
	for i := 0; i+d*7919 < len(rows); i += d {
		j := (i/d*7919 + 13) % m.count * d
		for k := range d {
			rows[i+k], rows[j+k] = rows[j+k], rows[i+k]
		}
	}
	m.rows = string(rows)
	err = embedding.Check(context.Background(), m)
	if !errors.Is(err, embedding.ErrBrokenModel) {
		t.Fatalf("Check on a scrambled model: %v, want ErrBrokenModel", err)
	}
}
