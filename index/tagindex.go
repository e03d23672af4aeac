package index

import (
	"context"
	"strings"
	"sync"
)

// TagTierer is implemented by stores that count the tag query's keyword
// points themselves (with a TagIndex): meta's tag query then makes one call
// per query instead of one TagKeywordCandidates per word plus a map of
// paths. TagTiers has TagIndex.Tiers's contract.
type TagTierer interface {
	TagTiers(ctx context.Context, words []string) ([][]string, error)
}

// TagHay is the text seed 000's keyword points are counted in: the four
// fields lower-cased and separated by NUL, so that no word matches across
// two of them.
func TagHay(path, createdBy, task string, apps []string) string {
	return strings.ToLower(path + "\x00" + createdBy + "\x00" + task + "\x00" + strings.Join(apps, "\x00"))
}

// TagIndex answers the keyword half of seed 000's tag query in memory: for
// each file it keeps the lower-cased text the points are counted in (the
// "hay": path, created_by, task and related apps separated by NUL, as a
// store builds it) and, for every distinct substring of one to three bytes
// of a hay, the ascending list of the files holding it. A query word of up
// to three bytes is then exactly one posting list (no verification); a
// longer word is looked up through its rarest three-byte substring and
// verified against the hays. Files are numbered densely; counting points
// is a pass over posting lists into a counter per file number instead of
// path strings and maps. Safe for concurrent use.
//
// Replacing or removing a file leaves its old number dead in the posting
// lists (skipped by queries) until dead numbers outnumber live ones, when
// the whole index is rebuilt from the live hays.
type TagIndex struct {
	mu    sync.RWMutex
	paths []string          // by number; "" for a dead number
	hays  []string          // by number
	num   map[string]uint32 // path → live number
	post  map[uint32][]uint32
	dead  int
}

// NewTagIndex returns an empty index.
func NewTagIndex() *TagIndex {
	return &TagIndex{num: map[string]uint32{}, post: map[uint32][]uint32{}}
}

// gramKey packs a substring of one to three bytes and its length into one
// map key.
func gramKey(g string) uint32 {
	k := uint32(len(g)) << 24
	for i := 0; i < len(g); i++ {
		k |= uint32(g[i]) << (8 * i)
	}
	return k
}

// Len reports how many files the index holds.
func (t *TagIndex) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.num)
}

// Set records (or replaces) the hay of path. The hay must already be
// lower-cased the way query words are.
func (t *TagIndex) Set(path, hay string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n, ok := t.num[path]; ok {
		if t.hays[n] == hay {
			return
		}
		t.kill(n)
	}
	t.add(path, hay)
	t.maybeCompact()
}

// Delete forgets path.
func (t *TagIndex) Delete(path string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n, ok := t.num[path]; ok {
		t.kill(n)
		t.maybeCompact()
	}
}

// Apply deletes the paths of del, then sets each path of set to its hay,
// as one change (a rename of a directory moves many files at once).
func (t *TagIndex) Apply(del []string, set [][2]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range del {
		if n, ok := t.num[p]; ok {
			t.kill(n)
		}
	}
	for _, ph := range set {
		if n, ok := t.num[ph[0]]; ok {
			if t.hays[n] == ph[1] {
				continue
			}
			t.kill(n)
		}
		t.add(ph[0], ph[1])
	}
	t.maybeCompact()
}

// Reset forgets every file.
func (t *TagIndex) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.paths, t.hays, t.num, t.post, t.dead = nil, nil, map[string]uint32{}, map[uint32][]uint32{}, 0
}

func (t *TagIndex) kill(n uint32) {
	delete(t.num, t.paths[n])
	t.paths[n], t.hays[n] = "", ""
	t.dead++
}

func (t *TagIndex) add(path, hay string) {
	n := uint32(len(t.paths))
	t.paths = append(t.paths, path)
	t.hays = append(t.hays, hay)
	t.num[path] = n
	addGrams(t.post, hay, n)
}

