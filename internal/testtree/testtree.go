// Package testtree builds, for front-end tests, a real semfs stack: memfs
// under the metadata layer (a SQLite index in a temporary directory and the
// deterministic test embedder), holding a few tagged files, one of them
// visible only to the "billing" group.
package testtree

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/embedding/embeddingtest"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/meta"
)

// Files are the contents New writes.
var Files = map[string]string{
	"/notes/auth.md":     "# Auth bug\n\nLogin fails when the token expires.\nTODO: refresh tokens.\n",
	"/notes/deploy.md":   "# Deploy\n\nRun the pipeline.\n",
	"/billing/secret.md": "# Invoices\n\nStripe keys rotate monthly.\n",
	"/src/main.go":       "package main\n\nfunc main() {}\n",
}

// New returns the metadata layer over a fresh tree holding Files, written
// by app "setup"; /billing/secret.md is visible to group "billing" only and
// /notes/auth.md is tagged with task "fix the auth bug" and app "editor".
func New(t testing.TB) *meta.FS {
	t.Helper()
	ctx := context.Background()
	ix, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	e := embeddingtest.New()
	m, err := meta.New(memfs.New(), ix, meta.Options{Spaces: embedding.Spaces{Tags: e, Content: e}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	admin := semfs.WithPrincipal(ctx, semfs.Principal{ID: "host", App: "setup", Admin: true})
	for p, c := range Files {
		if err := semfs.WriteFile(admin, m, p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.SetTags(admin, "/billing/secret.md", semfs.Tags{Task: "invoices", Groups: []string{"billing"}}); err != nil {
		t.Fatal(err)
	}
	if err := m.SetTags(admin, "/notes/auth.md", semfs.Tags{Task: "fix the auth bug", RelatedApps: []string{"editor"}}); err != nil {
		t.Fatal(err)
	}
	return m
}
