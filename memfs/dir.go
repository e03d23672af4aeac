package memfs

import "slices"

// A directory keeps its children sorted by name in blocks of at most
// maxBlock entries (node.kids). Lookups are two binary searches; an insert or
// a delete moves at most one block, so building a directory of a million
// entries in random order stays linear-ish instead of quadratic, while a
// small directory is one block: a single slice.
const maxBlock = 512

// slot is the position of a child: block b, index i within it. For a
// missing name it is where the name would be inserted.
type slot struct{ b, i int }

// child returns the child of dir called name and its slot, or nil and the
// slot where it would go.
func (dir *node) child(name string) (*node, slot) {
	bs := dir.kids
	lo, hi := 0, len(bs)
	for lo < hi { // first block whose last name is >= name
		m := int(uint(lo+hi) >> 1)
		if blk := bs[m]; blk[len(blk)-1].name < name {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(bs) {
		if lo == 0 {
			return nil, slot{}
		}
		return nil, slot{lo - 1, len(bs[lo-1])} // after the last name
	}
	blk := bs[lo]
	i, j := 0, len(blk)
	for i < j {
		m := int(uint(i+j) >> 1)
		if blk[m].name < name {
			i = m + 1
		} else {
			j = m
		}
	}
	if blk[i].name == name {
		return blk[i], slot{lo, i}
	}
	return nil, slot{lo, i}
}

// insertAt inserts c at s, as returned by child for c.name.
func (dir *node) insertAt(s slot, c *node) {
	if len(dir.kids) == 0 {
		dir.kids = [][]*node{{c}}
		return
	}
	blk := dir.kids[s.b]
	if s.b == len(dir.kids)-1 && s.i == len(blk) && len(blk) >= maxBlock {
		// Appending past a full last block (names arriving in order):
		// start a new block rather than split, so blocks stay full.
		dir.kids = append(dir.kids, []*node{c})
		return
	}
	blk = slices.Insert(blk, s.i, c)
	if len(blk) <= maxBlock {
		dir.kids[s.b] = blk
		return
	}
	half := len(blk) / 2
	right := slices.Clone(blk[half:])
	clear(blk[half:])
	dir.kids[s.b] = blk[:half]
	dir.kids = slices.Insert(dir.kids, s.b+1, right)
}

// deleteAt removes the child at s.
func (dir *node) deleteAt(s slot) {
	blk := slices.Delete(dir.kids[s.b], s.i, s.i+1)
	if len(blk) > 0 {
		dir.kids[s.b] = blk
		return
	}
	dir.kids = slices.Delete(dir.kids, s.b, s.b+1)
	if len(dir.kids) == 0 {
		dir.kids = nil
	}
}

// empty reports whether dir has no children.
func (dir *node) empty() bool { return len(dir.kids) == 0 }

// count returns the number of children of dir.
func (dir *node) count() int {
	n := 0
	for _, blk := range dir.kids {
		n += len(blk)
	}
	return n
}

// children returns the children of dir in name order, in a new slice.
func (dir *node) children() []*node {
	out := make([]*node, 0, dir.count())
	for _, blk := range dir.kids {
		out = append(out, blk...)
	}
	return out
}

// last returns the slot of the last child; dir must not be empty.
func (dir *node) last() slot {
	b := len(dir.kids) - 1
	return slot{b, len(dir.kids[b]) - 1}
}
