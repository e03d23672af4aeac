package indextest

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// RemoveIfSeesOtherWriters checks an index.RemovingStore's RemoveIf
// with two handles on one shared index, as two processes: gone is shown
// the rows as the other handle committed them, only the rows it returns
// are removed (from File, Files, the tag index and content search, as
// both handles see them), a write the other handle makes while gone
// decides is ordered after the removal and kept, an error from gone is
// returned and writes nothing, and a path gone returns that it was not
// shown is refused. fresh makes a new, empty shared index and returns
// what opens a handle of its own on it (closed when the test ends).
func RemoveIfSeesOtherWriters(t *testing.T, fresh func(t *testing.T) (open func() index.Store)) {
	open := fresh(t)
	a, b := open(), open()
	ra, ok := a.(index.RemovingStore)
	if !ok {
		t.Fatalf("%T is not an index.RemovingStore", a)
	}
	for _, p := range []string{"/a.md", "/b.md", "/c.md", "/d.md"} {
		put(t, a, file(p, "zanzibar", "app"), "kittiwake notes of "+p+"\n")
	}
	// The other handle rewrites /b.md after a's handle read it (its
	// memory has the old row).
	if _, err := a.Files(ctx, []string{"/b.md"}); err != nil {
		t.Fatal(err)
	}
	rewritten := file("/b.md", "zanzibar", "app")
	rewritten.Groups = []string{"finance"}
	rewritten.UpdatedAt = rewritten.UpdatedAt.Add(time.Minute)
	put(t, b, rewritten, "kittiwake notes rewritten\n")

	var shown map[string]index.File
	late := make(chan error, 1)
	err := ra.RemoveIf(ctx, []string{"/a.md", "/b.md", "/c.md", "/d.md", "/none.md"}, func(stored map[string]index.File) ([]string, error) {
		shown = stored
		// The other handle writes /d.md while the removal decides: it
		// must be ordered after it and kept.
		go func() { late <- b.Put(ctx, index.Item{File: file("/d.md", "late", "other")}) }()
		time.Sleep(200 * time.Millisecond)
		var gone []string
		for p, f := range stored {
			if len(f.Groups) == 0 && p != "/c.md" {
				gone = append(gone, p)
			}
		}
		return gone, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-late; err != nil {
		t.Fatal(err)
	}
	if keys := slices.Sorted(maps.Keys(shown)); !slices.Equal(keys, []string{"/a.md", "/b.md", "/c.md", "/d.md"}) {
		t.Errorf("gone was shown the rows of %v, want those of /a.md /b.md /c.md /d.md (no row for /none.md)", keys)
	}
	if g := shown["/b.md"].Groups; !slices.Equal(g, []string{"finance"}) {
		t.Errorf("gone was shown /b.md with groups %v, want the other handle's [finance]", g)
	}
	for name, s := range map[string]index.Store{"remover": a, "other": b} {
		rows, err := s.Files(ctx, []string{"/a.md", "/b.md", "/c.md", "/d.md"})
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for p := range rows {
			left = append(left, p)
		}
		slices.Sort(left)
		if !slices.Equal(left, []string{"/b.md", "/c.md", "/d.md"}) {
			t.Errorf("%s handle: rows after RemoveIf %v, want /b.md /c.md /d.md", name, left)
		}
		if rows["/d.md"].Task != "late" {
			t.Errorf("%s handle: /d.md task %q, want the late write's", name, rows["/d.md"].Task)
		}
		if _, err := s.File(ctx, "/a.md"); !errors.Is(err, semfs.ErrNotExist) {
			t.Errorf("%s handle: File(/a.md) = %v, want ErrNotExist", name, err)
		}
		hits, err := s.SearchChunks(ctx, index.QueryTokens("kittiwake"), index.Filter{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if got := paths(hits); !slices.Equal(got, []string{"/b.md", "/c.md"}) {
			t.Errorf("%s handle: search kittiwake = %v, want /b.md /c.md", name, got)
		}
		cands, err := s.TagKeywordCandidates(ctx, "zanzibar")
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(cands)
		if !slices.Equal(cands, []string{"/b.md", "/c.md"}) {
			t.Errorf("%s handle: tag candidates zanzibar = %v, want /b.md /c.md", name, cands)
		}
	}

	// An error from gone writes nothing and is returned.
	refuse := errors.New("refused")
	err = ra.RemoveIf(ctx, []string{"/c.md"}, func(map[string]index.File) ([]string, error) {
		return []string{"/c.md"}, refuse
	})
	if !errors.Is(err, refuse) {
		t.Errorf("RemoveIf with gone failing = %v, want gone's error", err)
	}
	// A path gone was not shown is refused.
	err = ra.RemoveIf(ctx, []string{"/c.md"}, func(map[string]index.File) ([]string, error) {
		return []string{"/c.md", "/b.md"}, nil
	})
	if err == nil {
		t.Error("RemoveIf removed a path gone was not shown the row of")
	}
	rows, err := b.Files(ctx, []string{"/b.md", "/c.md"})
	if err != nil || len(rows) != 2 {
		t.Errorf("rows of /b.md /c.md after refused removals: %d, %v; want both", len(rows), err)
	}
}
