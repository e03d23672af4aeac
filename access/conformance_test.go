package access_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/mount"
	"github.com/semfs/semfs/semfstest"
)

func TestConformancePermissive(t *testing.T) {
	semfstest.Run(t, func(t *testing.T) semfs.FS {
		return access.New(memfs.New(), access.Policy{})
	}, semfstest.Writers(4))
}

// A policy whose rules and visibility hook never touch the suite's paths,
// with a quota far above its needs: every check runs, none refuses.
func busyPolicy() access.Policy {
	return access.Policy{
		Default: access.Write,
		Rules: []access.Rule{
			{Path: "/zz-none", Access: access.None},
			{Path: "/**/*.zz-locked", Access: access.Read},
			{Path: "/zz-ro/**", Access: access.Read},
		},
		Quota: 1 << 40,
		Visible: func(ctx context.Context, p string) (bool, error) {
			return !strings.Contains(p, "zz-hidden"), nil
		},
	}
}

func TestConformanceBusyPolicy(t *testing.T) {
	semfstest.Run(t, func(t *testing.T) semfs.FS {
		return access.New(memfs.New(), busyPolicy())
	}, semfstest.Writers(4))
}

func TestConformanceOverMount(t *testing.T) {
	semfstest.Run(t, func(t *testing.T) semfs.FS {
		m, err := mount.New([]mount.Mount{{At: "/", FS: memfs.New()}})
		if err != nil {
			t.Fatal(err)
		}
		return access.New(m, busyPolicy())
	}, semfstest.Writers(4))
}

func TestIOFSFiltered(t *testing.T) {
	f, _ := seed004(t)
	if err := fstest.TestFS(semfs.IOFS(context.Background(), f),
		"corpus/guide.md", "work/notes.md", "work/plan.locked.md", "deep/a/b/c/spec.locked.md"); err != nil {
		t.Fatal(err)
	}
}

// What a session sees of a tree with hidden files and rules is a consistent
// file system: listings, Stat, Open and ReadFile agree (testing/fstest
// checks that), and it holds exactly the visible, granted files.
func TestIOFSSessionView(t *testing.T) {
	inner := newTagged(map[string]string{
		"/auth/oauth.mdx":          "o",
		"/internal/billing.mdx":    "b",
		"/api/users.mdx":           "u",
		"/api/payments.mdx":        "p",
		"/api/deep/only-hidden.md": "h",
		"/api/deep2/shown.md":      "s",
		"/corpus/guide.md":         "g",
		"/secret/x.md":             "x",
	})
	inner.hide("/internal/billing.mdx", "billing")
	inner.hide("/api/payments.mdx", "billing")
	inner.hide("/api/deep/only-hidden.md", "billing")
	f := access.New(inner, access.Policy{Rules: []access.Rule{
		{Path: "/secret", Access: access.None},
		{Path: "/corpus", Access: access.Read},
	}})
	if err := fstest.TestFS(semfs.IOFS(principalCtx("support"), f),
		"auth/oauth.mdx", "api/users.mdx", "api/deep2/shown.md", "corpus/guide.md"); err != nil {
		t.Fatal(err)
	}
	got := fileList(t, f, principalCtx("support"), "/")
	want := []string{"/api/deep2/shown.md", "/api/users.mdx", "/auth/oauth.mdx", "/corpus/guide.md"}
	if !slices.Equal(got, want) {
		t.Errorf("Files = %v, want %v", got, want)
	}
}
