package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// Corpus generates a deterministic synthetic tree: paths in a few thousand
// directories, agent and task tags, and Markdown-like paragraphs whose words
// follow a Zipf distribution over a synthetic vocabulary, as natural text
// does (a few words very common, most rare).
type Corpus struct {
	Words []string
	seed  uint64
	dims  int
}

// NewCorpus builds a vocabulary of n pseudo-words from syllables.
func NewCorpus(seed uint64, n, dims int) *Corpus {
	syl := []string{"ka", "lo", "mi", "ra", "te", "su", "no", "vi", "de", "pa", "gri", "ton", "bel", "sar", "quo", "fen", "dru", "mak", "zel", "hin"}
	rng := rand.New(rand.NewPCG(seed, 7))
	seen := map[string]bool{}
	c := &Corpus{seed: seed, dims: dims}
	for len(c.Words) < n {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteString(syl[rng.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			c.Words = append(c.Words, w)
		}
	}
	return c
}

func (c *Corpus) zipf(rng *rand.Rand) *rand.Zipf {
	return rand.NewZipf(rng, 1.07, 2, uint64(len(c.Words)-1))
}

// Item returns file i: its index item (with analysed content) and its
// content size in bytes.
func (c *Corpus) Item(i int) (index.Item, int) {
	rng := rand.New(rand.NewPCG(c.seed, uint64(i)+1))
	z := c.zipf(rng)
	word := func() string { return c.Words[z.Uint64()] }
	p := fmt.Sprintf("/proj%02d/%s-%03d/%s-%d.md", i%50, word(), (i/50)%40, word(), i)
	var text strings.Builder
	fmt.Fprintf(&text, "# %s %s\n\n", word(), word())
	for range 2 + rng.IntN(3) {
		for w := range 40 + rng.IntN(60) {
			if w > 0 {
				text.WriteByte(' ')
			}
			text.WriteString(word())
		}
		text.WriteString(".\n\n")
	}
	f := index.File{Meta: semfs.Meta{
		Path: p, CreatedBy: fmt.Sprintf("agent-%d", z.Uint64()%20),
		Tags: semfs.Tags{Task: word() + " " + word() + " " + word(), RelatedApps: []string{word()}},
		Size: int64(text.Len()),
	}, State: index.StateIndexed}
	content, state, reason := index.Analyze(p, []byte(text.String()))
	f.State, f.Reason = state, reason
	return index.Item{File: f, TagText: index.TagText(f.Meta), Content: content}, text.Len()
}

// Items returns files [from, to) and their content size in bytes.
func (c *Corpus) Items(from, to int) ([]index.Item, int64) {
	items := make([]index.Item, 0, to-from)
	var bytes int64
	for i := from; i < to; i++ {
		it, n := c.Item(i)
		items = append(items, it)
		bytes += int64(n)
	}
	return items, bytes
}

// Vector returns a deterministic unit vector for key.
func (c *Corpus) Vector(key string) []float32 {
	var h uint64 = 1469598103934665603
	for i := 0; i < len(key); i++ {
		h = (h ^ uint64(key[i])) * 1099511628211
	}
	rng := rand.New(rand.NewPCG(h, c.seed))
	v := make([]float32, c.dims)
	var n float64
	for i := range v {
		x := rng.NormFloat64()
		v[i] = float32(x)
		n += x * x
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] /= float32(n)
	}
	return v
}

// Queries returns n two-word queries drawn from the same distribution,
// skipping the 20 most common words (stop words in real text).
func (c *Corpus) Queries(n int) []string {
	rng := rand.New(rand.NewPCG(c.seed, 99))
	z := c.zipf(rng)
	var out []string
	for len(out) < n {
		a, b := z.Uint64(), z.Uint64()
		if a < 20 || b < 20 || a == b {
			continue
		}
		out = append(out, c.Words[a]+" "+c.Words[b])
	}
	return out
}