// addGrams appends n to the list of each distinct gram (1 to 3 bytes) of
// hay in post. Each gram once: numbers only grow, so a list's last entry
// tells whether n is already on it.
func addGrams(post map[uint32][]uint32, hay string, n uint32) {
	for i := 0; i < len(hay); i++ {
		for l := 1; l <= 3 && i+l <= len(hay); l++ {
			g := hay[i : i+l]
			if strings.IndexByte(g, 0) >= 0 {
				break // no query word holds a NUL
			}
			k := gramKey(g)
			p := post[k]
			if len(p) > 0 && p[len(p)-1] == n {
				continue
			}
			post[k] = append(p, n)
		}
	}
}

// TagBatch is a batch of (path, hay) pairs with the grams of their hays
// grouped by gram, computed without the index's lock (NewTagBatch), so
// that SetBatch, which holds it, only numbers the files and appends to one
// posting list per distinct gram of the batch (files of one directory
// share most of their grams).
type TagBatch struct {
	paths, hays []string
	keys        []uint32 // the distinct grams (gramKey)
	offs        []uint32 // indexes of keys[g]: idx[offs[g]:offs[g+1]]
	idx         []int32  // ascending indexes into paths, gram by gram
}

// NewTagBatch groups the grams of hays (hays[i] is the hay of paths[i],
// lower-cased as for Set). A path may appear more than once: the last
// one wins, as with Set called in order.
//
// It numbers the grams through a table of its own (no map, no list per
// gram): a first pass lists each hay's distinct gram numbers and counts
// the hays of each gram, a second places the hays gram by gram.
func NewTagBatch(paths, hays []string) *TagBatch {
	b := &TagBatch{paths: paths, hays: hays}
	total := 0
	for _, hay := range hays {
		total += len(hay)
	}
	var t gramTable
	occ := make([]int32, 0, 3*total) // the gram numbers of each hay in turn, each once
	ends := make([]int, len(hays))
	for i, hay := range hays {
		stamp := int32(i + 1)
		for j := 0; j < len(hay); j++ {
			// The grams starting at j, one to three bytes, none holding a
			// NUL (no query word does).
			k := uint32(hay[j])
			if k == 0 {
				continue
			}
			occ = t.count(1<<24|k, stamp, occ)
			if j+1 == len(hay) || hay[j+1] == 0 {
				continue
			}
			k |= uint32(hay[j+1]) << 8
			occ = t.count(2<<24|k, stamp, occ)
			if j+2 == len(hay) || hay[j+2] == 0 {
				continue
			}
			occ = t.count(3<<24|k|uint32(hay[j+2])<<16, stamp, occ)
		}
		ends[i] = len(occ)
	}
	b.keys = t.keys
	b.offs = make([]uint32, len(t.hays)+1)
	for g, c := range t.hays {
		b.offs[g+1] = b.offs[g] + c
	}
	next := t.hays // reused: each gram's next slot
	copy(next, b.offs[:len(next)])
	b.idx = make([]int32, len(occ))
	start := 0
	for i, end := range ends {
		for _, g := range occ[start:end] {
			b.idx[next[g]] = int32(i)
			next[g]++
		}
		start = end
	}
	return b
}

// count notes gram k in the hay whose index+1 is stamp: the first time
// in that hay, it counts the hay for the gram and appends the gram's
// number to occ.
func (t *gramTable) count(k uint32, stamp int32, occ []int32) []int32 {
	g := t.number(k)
	if t.last[g] == stamp {
		return occ
	}
	t.last[g] = stamp
	t.hays[g]++
	return append(occ, g)
}

// gramTable numbers gram keys densely in the order first seen: an
// open-addressing table, at most half full, of key and number.
type gramTable struct {
	slots []uint64 // key<<32 | number+1; 0 is empty
	keys  []uint32 // by number
	hays  []uint32 // by number: the hays counted (count)
	last  []int32  // by number: the last hay counted, its index+1
}

// number returns k's number, numbering it if new.
func (t *gramTable) number(k uint32) int32 {
	if t.slots == nil {
		t.slots = make([]uint64, 1<<12)
	}
	mask := uint32(len(t.slots) - 1)
	for i := (k * 0x9e3779b1) >> 7 & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			n := int32(len(t.keys))
			t.slots[i] = uint64(k)<<32 | uint64(n+1)
			t.keys = append(t.keys, k)
			t.hays = append(t.hays, 0)
			t.last = append(t.last, 0)
			if 2*len(t.keys) > len(t.slots) {
				t.grow()
			}
			return n
		}
		if uint32(s>>32) == k {
			return int32(uint32(s) - 1)
		}
	}
}

