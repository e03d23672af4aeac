package use

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/semfs/semfs/embedding"
)

func TestInfo(t *testing.T) {
	m := mustLoad(t)
	info := m.Info()
	if info.Name != Name || info.Dims != 512 || info.WeightsSHA256 != weightsSHA256 || info.Version == "" {
		t.Fatalf("Info() = %+v", info)
	}
	if !(info.TagThreshold > 0 && info.TagThreshold < info.DuplicateThreshold && info.DuplicateThreshold < 1) {
		t.Fatalf("thresholds out of order: %+v", info)
	}
	m2, err := Load()
	if err != nil || m2 != m {
		t.Fatalf("second Load() = %p, %v; want the cached %p", m2, err, m)
	}
}

// TestTrio is the boot-time validation: dims, unit norm, and two paraphrases
// clearly closer than an unrelated sentence (embedding.Check), plus our own
// trio with explicit bounds.
func TestTrio(t *testing.T) {
	m := mustLoad(t)
	if err := embedding.Check(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	v, err := m.Embed(context.Background(), []string{
		"How do I reset my password?",
		"I forgot my password and need to change it.",
		"The orchestra played a symphony by Brahms.",
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range v {
		if len(x) != 512 {
			t.Fatalf("vector %d has %d dims", i, len(x))
		}
		var n float64
		for _, f := range x {
			n += float64(f) * float64(f)
		}
		if math.Abs(math.Sqrt(n)-1) > 1e-5 {
			t.Errorf("vector %d has norm %.7f", i, math.Sqrt(n))
		}
	}
	para := embedding.Cosine(v[0], v[1])
	far := max(embedding.Cosine(v[0], v[2]), embedding.Cosine(v[1], v[2]))
	t.Logf("paraphrases %.3f, unrelated %.3f", para, far)
	if para < 0.5 || far > 0.3 || para-far < 0.3 {
		t.Errorf("paraphrases %.3f vs unrelated %.3f: not clearly separated", para, far)
	}
}

// TestBatchInvariance: a text's vector does not depend on what it is
// batched with, on the batch size, or on the worker split.
func TestBatchInvariance(t *testing.T) {
	m := mustLoad(t)
	ctx := context.Background()
	texts := shortTexts(40)
	texts = append(texts, "", strings.Repeat("very long text with many words ", 40))
	all, err := m.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, tx := range texts {
		one, err := m.Embed(ctx, []string{tx})
		if err != nil {
			t.Fatal(err)
		}
		for c := range one[0] {
			if d := math.Abs(float64(one[0][c] - all[i][c])); d > 1e-6 {
				t.Fatalf("text %d (%q): batched and single vectors differ by %g at %d", i, tx, d, c)
			}
		}
	}
}

func TestEmbedEdgeCases(t *testing.T) {
	m := mustLoad(t)
	ctx := context.Background()
	out, err := m.Embed(ctx, nil)
	if err != nil || len(out) != 0 {
		t.Fatalf("Embed(nil) = %d vectors, %v", len(out), err)
	}
	// Texts beyond 128 tokens are truncated: appending more text after the
	// first 128 tokens does not change the vector.
	long := strings.Repeat("alpha beta gamma delta ", 100)
	if n := len(m.Tokenize(long)); n <= 128 {
		t.Fatalf("test text has only %d tokens", n)
	}
	v, err := m.Embed(ctx, []string{long, long + " and an entirely different ending about cooking"})
	if err != nil {
		t.Fatal(err)
	}
	if c := embedding.Cosine(v[0], v[1]); c < 0.999999 {
		t.Errorf("texts equal in their first 128 tokens have cosine %.7f", c)
	}
	// Invalid UTF-8 is embedded (as U+FFFD), not rejected.
	v, err = m.Embed(ctx, []string{"bad \xff\xfe bytes", "bad \uFFFD bytes"})
	if err != nil {
		t.Fatal(err)
	}
	if c := embedding.Cosine(v[0], v[1]); c < 0.999999 {
		t.Errorf("invalid UTF-8 not treated as U+FFFD: cosine %.7f", c)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := m.Embed(cctx, shortTexts(100)); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with a cancelled context: err = %v, want context.Canceled", err)
	}
}

func TestConcurrentEmbed(t *testing.T) {
	m := mustLoad(t)
	ctx := context.Background()
	texts := shortTexts(24)
	want, err := m.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo := g % 4
			got, err := m.Embed(ctx, texts[lo:lo+12])
			if err != nil {
				errs <- err
				return
			}
			for i := range got {
				if embedding.Cosine(got[i], want[lo+i]) < 0.999999 {
					errs <- errors.New("concurrent Embed returned a different vector")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestCorruptWeights feeds the loader damaged copies of the weight file.
func TestCorruptWeights(t *testing.T) {
	flipped := append([]byte(nil), weightsFile...)
	flipped[len(flipped)/2] ^= 1
	cases := map[string]struct {
		data []byte
		sha  string
	}{
		"checksum mismatch": {flipped, weightsSHA256},
		"truncated":         {weightsFile[:len(weightsFile)-100], ""},
		"truncated header":  {weightsFile[:6], ""},
		"empty":             {nil, ""},
		"bad magic":         {append([]byte("NOTAUSE!"), weightsFile[8:]...), ""},
		"trailing bytes":    {append(append([]byte(nil), weightsFile...), 0), ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := load(c.data, c.sha)
			if err == nil {
				t.Fatalf("load succeeded (%v)", m.Info())
			}
			if !errors.Is(err, embedding.ErrBrokenModel) {
				t.Errorf("error %q does not wrap embedding.ErrBrokenModel", err)
			}
			t.Log(err)
		})
	}
	// The untouched file still loads without the checksum (the decoder
	// itself accepts it).
	if _, err := load(weightsFile, ""); err != nil {
		t.Fatal(err)
	}
}
