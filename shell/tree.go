package shell

import (
	"context"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/semfs/semfs"
)

// Tree is the shape of a whole tree (every path, with size, mode,
// modification time and visibility groups), built once with [NewTree] and
// shared read-only by every session over that tree. It is a snapshot:
// changes made to the FS afterwards are seen by a session only for paths
// that session wrote itself; build a new Tree to see others'.
type Tree struct {
	fsys  semfs.FS
	nodes []node         // preorder; nodes[0] is the root
	index map[string]int // path → node
	// sets are the distinct visibility group sets; sets[0] is "public".
	sets [][]string
	// reach[i] marks the nodes a principal who may see set i must see:
	// the files of set i and all their ancestors. always marks nodes every
	// principal sees (the root, public files, empty directories and their
	// ancestors).
	reach  []bitset
	always bitset
	all    bitset
	cache  *readCache

	mu    sync.Mutex
	views map[string]*View // by group key
}

type node struct {
	path     string
	name     string
	parent   int
	children []int // sorted by name
	info     fileInfo
	set      int // visibility set of a file
}

// TreeOptions configure [NewTree].
type TreeOptions struct {
	// CacheBytes bounds the cache of file contents read by grep and cat
	// (default 64 MiB; negative disables it).
	CacheBytes int64
}

// NewTree walks fsys once and records its shape and each file's
// visibility groups (from semfs.MetaFS, when fsys keeps metadata). ctx
// should carry a principal that sees the whole tree (an admin): sessions
// prune per principal with [Tree.View].
func NewTree(ctx context.Context, fsys semfs.FS, opts ...TreeOptions) (*Tree, error) {
	t := newTree(fsys, opts)
	setIDs := map[string]int{"": 0}
	mfs, hasMeta := fsys.(semfs.MetaFS)
	var stack []int // ancestors of the node being added
	err := semfs.WalkDir(ctx, fsys, "/", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			if semfs.IsAbsence(err) {
				return nil
			}
			return err
		}
		n := node{path: p, name: semfs.BaseName(p), parent: -1}
		n.info = fileInfo{name: n.name, size: info.Size(), mode: info.Mode(), mod: info.ModTime()}
		if p == "/" {
			n.info.name = "/"
		}
		for len(stack) > 0 && !semfs.HasPrefix(p, t.nodes[stack[len(stack)-1]].path) {
			stack = stack[:len(stack)-1]
		}
		id := len(t.nodes)
		if len(stack) > 0 {
			n.parent = stack[len(stack)-1]
			t.nodes[n.parent].children = append(t.nodes[n.parent].children, id)
		}
		if !info.IsDir() && hasMeta {
			if m, err := mfs.Meta(ctx, p); err == nil && len(m.Groups) > 0 && !m.Public {
				g := slices.Clone(m.Groups)
				sort.Strings(g)
				g = slices.Compact(g)
				key := strings.Join(g, "\x00")
				sid, ok := setIDs[key]
				if !ok {
					sid = len(t.sets)
					setIDs[key] = sid
					t.sets = append(t.sets, g)
				}
				n.set = sid
			}
		}
		t.nodes = append(t.nodes, n)
		t.index[p] = id
		if info.IsDir() {
			stack = append(stack, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(t.nodes) == 0 {
		return nil, semfs.PathErr("tree", "/", semfs.ErrNotExist, "the tree has no root")
	}
	t.buildReach()
	return t, nil
}

func newTree(fsys semfs.FS, opts []TreeOptions) *Tree {
	var o TreeOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = 64 << 20
	}
	return &Tree{fsys: fsys, index: map[string]int{}, sets: [][]string{nil}, cache: newReadCache(o.CacheBytes), views: map[string]*View{}}
}

// buildReach precomputes one bitset per visibility set, so that a View is
// a handful of word-wise ORs.
func (t *Tree) buildReach() {
	n := len(t.nodes)
	t.reach = make([]bitset, len(t.sets))
	for i := range t.reach {
		t.reach[i] = newBitset(n)
	}
	t.always = newBitset(n)
	t.all = newBitset(n)
	t.always.set(0)
	hasFile := make([]bool, n) // the subtree holds a file
	for i := n - 1; i >= 0; i-- {
		nd := &t.nodes[i]
		t.all.set(i)
		if !nd.info.IsDir() {
			hasFile[i] = true
			mark := t.reach[nd.set]
			if nd.set == 0 {
				mark = t.always
			}
			for j := i; j >= 0; j = t.nodes[j].parent {
				if mark.has(j) && j != i {
					break
				}
				mark.set(j)
			}
		}
		if nd.parent >= 0 && hasFile[i] {
			hasFile[nd.parent] = true
		}
	}
	// Directories with no file anywhere below are shown to everyone.
	for i := range n {
		if t.nodes[i].info.IsDir() && !hasFile[i] {
			for j := i; j >= 0 && !t.always.has(j); j = t.nodes[j].parent {
				t.always.set(j)
			}
		}
	}
}

// Len returns the number of paths in the tree, directories included.
func (t *Tree) Len() int { return len(t.nodes) }

// FS returns the tree's file system.
func (t *Tree) FS() semfs.FS { return t.fsys }

// View returns the tree as principal p sees it: files whose groups p is
// not in are absent, and so are directories left with nothing visible in
// them (a directory that was empty in the tree stays). Views are cached
// per group set, so this is a map lookup after the first call.
func (t *Tree) View(p semfs.Principal) *View {
	g := slices.Clone(p.Groups)
	sort.Strings(g)
	key := strings.Join(g, "\x00")
	if p.Admin {
		key = "\x01admin"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if v, ok := t.views[key]; ok {
		return v
	}
	var vis bitset
	if p.Admin {
		vis = t.all
	} else {
		vis = slices.Clone(t.always)
		for i := 1; i < len(t.sets); i++ {
			if (semfs.Tags{Groups: t.sets[i]}).VisibleTo(p) {
				vis.or(t.reach[i])
			}
		}
	}
	v := &View{t: t, vis: vis}
	if len(t.views) > 1024 {
		clear(t.views)
	}
	t.views[key] = v
	return v
}

// View is a Tree pruned to what one principal may see. It is immutable and
// safe for concurrent use.
type View struct {
	t   *Tree
	vis bitset
}

// Tree returns the tree the view was made from.
func (v *View) Tree() *Tree { return v.t }

func (v *View) lookup(p string) (int, bool) {
	i, ok := v.t.index[p]
	if !ok || !v.vis.has(i) {
		return 0, false
	}
	return i, true
}

// Stat describes p as the view sees it.
func (v *View) Stat(p string) (fs.FileInfo, error) {
	if i, ok := v.lookup(p); ok {
		return &v.t.nodes[i].info, nil
	}
	return nil, v.absent("stat", p)
}

// absent builds the error for a path the view does not have: not-a-dir
// when a visible ancestor is a file, not-exist otherwise.
func (v *View) absent(op, p string) error {
	var err error = semfs.ErrNotExist
	semfs.Ancestors(p, func(dir string) bool {
		if i, ok := v.lookup(dir); ok && !v.t.nodes[i].info.IsDir() {
			err = semfs.ErrNotDir
			return false
		}
		return true
	})
	return semfs.PathErr(op, p, err, "")
}

// ReadDir lists the visible children of the directory p, sorted by name.
func (v *View) ReadDir(p string) ([]fs.FileInfo, error) {
	i, ok := v.lookup(p)
	if !ok {
		return nil, v.absent("readdir", p)
	}
	nd := &v.t.nodes[i]
	if !nd.info.IsDir() {
		return nil, semfs.PathErr("readdir", p, semfs.ErrNotDir, "")
	}
	out := make([]fs.FileInfo, 0, len(nd.children))
	for _, c := range nd.children {
		if v.vis.has(c) {
			out = append(out, &v.t.nodes[c].info)
		}
	}
	return out, nil
}

// Files calls fn for every visible regular file below root in preorder
// (each directory's entries by name, a directory before what is in it).
func (v *View) Files(root string, fn func(p string, info fs.FileInfo) bool) {
	i, ok := v.lookup(root)
	if !ok {
		return
	}
	v.walk(i, fn)
}

func (v *View) walk(i int, fn func(string, fs.FileInfo) bool) bool {
	nd := &v.t.nodes[i]
	if !nd.info.IsDir() {
		return fn(nd.path, &nd.info)
	}
	for _, c := range nd.children {
		if v.vis.has(c) && !v.walk(c, fn) {
			return false
		}
	}
	return true
}

// Paths returns every visible path, directories included, in preorder.
func (v *View) Paths() []string {
	var out []string
	for i := range v.t.nodes {
		if v.vis.has(i) {
			out = append(out, v.t.nodes[i].path)
		}
	}
	return out
}

// bitset is a fixed-size set of node numbers.
type bitset []uint64

func newBitset(n int) bitset    { return make(bitset, (n+63)/64) }
func (b bitset) set(i int)      { b[i>>6] |= 1 << (i & 63) }
func (b bitset) has(i int) bool { return b[i>>6]&(1<<(i&63)) != 0 }
func (b bitset) or(o bitset) {
	for i := range b {
		b[i] |= o[i]
	}
}
