package memfs_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
)

// A snapshot is one stream; restoring it replaces the whole tree.
func ExampleFS_Snapshot() {
	ctx := context.Background()
	tree := memfs.FromMap(map[string]string{"/notes/a.md": "first"})

	var saved bytes.Buffer
	if err := tree.Snapshot(ctx, &saved); err != nil {
		panic(err)
	}
	semfs.WriteFile(ctx, tree, "/notes/a.md", []byte("second"), 0o644)
	semfs.WriteFile(ctx, tree, "/notes/b.md", []byte("new"), 0o644)

	if err := tree.Restore(ctx, &saved); err != nil {
		panic(err)
	}
	files, _ := semfs.FileList(ctx, tree, "/")
	data, _ := semfs.ReadFile(ctx, tree, "/notes/a.md")
	fmt.Println(files, string(data))

	// A damaged stream is refused and the tree stays as it is.
	err := tree.Restore(ctx, bytes.NewReader([]byte("not a snapshot")))
	fmt.Println(err != nil, semfs.Sentinel(err) == semfs.ErrInvalid)
	// Output:
	// [/notes/a.md] first
	// true true
}

// A clone is an independent tree that shares contents until either side
// writes.
func ExampleFS_Clone() {
	ctx := context.Background()
	tree := memfs.FromMap(map[string]string{"/plan.md": "v1"})
	session := tree.Clone()
	semfs.WriteFile(ctx, session, "/plan.md", []byte("v2 (draft)"), 0o644)

	a, _ := semfs.ReadFile(ctx, tree, "/plan.md")
	b, _ := semfs.ReadFile(ctx, session, "/plan.md")
	fmt.Printf("%s | %s\n", a, b)
	// Output: v1 | v2 (draft)
}
