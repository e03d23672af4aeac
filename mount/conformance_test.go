package mount_test

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/mount"
	"github.com/semfs/semfs/semfstest"
)

func TestConformanceRootMount(t *testing.T) {
	semfstest.Run(t, func(t *testing.T) semfs.FS {
		return mustNew(t, mount.Mount{At: "/", FS: memfs.New()})
	}, semfstest.Writers(4))
}

func TestConformanceNestedTables(t *testing.T) {
	semfstest.Run(t, func(t *testing.T) semfs.FS {
		inner := mustNew(t, mount.Mount{At: "/", FS: memfs.New()})
		return mustNew(t, mount.Mount{At: "/", FS: inner})
	}, semfstest.Writers(4))
}

func TestIOFSOverSeveralMounts(t *testing.T) {
	f := mustNew(t,
		mount.Mount{At: "/", FS: memfs.FromMap(map[string]string{"/top.txt": "t", "/a/own.txt": "o"})},
		mount.Mount{At: "/a/b/memory", FS: memfs.FromMap(map[string]string{"/notes/x.md": "x"})},
		mount.Mount{At: "/abs", FS: memfs.FromMap(map[string]string{"/abs/y.md": "y"}), KeepAbsolute: true},
		mount.Mount{At: "/empty", FS: memfs.New(), ReadOnly: true},
	)
	if err := fstest.TestFS(semfs.IOFS(context.Background(), f),
		"top.txt", "a/own.txt", "a/b/memory/notes/x.md", "abs/y.md", "empty"); err != nil {
		t.Fatal(err)
	}
}