func (t *gramTable) grow() {
	t.slots = make([]uint64, 2*len(t.slots))
	mask := uint32(len(t.slots) - 1)
	for n, k := range t.keys {
		i := (k * 0x9e3779b1) >> 7 & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = uint64(k)<<32 | uint64(n+1)
	}
}

// Hay returns the hay of the batch's i-th entry.
func (b *TagBatch) Hay(i int) string { return b.hays[i] }

// Len returns the number of entries of the batch.
func (b *TagBatch) Len() int { return len(b.paths) }

// SetBatch records the batch's hays, as Set would one after the other.
func (t *TagIndex) SetBatch(b *TagBatch) {
	if b == nil || len(b.paths) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	const none = ^uint32(0)
	nums := make([]uint32, len(b.paths))
	for i, path := range b.paths {
		hay := b.hays[i]
		if n, ok := t.num[path]; ok {
			if t.hays[n] == hay {
				nums[i] = none
				continue
			}
			t.kill(n)
		}
		n := uint32(len(t.paths))
		t.paths = append(t.paths, path)
		t.hays = append(t.hays, hay)
		t.num[path] = n
		nums[i] = n
	}
	// Numbers grow with the index in the batch, and every list already
	// ends below the first number given here: appending keeps lists
	// ascending and distinct.
	for g, k := range b.keys {
		p := t.post[k]
		for _, i := range b.idx[b.offs[g]:b.offs[g+1]] {
			if n := nums[i]; n != none {
				p = append(p, n)
			}
		}
		if len(p) > 0 {
			t.post[k] = p
		}
	}
	t.maybeCompact()
}

func (t *TagIndex) maybeCompact() {
	if t.dead < 1024 || t.dead < len(t.num) {
		return
	}
	paths, hays := t.paths, t.hays
	t.paths, t.hays, t.num, t.post, t.dead = nil, nil, make(map[string]uint32, len(t.num)), map[uint32][]uint32{}, 0
	for i, p := range paths {
		if p != "" {
			t.add(p, hays[i])
		}
	}
}

// Tiers returns the files with at least one keyword point for words
// (already lower-cased; a word found in a file's hay gives it one point,
// and a word given twice counts twice, as in seed 000), grouped by points:
// tiers[n] lists the files with n points, in no particular order. A word
// holding a NUL matches nothing.
func (t *TagIndex) Tiers(words []string) [][]string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	count := make([]uint16, len(t.paths))
	var hit []uint32 // numbers with a point, in the order first seen
	for _, w := range words {
		if w == "" || strings.IndexByte(w, 0) >= 0 {
			continue
		}
		if len(w) <= 3 {
			for _, n := range t.post[gramKey(w)] {
				if t.paths[n] == "" {
					continue
				}
				if count[n] == 0 {
					hit = append(hit, n)
				}
				count[n]++
			}
			continue
		}
		var best []uint32
		found := true
		for i := 0; i+3 <= len(w); i++ {
			p, ok := t.post[gramKey(w[i:i+3])]
			if !ok {
				found = false
				break
			}
			if best == nil || len(p) < len(best) {
				best = p
			}
		}
		if !found {
			continue
		}
		for _, n := range best {
			if t.paths[n] == "" || !strings.Contains(t.hays[n], w) {
				continue
			}
			if count[n] == 0 {
				hit = append(hit, n)
			}
			count[n]++
		}
	}
	tiers := make([][]string, len(words)+1)
	sizes := make([]int, len(words)+1)
	for _, n := range hit {
		sizes[count[n]]++
	}
	for c, s := range sizes {
		if s > 0 {
			tiers[c] = make([]string, 0, s)
		}
	}
	for _, n := range hit {
		tiers[count[n]] = append(tiers[count[n]], t.paths[n])
	}
	return tiers
}
