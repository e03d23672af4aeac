package semfstest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/semfs/semfs"
)

// testReadDirLarge lists a directory larger than the pages of common
// object-store listings (1000) and than small internal blocks.
func testReadDirLarge(e *env) {
	const n = 1234
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("/many/f%05d", (i*7919)%n)] = ""
	}
	files["/many/zz/below"] = "x"
	fsys := e.seeded(files)
	got := e.names(fsys, "/many")
	if len(got) != n+1 || !slices.IsSorted(got) {
		e.Fatalf("ReadDir of a %d-entry directory returned %d names, sorted %v", n+1, len(got), slices.IsSorted(got))
	}
	for i, name := range got[:n] {
		if want := fmt.Sprintf("f%05d", i); name != want {
			e.Fatalf("ReadDir entry %d = %q; want %q", i, name, want)
		}
	}
	if got[n] != "zz" {
		e.Errorf("last entry = %q; want zz", got[n])
	}
	if list := e.files(fsys, "/many"); len(list) != n+1 || !slices.IsSorted(list) {
		e.Errorf("Files(/many) = %d paths, sorted %v; want %d", len(list), slices.IsSorted(list), n+1)
	}
}

// oddNames are valid names that trip encoders: URL and shell
// metacharacters, spaces, non-ASCII, a name of exactly MaxNameLen bytes.
var oddNames = []string{
	"with space", " lead", "trail ", "percent%20x", "plus+sign", "q?mark", "hash#tag",
	"amp&x=1", "colon:x", `quote'"`, "*star", "[br]", "~tilde", "-dash", ".hidden",
	"..dots", "...", "ünï", "emoji😀", "中文", "back`tick", "semi;colon", "$dollar",
	strings.Repeat("L", semfs.MaxNameLen),
}

func testOddNames(e *env) {
	files := map[string]string{}
	for i, n := range oddNames {
		files["/odd/"+n] = fmt.Sprintf("%d:%s", i, n)
	}
	deep := "/deep"
	for i := range 10 {
		deep += "/" + strings.Repeat(string(rune('a'+i)), 100)
	}
	files[deep+"/f"] = "deep"
	fsys := e.seeded(files)
	for _, p := range slices.Sorted(maps.Keys(files)) {
		e.wantContent(fsys, p, files[p])
		if info := e.stat(fsys, p); info.Name() != semfs.BaseName(p) {
			e.Errorf("Stat(%q).Name() = %q", p, info.Name())
		}
	}
	want := slices.Clone(oddNames)
	slices.Sort(want)
	if got := e.names(fsys, "/odd"); !slices.Equal(got, want) {
		e.Errorf("ReadDir(/odd) = %q;\nwant %q", got, want)
	}
	if got, want := e.files(fsys, "/"), slices.Sorted(maps.Keys(files)); !slices.Equal(got, want) {
		e.Errorf("Files(/) = %q;\nwant %q", got, want)
	}
}

// testListingsFollowWrites: listings, Stat and Files see every change at
// once (a layer that caches the tree must invalidate).
func testListingsFollowWrites(e *env) {
	fsys := e.empty()
	e.write(fsys, "/l/a", "a")
	e.names(fsys, "/l") // prime any cache
	e.files(fsys, "/")
	e.write(fsys, "/l/b", "bb")
	if got := e.names(fsys, "/l"); !slices.Equal(got, []string{"a", "b"}) {
		e.Errorf("ReadDir after a write = %q; want [a b]", got)
	}
	if err := semfs.Remove(e.ctx, fsys, "/l/a"); err != nil {
		e.Fatalf("Remove: %v", err)
	}
	if got := e.names(fsys, "/l"); !slices.Equal(got, []string{"b"}) {
		e.Errorf("ReadDir after a remove = %q; want [b]", got)
	}
	if !e.cfg.noRename {
		if err := semfs.Rename(e.ctx, fsys, "/l/b", "/m/c"); err == nil {
			e.Errorf("Rename to a missing parent succeeded")
		}
		e.mkdirAll(fsys, "/m")
		if err := semfs.Rename(e.ctx, fsys, "/l/b", "/m/c"); err != nil {
			e.Fatalf("Rename: %v", err)
		}
		if got := e.names(fsys, "/l"); len(got) != 0 {
			e.Errorf("ReadDir of the old parent after a rename = %q; want nothing", got)
		}
		if got := e.names(fsys, "/m"); !slices.Equal(got, []string{"c"}) {
			e.Errorf("ReadDir of the new parent after a rename = %q; want [c]", got)
		}
		if info := e.stat(fsys, "/m/c"); info.Size() != 2 {
			e.Errorf("Stat after a rename: size %d; want 2", info.Size())
		}
	} else {
		e.mkdirAll(fsys, "/m")
		e.write(fsys, "/m/c", "bb")
		semfs.Remove(e.ctx, fsys, "/l/b")
	}
	if got := e.files(fsys, "/"); !slices.Equal(got, []string{"/m/c"}) {
		e.Errorf("Files after the changes = %q; want [/m/c]", got)
	}
	if err := semfs.RemoveAll(e.ctx, fsys, "/m"); err != nil {
		e.Fatalf("RemoveAll: %v", err)
	}
	if got := e.names(fsys, "/"); !slices.Equal(got, []string{"l"}) {
		e.Errorf("ReadDir(/) after RemoveAll(/m) = %q; want [l]", got)
	}
	if n := e.totalSize(fsys); n != 0 {
		e.Errorf("TotalSize = %d; want 0", n)
	}
}
