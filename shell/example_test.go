package shell_test

import (
	"context"
	"fmt"
	"os"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/shell"
)

func Example() {
	fsys := memfs.FromMap(map[string]string{
		"/docs/guide.md": "# Guide\nhello world\n",
		"/docs/api.md":   "# API\nGET /users\n",
	})
	s := shell.New(fsys, shell.Options{})
	code, _ := s.Run(context.Background(), "cd docs && grep -n hello *.md && ls | wc -l", nil, os.Stdout, os.Stdout)
	fmt.Println("exit", code)
	// Output:
	// guide.md:2:hello world
	// 2
	// exit 0
}

func ExampleTree_View() {
	ctx := context.Background()
	fsys := memfs.FromMap(map[string]string{"/a.md": "a\n", "/b.md": "b\n"})
	tree, _ := shell.NewTree(ctx, fsys) // once per tree
	// Per session: a view pruned to the principal's groups (here nothing
	// is restricted, so everything is visible).
	s := shell.New(fsys, shell.Options{View: tree.View(semfs.Principal{Groups: []string{"support"}})})
	s.Run(ctx, "ls /", nil, os.Stdout, os.Stderr)
	// Output:
	// a.md
	// b.md
}
