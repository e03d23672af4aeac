package meta_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/embedding/embeddingtest"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/meta"
)

// seed000 is seed 000's query written as the seed describes it: every file
// of the index scored, one point per query word found in one of its fields,
// plus the clamped cosine similarity; returned on a point or a similarity
// of at least threshold; best first, ties by path.
func seed000(t *testing.T, ix *sqlite.Index, e embedding.Embedder, text string) []semfs.QueryResult {
	t.Helper()
	ctx := context.Background()
	qv, err := e.Embed(ctx, []string{text})
	if err != nil {
		t.Fatal(err)
	}
	var out []semfs.QueryResult
	err = ix.WalkFiles(ctx, "/", func(r index.File) error {
		fields := append([]string{r.Path, r.CreatedBy, r.Task}, r.RelatedApps...)
		points := 0
		for _, w := range strings.Fields(strings.ToLower(text)) {
			if slices.ContainsFunc(fields, func(f string) bool { return strings.Contains(strings.ToLower(f), w) }) {
				points++
			}
		}
		sim := 0.0
		if v, ok := ix.Vector(ctx, embedding.SpaceTags, r.Path); ok {
			sim = float64(index.Cosine(qv[0], v))
		}
		sim = max(0, min(1, sim))
		if points > 0 || sim >= float64(e.Info().TagThreshold) {
			out = append(out, semfs.QueryResult{Path: r.Path, Score: float64(points) + sim})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Path < out[j].Path
	})
	return out
}

// TestQueryEqualsSeed000 compares Query with a plain scan of every file on a
// random tree where short words ("a", "d") give most files a point, several
// tiers of points compete for the top, and a tiny embedding width makes
// many files match by similarity alone: for every limit the result must be
// exactly the scan's first limit files with the same scores.
func TestQueryEqualsSeed000(t *testing.T) {
	ctx := context.Background()
	ix, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	e := &embeddingtest.Embedder{Dims: 6}
	f, err := meta.New(memfs.New(), ix, meta.Options{Spaces: embedding.Spaces{Tags: e, Content: e}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	words := []string{"alpha", "beta", "gamma", "delta", "report", "draft", "auth", "bug", "notes", "plan"}
	apps := []string{"editor", "mailer", "planner", "crm"}
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 400 {
		p := fmt.Sprintf("/%s/%s-%d.md", words[rng.IntN(len(words))], words[rng.IntN(len(words))], i)
		write(t, f, as(apps[rng.IntN(len(apps))]), p, "x")
		if i%3 != 0 {
			tags := semfs.Tags{Task: words[rng.IntN(len(words))] + " " + words[rng.IntN(len(words))]}
			if i%2 == 0 {
				tags.RelatedApps = []string{apps[rng.IntN(len(apps))]}
			}
			if err := f.SetTags(ctx, p, tags); err != nil {
				t.Fatal(err)
			}
		}
	}
	w := &embedding.Worker{Store: ix, Space: embedding.SpaceTags, Embedder: e, Logger: quiet}
	if _, err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	queries := []string{"a", "d", "auth bug", "A D", "report draft editor", "zzz", "quarterly planning",
		"beta notes crm a", "delta-7", "/gamma/", "plan plan"}
	for range 20 {
		queries = append(queries, words[rng.IntN(len(words))]+" "+apps[rng.IntN(len(apps))]+" "+string(rune('a'+rng.IntN(26))))
	}
	for _, q := range queries {
		want := seed000(t, ix, e, q)
		for _, limit := range []int{0, 1, 3, 10, 50} {
			got, err := f.Query(ctx, q, limit)
			if err != nil {
				t.Fatalf("%q limit %d: %v", q, limit, err)
			}
			n := len(want)
			if limit > 0 {
				n = min(n, limit)
			}
			if len(got) != n {
				t.Fatalf("%q limit %d: %d results, want %d", q, limit, len(got), n)
			}
			for i := range got {
				if got[i].Path != want[i].Path || !near(got[i].Score, want[i].Score) {
					t.Fatalf("%q limit %d: result %d is %s %.6f, want %s %.6f", q, limit, i, got[i].Path, got[i].Score, want[i].Path, want[i].Score)
				}
			}
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 }
