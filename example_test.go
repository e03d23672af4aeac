package semfs_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
)

// Agents and apps share one tree; every operation goes through the helpers,
// which use a backend's capabilities when it has them.
func Example() {
	ctx := context.Background()
	tree := memfs.New()

	// WriteFile creates missing parents.
	semfs.WriteFile(ctx, tree, "/notes/todo.md", []byte("- ship memfs\n"), 0o644)
	semfs.WriteFile(ctx, tree, "/notes/done.md", []byte("- contract\n"), 0o644)
	semfs.WriteFile(ctx, tree, "/scratch/run.log", []byte("ok\n"), 0o644)

	data, _ := semfs.ReadFile(ctx, tree, "/notes/todo.md")
	fmt.Printf("todo: %q\n", data)

	entries, _ := semfs.ReadDir(ctx, tree, "/notes")
	for _, e := range entries {
		fmt.Println("listed:", e.Name())
	}

	for p, err := range semfs.Files(ctx, tree, "/") {
		if err != nil {
			panic(err)
		}
		fmt.Println("file:", p)
	}

	total, _ := semfs.TotalSize(ctx, tree)
	fmt.Println("bytes:", total)

	// Errors are *fs.PathError values wrapping one sentinel.
	err := semfs.WriteFile(ctx, tree, "/notes/todo.md/inside", []byte("x"), 0o644)
	fmt.Println(errors.Is(err, semfs.ErrNotDir), err)

	// Output:
	// todo: "- ship memfs\n"
	// listed: done.md
	// listed: todo.md
	// file: /notes/done.md
	// file: /notes/todo.md
	// file: /scratch/run.log
	// bytes: 27
	// true write /notes/todo.md/inside: not a directory: a parent is a file
}
