package shell

import (
	"encoding/gob"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/semfs/semfs"
)

// treeFormat is the version of the encoded Tree. Changelog:
//
//	1: paths in preorder with size, mode, modification time and
//	   visibility set; the distinct group sets.
const treeFormat = 1

type encodedTree struct {
	Format int
	Sets   [][]string
	Nodes  []encodedNode
}

type encodedNode struct {
	Path string
	Size int64
	Mode uint32
	Mod  int64 // Unix nanoseconds
	Set  int
}

// Encode writes the tree's shape and visibility in a versioned binary
// form, so that a store can persist it and sessions can start from
// [LoadTree] without walking the files (seed 003's __path_tree__).
func (t *Tree) Encode(w io.Writer) error {
	e := encodedTree{Format: treeFormat, Sets: t.sets, Nodes: make([]encodedNode, len(t.nodes))}
	for i, n := range t.nodes {
		e.Nodes[i] = encodedNode{Path: n.path, Size: n.info.size, Mode: uint32(n.info.mode), Mod: n.info.mod.UnixNano(), Set: n.set}
	}
	return gob.NewEncoder(w).Encode(&e)
}

// LoadTree reads a tree written by [Tree.Encode]; fsys is the tree its
// files are read from.
func LoadTree(r io.Reader, fsys semfs.FS, opts ...TreeOptions) (*Tree, error) {
	var e encodedTree
	if err := gob.NewDecoder(r).Decode(&e); err != nil {
		return nil, fmt.Errorf("decoding the path tree: %w", err)
	}
	if e.Format != treeFormat {
		return nil, fmt.Errorf("path tree format %d is not supported (want %d); rebuild it with NewTree", e.Format, treeFormat)
	}
	if len(e.Nodes) == 0 || e.Nodes[0].Path != "/" || len(e.Sets) == 0 {
		return nil, fmt.Errorf("path tree is malformed: no root")
	}
	t := newTree(fsys, opts)
	t.sets = e.Sets
	var stack []int
	for i, en := range e.Nodes {
		if en.Set < 0 || en.Set >= len(e.Sets) || (i > 0 && !semfs.ValidPath(en.Path)) {
			return nil, fmt.Errorf("path tree is malformed at %q", en.Path)
		}
		n := node{path: en.Path, name: semfs.BaseName(en.Path), parent: -1, set: en.Set}
		n.info = fileInfo{name: n.name, size: en.Size, mode: fs.FileMode(en.Mode), mod: time.Unix(0, en.Mod)}
		for len(stack) > 0 && !semfs.HasPrefix(en.Path, t.nodes[stack[len(stack)-1]].path) {
			stack = stack[:len(stack)-1]
		}
		if i > 0 {
			if len(stack) == 0 || semfs.Dir(en.Path) != t.nodes[stack[len(stack)-1]].path {
				return nil, fmt.Errorf("path tree is malformed: %q is out of order", en.Path)
			}
			n.parent = stack[len(stack)-1]
			t.nodes[n.parent].children = append(t.nodes[n.parent].children, i)
		}
		t.nodes = append(t.nodes, n)
		t.index[en.Path] = i
		if n.info.IsDir() {
			stack = append(stack, i)
		}
	}
	t.buildReach()
	return t, nil
}
