package models

import (
	"context"
	"strings"
	"testing"

	"github.com/semfs/semfs/embedding"
)

func TestDefault(t *testing.T) {
	s, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if s.Tags == nil || s.Content == nil {
		t.Fatalf("Default() = %+v, want a model for every space", s)
	}
	for name, e := range s.Map() {
		if err := embedding.Check(context.Background(), e); err != nil {
			t.Errorf("space %s: %v", name, err)
		}
		info := e.Info()
		if info.TagThreshold <= 0 || info.TagThreshold >= 1 || info.DuplicateThreshold <= info.TagThreshold || info.DuplicateThreshold >= 1 {
			t.Errorf("space %s: thresholds tag %v, duplicate %v: want 0 < tag < duplicate < 1", name, info.TagThreshold, info.DuplicateThreshold)
		}
	}
	if len(s.Map()) != 2 {
		t.Errorf("Map() has %d spaces, want 2", len(s.Map()))
	}
	// The choice documented on Default: quality model for tags, fast model
	// for bulk content.
	if s.Tags.Info().Name != "use-lite-512-f16" || s.Content.Info().Name != "glove-6b-100d-int8" {
		t.Errorf("Default() = tags %s, content %s", s.Tags.Info().Name, s.Content.Info().Name)
	}
}

func TestByName(t *testing.T) {
	for _, n := range Names() {
		e, err := ByName(n)
		if err != nil {
			t.Fatalf("ByName(%q): %v", n, err)
		}
		short := map[string]bool{"glove": true, "use": true}
		if got := e.Info().Name; !short[n] && got != n {
			t.Errorf("ByName(%q).Info().Name = %q", n, got)
		}
	}
	_, err := ByName("minilm")
	if err == nil || !strings.Contains(err.Error(), "glove") {
		t.Errorf("ByName(unknown) = %v, want an error listing the known models", err)
	}
}
