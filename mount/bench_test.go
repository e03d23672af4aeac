package mount_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/mount"
)

func benchBackend() *memfs.FS {
	files := map[string]string{}
	for i := range 100 {
		files[fmt.Sprintf("/proj/src/f%03d.md", i)] = "x"
	}
	return memfs.FromMap(files)
}

// benchTables returns the bare backend and tables serving the same files at
// /work/proj/src (translated) with other mounts around.
func benchTables(b *testing.B) []struct {
	name string
	fsys semfs.FS
	dir  string
} {
	inner := benchBackend()
	one, err := mount.New([]mount.Mount{{At: "/", FS: inner}})
	if err != nil {
		b.Fatal(err)
	}
	five, err := mount.New([]mount.Mount{
		{At: "/", FS: memfs.New()},
		{At: "/work", FS: inner},
		{At: "/corpus", FS: memfs.New(), ReadOnly: true},
		{At: "/memory", FS: memfs.New()},
		{At: "/a/b/c", FS: memfs.New()},
	})
	if err != nil {
		b.Fatal(err)
	}
	return []struct {
		name string
		fsys semfs.FS
		dir  string
	}{
		{"bare", inner, "/proj/src"},
		{"mount-root", one, "/proj/src"},
		{"mount-5-translated", five, "/work/proj/src"},
	}
}

func BenchmarkStat(b *testing.B) {
	ctx := context.Background()
	for _, c := range benchTables(b) {
		b.Run(c.name, func(b *testing.B) {
			p := c.dir + "/f042.md"
			loop(b, func() {
				if _, err := c.fsys.Stat(ctx, p); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

func BenchmarkReadDir(b *testing.B) {
	ctx := context.Background()
	for _, c := range benchTables(b) {
		b.Run(c.name, func(b *testing.B) {
			loop(b, func() {
				entries, err := c.fsys.ReadDir(ctx, c.dir)
				if err != nil || len(entries) != 100 {
					b.Fatal(len(entries), err)
				}
			})
		})
	}
}

func BenchmarkReadFile(b *testing.B) {
	ctx := context.Background()
	for _, c := range benchTables(b) {
		b.Run(c.name, func(b *testing.B) {
			p := c.dir + "/f042.md"
			loop(b, func() {
				if _, err := semfs.ReadFile(ctx, c.fsys, p); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
