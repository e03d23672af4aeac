package shell

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/meta"
)

// TestIndexedGrepWithMetaLayer runs the grep table over the real metadata
// layer (SQLite trigram index): the shell sends it patterns translated to
// RE2, and the output must equal a plain scan's.
func TestIndexedGrepWithMetaLayer(t *testing.T) {
	ctx := context.Background()
	ix, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := meta.New(memfs.New(), ix, meta.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); ix.Close() })
	plain := memfs.New()
	names := make([]string, 0, len(diffTree))
	for n := range diffTree {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, fsys := range []semfs.FS{m, plain} {
			var err error
			if strings.HasSuffix(n, "/") {
				err = semfs.MkdirAll(ctx, fsys, strings.TrimSuffix(n, "/"), 0o755)
			} else {
				err = semfs.WriteFile(ctx, fsys, n, []byte(diffTree[n]), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	// The index must narrow a selective pattern, or this test proves nothing.
	paths, ok, err := m.GrepCandidates(ctx, "/", "deep hello", semfs.GrepOptions{})
	if err != nil || !ok || len(paths) == 0 || len(paths) > 3 {
		t.Fatalf("meta GrepCandidates: %v %v %v", paths, ok, err)
	}
	for _, tc := range grepIndexCases {
		wantOut, wantErr, wantCode := run(t, New(plain, Options{}), tc)
		out, errOut, code := run(t, New(m, Options{}), tc)
		if out != wantOut || errOut != wantErr || code != wantCode {
			t.Errorf("%s: meta gave %q/%q/%d, scan %q/%q/%d", tc, out, errOut, code, wantOut, wantErr, wantCode)
		}
	}
}
