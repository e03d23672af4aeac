package access_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/memfs"
)

func ExampleNew() {
	ctx := context.Background()
	tree := memfs.FromMap(map[string]string{
		"/corpus/guide.md":     "curated",
		"/work/notes.md":       "mine",
		"/work/plan.locked.md": "frozen",
		"/secrets/key.txt":     "hidden",
	})
	fsys := access.New(tree, access.Policy{
		Default: access.None,
		Rules: []access.Rule{
			{Path: "/corpus", Access: access.Read, Note: "curated upstream"},
			{Path: "/work", Access: access.Write},
			{Path: "/**/*.locked.md", Access: access.Read},
		},
	})
	// A listing filters...
	entries, _ := semfs.ReadDir(ctx, fsys, "/")
	for _, e := range entries {
		fmt.Println(e.Name())
	}
	// ...a named path refuses.
	_, err := semfs.ReadFile(ctx, fsys, "/secrets/key.txt")
	fmt.Println(errors.Is(err, semfs.ErrPermission))
	ok, _ := semfs.Exists(ctx, fsys, "/secrets/key.txt")
	fmt.Println(ok)
	// Writes follow the rules, whatever surface asks.
	err = semfs.WriteFile(ctx, fsys, "/work/plan.locked.md", []byte("x"), 0o644)
	fmt.Println(err)
	// Output:
	// corpus
	// work
	// true
	// false
	// write /work/plan.locked.md: permission denied: read-only by the access policy
}
