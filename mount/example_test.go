package mount_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/mount"
)

func ExampleNew() {
	ctx := context.Background()
	memory := memfs.New()
	fsys, err := mount.New([]mount.Mount{
		{At: "/memory", FS: memory},
		{At: "/", FS: memfs.New()},
		{At: "/corpus", FS: memfs.FromMap(map[string]string{"/guide.md": "read me"}), ReadOnly: true},
	})
	if err != nil {
		panic(err)
	}
	// The backend mounted at /memory sees translated paths.
	if err := semfs.WriteFile(ctx, fsys, "/memory/notes/x.md", []byte("hello"), 0o644); err != nil {
		panic(err)
	}
	data, _ := semfs.ReadFile(ctx, memory, "/notes/x.md")
	fmt.Println(string(data))

	err = semfs.WriteFile(ctx, fsys, "/corpus/mine.md", []byte("x"), 0o644)
	fmt.Println(errors.Is(err, semfs.ErrReadOnly))

	err = semfs.Rename(ctx, fsys, "/memory/notes/x.md", "/x.md")
	fmt.Println(errors.Is(err, mount.ErrCrossMount))

	entries, _ := semfs.ReadDir(ctx, fsys, "/")
	for _, e := range entries {
		fmt.Println(e.Name())
	}
	// Output:
	// hello
	// true
	// true
	// corpus
	// memory
}
