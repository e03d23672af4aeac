package use

import (
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

type goldenItem struct {
	Text string  `json:"text"`
	IDs  []int32 `json:"ids"`
	Vec  string  `json:"vec"`
}

// loadGolden reads the Node/tfjs reference written by
// scripts/models/use/golden.mjs.
func loadGolden(t testing.TB) []goldenItem {
	t.Helper()
	f, err := os.Open("testdata/golden.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Count int          `json:"count"`
		Items []goldenItem `json:"items"`
	}
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Items) != doc.Count || doc.Count < 1000 {
		t.Fatalf("golden file holds %d items (count %d), want >= 1000", len(doc.Items), doc.Count)
	}
	return doc.Items
}

func decodeVec(t testing.TB, s string) []float32 {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != 4*modelDim {
		t.Fatalf("bad golden vector (%d bytes, %v)", len(b), err)
	}
	v := make([]float32, modelDim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

func TestTokenizerMatchesReference(t *testing.T) {
	m := mustLoad(t)
	bad := 0
	for _, it := range loadGolden(t) {
		got := m.Tokenize(it.Text)
		if it.IDs == nil {
			it.IDs = []int32{}
		}
		if !slices.Equal(got, it.IDs) {
			bad++
			if bad <= 10 {
				t.Errorf("Tokenize(%q)\n got %v\nwant %v", it.Text, got, it.IDs)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d texts tokenised differently from the reference", bad)
	}
}

func TestEmbedMatchesReference(t *testing.T) {
	m := mustLoad(t)
	items := loadGolden(t)
	texts := make([]string, len(items))
	for i, it := range items {
		texts[i] = it.Text
	}
	got, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	minCos, sum := 2.0, 0.0
	worst := ""
	for i, it := range items {
		c := cosine(got[i], decodeVec(t, it.Vec))
		sum += c
		if c < minCos {
			minCos, worst = c, it.Text
		}
		if c < 0.9999 {
			t.Errorf("cosine %.6f < 0.9999 for %q", c, it.Text)
		}
	}
	t.Logf("%d texts: min cosine %.7f (%q), mean %.7f", len(items), minCos, worst, sum/float64(len(items)))
}

func mustLoad(t testing.TB) *Model {
	t.Helper()
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEmbedAVX2MatchesReference re-runs part of the golden set with the
// AVX2 kernel on machines that would otherwise use AVX-512, so both kernels
// are checked against the reference.
func TestEmbedAVX2MatchesReference(t *testing.T) {
	if !hasAVX512 {
		t.Skip("AVX-512 kernel not in use; TestEmbedMatchesReference covers the active kernel")
	}
	defer func(old bool) { useAVX512 = old }(useAVX512)
	useAVX512 = false
	m := mustLoad(t)
	items := loadGolden(t)[:200]
	texts := make([]string, len(items))
	for i, it := range items {
		texts[i] = it.Text
	}
	got, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range items {
		if c := cosine(got[i], decodeVec(t, it.Vec)); c < 0.9999 {
			t.Errorf("AVX2 kernel: cosine %.6f < 0.9999 for %q", c, it.Text)
		}
	}
}

// TestTokensSpellText: the pieces of a text without unknown characters
// spell exactly the normalised text with "▁" for spaces.
func TestTokensSpellText(t *testing.T) {
	m := mustLoad(t)
	texts := []string{"Hello, world!", "  two  spaces ", "ﬁle ① ＡＢＣ", "x² + y²", "getUserByID(ctx)"}
	for _, it := range loadGolden(t) {
		texts = append(texts, it.Text)
	}
	checked := 0
	for _, text := range texts {
		ids := m.Tokenize(text)
		var b strings.Builder
		unknown := false
		for _, id := range ids {
			if id == unkID {
				unknown = true
				break
			}
			b.WriteString(m.w.pieces[id])
		}
		if unknown {
			continue
		}
		if want := string(symbols(text)); b.String() != want {
			t.Errorf("pieces of %q spell %q, want %q", text, b.String(), want)
		}
		checked++
	}
	if checked < 500 {
		t.Errorf("only %d texts without unknown characters", checked)
	}
}
