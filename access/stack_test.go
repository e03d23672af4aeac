package access_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/mount"
)

// The stack of seed 004's example: access rules over a mount table of a
// memory root, a read-only corpus and a memory store.
func TestSeed004Stack(t *testing.T) {
	corpus := memfs.FromMap(map[string]string{"/guide.md": "guide"})
	memory := memfs.New()
	table, err := mount.New([]mount.Mount{
		{At: "/", FS: memfs.FromMap(map[string]string{"/work/todo.md": "todo"})},
		{At: "/corpus", FS: corpus, ReadOnly: true},
		{At: "/memory", FS: memory},
	})
	if err != nil {
		t.Fatal(err)
	}
	f := access.New(table, access.Policy{Rules: []access.Rule{{Path: "/corpus", Access: access.Read, Note: "curated upstream"}}})

	// What a script writes to /memory/notes/x.md is what the store holds at
	// /notes/x.md and what any reader reads back at the same tree path.
	if err := f.WriteFile(ctx, "/memory/notes/x.md", []byte("note"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := string(must(memory.ReadFile(ctx, "/notes/x.md"))); got != "note" {
		t.Errorf("store holds %q", got)
	}
	if got := string(must(f.ReadFile(ctx, "/memory/notes/x.md"))); got != "note" {
		t.Errorf("read back %q", got)
	}
	wantNames(t, f, ctx, "/", "corpus/", "memory/", "work/")

	// The policy refuses first, with its note; the mount would too.
	pe := wantErr(t, f.WriteFile(ctx, "/corpus/new.md", nil, 0o644), semfs.ErrPermission, "/corpus/new.md")
	if !strings.Contains(pe.Error(), "curated upstream") {
		t.Errorf("refusal %q lacks the note", pe)
	}
	// A rename across mounts is refused whole, and says why.
	err = f.Rename(ctx, "/work/todo.md", "/memory/todo.md")
	if !errors.Is(err, semfs.ErrPermission) || !errors.Is(err, mount.ErrCrossMount) {
		t.Errorf("cross-mount rename through the access layer: %v", err)
	}
	// A mount point cannot be removed through the stack either.
	wantErr(t, f.Remove(ctx, "/memory"), semfs.ErrPermission, "/memory")
	// Files and TotalSize see the whole stack.
	files := fileList(t, f, ctx, "/")
	if want := []string{"/corpus/guide.md", "/memory/notes/x.md", "/work/todo.md"}; !slices.Equal(files, want) {
		t.Errorf("Files = %v, want %v", files, want)
	}
	if n, err := f.TotalSize(ctx); n != int64(len("guide")+len("note")+len("todo")) || err != nil {
		t.Errorf("TotalSize = %d, %v", n, err)
	}
	// Snapshots go below every layer: Base stops at the mount table, whose
	// Mounts list the backends to snapshot.
	if semfs.Base(f) != semfs.FS(table) || len(table.Mounts()) != 3 {
		t.Errorf("Base = %T, mounts %d", semfs.Base(f), len(table.Mounts()))
	}
}
