package models

import (
	"bytes"
	"context"
	"go/parser"
	"go/token"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/embedding/embeddingtest"
)

// TestBoot runs the daemon's boot sequence with the real default models:
// Check, EnsureModel on a fresh index, a drain, then a second boot that must
// be a no-op. The vectors must find each paraphrase's partner.
func TestBoot(t *testing.T) {
	ctx := context.Background()
	spaces, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for name, e := range spaces.Map() {
		if err := embedding.Check(ctx, e); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	dir := t.TempDir()
	store := embeddingtest.NewStore()
	texts := map[string]string{
		"notes/auth-bug.md":     "fix the authentication bug in the login handler",
		"notes/sign-in.md":      "repair the sign-in failure for valid passwords",
		"recipes/bread.txt":     "bake bread with flour, water, yeast and salt",
		"recipes/loaf.txt":      "a simple loaf: flour, yeast, water and a pinch of salt",
		"travel/berlin.md":      "flight and hotel bookings for the berlin trip",
		"travel/berlin-plan.md": "plane tickets and accommodation for our visit to berlin",
	}
	for k, v := range texts {
		store.Put(embedding.SpaceTags, k, v)
	}
	rep, err := embedding.EnsureModel(ctx, dir, store, spaces.Map())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Owed()) != 0 {
		t.Fatalf("first boot owes resets: %+v", rep)
	}
	var logs bytes.Buffer
	w := &embedding.Worker{Store: store, Space: embedding.SpaceTags, Embedder: spaces.Tags,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	st, err := w.Drain(ctx)
	if err != nil || st.Embedded != len(texts) || st.Remaining != 0 {
		t.Fatalf("drain: %+v, %v", st, err)
	}
	tel, ok := w.Telemetry()
	if !ok || tel.Vectors != len(texts) || tel.Max > 1.0001 || tel.P50 > tel.Max {
		t.Errorf("telemetry %+v, %v", tel, ok)
	}
	partner := map[string]string{
		"notes/auth-bug.md": "notes/sign-in.md", "recipes/bread.txt": "recipes/loaf.txt", "travel/berlin.md": "travel/berlin-plan.md",
	}
	for a, b := range partner {
		va, _ := store.Vector(embedding.SpaceTags, a)
		best, bestKey := float32(-2), ""
		err := store.Vectors(ctx, embedding.SpaceTags, func(k string, v []float32) error {
			if s := embedding.Cosine(va, v); k != a && s > best {
				best, bestKey = s, k
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if bestKey != b {
			t.Errorf("nearest to %s is %s (%.2f), want %s", a, bestKey, best, b)
		}
	}
	rep, err = embedding.EnsureModel(ctx, dir, store, spaces.Map())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Spaces {
		if s.Action != embedding.ActionNone {
			t.Errorf("second boot, %s: %s, want nothing to do", s.Space, s.Action)
		}
	}
	if n, _ := store.CountNeedingEmbedding(ctx, embedding.SpaceTags); n != 0 {
		t.Errorf("second boot left %d rows needing vectors", n)
	}
}

// TestPackageDocs checks that every package of the engine has a doc comment.
func TestPackageDocs(t *testing.T) {
	for _, dir := range []string{"..", "../glove", "../embeddingtest", ".", "../../scripts/models/glovegen"} {
		pkgs, err := parser.ParseDir(token.NewFileSet(), dir, nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		for name, p := range pkgs {
			if len(name) > 5 && name[len(name)-5:] == "_test" {
				continue
			}
			has := false
			for _, f := range p.Files {
				has = has || f.Doc != nil
			}
			if !has {
				t.Errorf("package %s in %s has no doc comment", name, filepath.Clean(dir))
			}
		}
	}
}
