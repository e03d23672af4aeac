package hostfs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/hostfs"
)

// An Overlay tree keeps every change in memory until Commit.
func Example_overlay() {
	dir, _ := os.MkdirTemp("", "hostfs-example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "draft.md"), []byte("first draft"), 0o644)

	ctx := context.Background()
	tree, err := hostfs.Open(dir, hostfs.Overlay)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tree.Close()

	semfs.WriteFile(ctx, tree, "/notes/today.md", []byte("remember the milk"), 0o644)
	semfs.Remove(ctx, tree, "/draft.md")
	for _, c := range tree.Changes() {
		fmt.Println(c.Kind, c.Path)
	}
	_, err = os.Stat(filepath.Join(dir, "draft.md"))
	fmt.Println("draft.md still on disk:", err == nil)

	if err := tree.Commit(ctx); err != nil {
		fmt.Println(err)
		return
	}
	data, _ := os.ReadFile(filepath.Join(dir, "notes", "today.md"))
	_, err = os.Stat(filepath.Join(dir, "draft.md"))
	fmt.Printf("after Commit: %q, draft.md on disk: %v\n", data, err == nil)
	// Output:
	// remove /draft.md
	// mkdir /notes
	// write /notes/today.md
	// draft.md still on disk: true
	// after Commit: "remember the milk", draft.md on disk: false
}

// Errors name tree paths, never the host directory.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "hostfs-example")
	defer os.RemoveAll(dir)
	os.Symlink("/etc/passwd", filepath.Join(dir, "passwd"))

	tree, _ := hostfs.Open(dir, hostfs.ReadOnly)
	defer tree.Close()
	_, err := semfs.ReadFile(context.Background(), tree, "/passwd")
	fmt.Println(err)
	_, err = semfs.ReadFile(context.Background(), tree, "/../etc/passwd")
	fmt.Println(err)
	// Output:
	// read /passwd: permission denied: symlink points outside the tree (hostfs follows only relative links that stay inside it)
	// read /../etc/passwd: invalid argument: ".." element; paths are rooted at the tree and cannot climb out of it — write the full path from "/"
}
