package access_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/internal/testtree"
	"github.com/semfs/semfs/memfs"
)

// benchPolicy is a realistic policy: ten rules, globs included, none of
// which refuses the benchmarked paths (the layer must still evaluate all).
func benchPolicy() access.Policy {
	return access.Policy{
		Default: access.Write,
		Rules: []access.Rule{
			{Path: "/corpus", Access: access.Read, Note: "curated upstream"},
			{Path: "/secrets", Access: access.None},
			{Path: "/work/**/*.locked.md", Access: access.Read},
			{Path: "/**/.git", Access: access.None},
			{Path: "/work/tmp/*", Access: access.None},
			{Path: "/memory", Access: access.Write},
			{Path: "/work/*/build", Access: access.Read},
			{Path: "/**/*.key", Access: access.None},
			{Path: "/shared/??-*", Access: access.Read},
			{Path: "/work/proj/vendor", Access: access.Read},
		},
	}
}

func benchTree(b *testing.B) *memfs.FS {
	b.Helper()
	files := map[string]string{}
	for i := range 100 {
		files[fmt.Sprintf("/work/proj/src/f%03d.md", i)] = "x"
	}
	return memfs.FromMap(files)
}

func BenchmarkStat(b *testing.B) {
	inner := benchTree(b)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		fsys semfs.FS
	}{
		{"bare", inner},
		{"access-norules", access.New(inner, access.Policy{})},
		{"access", access.New(inner, benchPolicy())},
	} {
		b.Run(c.name, func(b *testing.B) {
			loop(b, func() {
				if _, err := c.fsys.Stat(ctx, "/work/proj/src/f042.md"); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

func BenchmarkReadDir(b *testing.B) {
	inner := benchTree(b)
	tagged := &tagged{FS: inner, tags: map[string]semfs.Tags{}}
	ctx := context.Background()
	session := semfs.WithPrincipal(ctx, semfs.Principal{ID: "agent", Groups: []string{"support"}})
	for _, c := range []struct {
		name string
		fsys semfs.FS
		ctx  context.Context
	}{
		{"bare", inner, ctx},
		{"access-norules", access.New(inner, access.Policy{}), ctx},
		{"access", access.New(inner, benchPolicy()), ctx},
		{"access-session-meta", access.New(tagged, benchPolicy()), session},
	} {
		b.Run(c.name, func(b *testing.B) {
			loop(b, func() {
				entries, err := c.fsys.ReadDir(c.ctx, "/work/proj/src")
				if err != nil || len(entries) != 100 {
					b.Fatal(len(entries), err)
				}
			})
		})
	}
}

// BenchmarkRatio measures each layered call against the same call on the
// bare backend in alternating blocks on one thread (see blockRatio), so
// that both see the same state of a shared machine. Each iteration is one
// pair of blocks: run it with a count, e.g. -test.benchtime 40x, and read
// the reported medians and ratio, not ns/op.
func BenchmarkRatio(b *testing.B) {
	inner := benchTree(b)
	tagged := &tagged{FS: inner, tags: map[string]semfs.Tags{}}
	ctx := context.Background()
	session := semfs.WithPrincipal(ctx, semfs.Principal{ID: "agent", Groups: []string{"support"}})
	stat := func(ctx context.Context, fsys semfs.FS, name string) func() {
		return func() {
			if _, err := fsys.Stat(ctx, name); err != nil {
				b.Fatal(err)
			}
		}
	}
	const f042 = "/work/proj/src/f042.md"
	// The daemon's stack: the metadata layer (SQLite index) answers
	// visibility in bulk (VisibilityFS).
	m := testtree.New(b)
	listN := func(ctx context.Context, fsys semfs.FS, dir string, n int) func() {
		return func() {
			if entries, err := fsys.ReadDir(ctx, dir); err != nil || len(entries) != n {
				b.Fatal(len(entries), err)
			}
		}
	}
	list := func(ctx context.Context, fsys semfs.FS) func() { return listN(ctx, fsys, "/work/proj/src", 100) }
	walk := func(ctx context.Context, fsys semfs.FS) func() {
		return func() {
			n := 0
			for _, err := range semfs.Files(ctx, fsys, "/work") {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != 100 {
				b.Fatal(n)
			}
		}
	}
	for _, c := range []struct {
		name        string
		bare, layer func()
	}{
		{"Stat/norules", stat(ctx, inner, f042), stat(ctx, access.New(inner, access.Policy{}), f042)},
		{"Stat/rules", stat(ctx, inner, f042), stat(ctx, access.New(inner, benchPolicy()), f042)},
		{"Stat/session-meta-layer", stat(ctx, m, "/notes/auth.md"), stat(session, access.New(m, benchPolicy()), "/notes/auth.md")},
		{"ReadDir/norules", list(ctx, inner), list(ctx, access.New(inner, access.Policy{}))},
		{"ReadDir/rules", list(ctx, inner), list(ctx, access.New(inner, benchPolicy()))},
		{"ReadDir/session-meta", list(ctx, inner), list(session, access.New(tagged, benchPolicy()))},
		{"Files/rules", walk(ctx, inner), walk(ctx, access.New(inner, benchPolicy()))},
		{"ReadDir/session-meta-layer", listN(ctx, m, "/notes", 2), listN(session, access.New(m, benchPolicy()), "/notes", 2)},
	} {
		b.Run(c.name, func(b *testing.B) { blockRatio(b, c.bare, c.layer) })
	}
}
