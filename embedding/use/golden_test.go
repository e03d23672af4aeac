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
