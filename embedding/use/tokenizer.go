package use

import (
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// The tokenizer reproduces, id for id, the SentencePiece unigram tokenizer of
// @energetic-ai/embeddings 0.2.0 (itself the tokenizer of the TensorFlow.js
// universal-sentence-encoder model), including its quirks:
//
//   - the text is NFKC-normalised; a non-empty text gets a leading "▁" and
//     every ASCII space becomes "▁" (no lower-casing, other whitespace kept);
//   - the lattice is scanned by end position, then start position ascending;
//     a candidate replaces the best-so-far when it scores >= it, or whenever
//     the best-so-far is exactly 0;
//   - a character that starts no piece is an unknown token (id 0, score 0),
//     and runs of unknown tokens collapse to one;
//   - a piece whose score is null in vocab.json scores 0;
//   - when a piece string occurs twice, the later id wins;
//   - the reserved pieces (ids 0..5) are never produced by the lattice.

const (
	unkID    = 0
	reserved = 6
	space    = '▁'
)

type trieNode struct {
	children map[rune]int32 // child node index
	id       int32          // piece id when end, else -1
	score    float64
}

type tokenizer struct {
	nodes []trieNode
	// backLen is the length the reference subtracts when walking the best
	// path backwards: the JavaScript (UTF-16) length of the piece string.
	backLen []int32
}

func newTokenizer(pieces []string, scores []float64) *tokenizer {
	t := &tokenizer{nodes: []trieNode{{children: map[rune]int32{}, id: -1}}}
	t.backLen = make([]int32, len(pieces))
	for i, p := range pieces {
		t.backLen[i] = int32(len(utf16.Encode([]rune(p))))
		if i < reserved {
			continue
		}
		n := int32(0)
		for _, r := range p {
			c, ok := t.nodes[n].children[r]
			if !ok {
				c = int32(len(t.nodes))
				t.nodes = append(t.nodes, trieNode{id: -1})
				if t.nodes[n].children == nil {
					t.nodes[n].children = map[rune]int32{}
				}
				t.nodes[n].children[r] = c
			}
			n = c
		}
		if n != 0 {
			t.nodes[n].id = int32(i)
			t.nodes[n].score = scores[i]
		}
	}
	return t
}

// symbols returns the normalised text as code points, as the reference sees it.
func symbols(text string) []rune {
	text = strings.ToValidUTF8(text, "\uFFFD")
	text = norm.NFKC.String(text)
	if text == "" {
		return nil
	}
	rs := make([]rune, 0, len(text)+1)
	rs = append(rs, space)
	for _, r := range text {
		if r == ' ' {
			r = space
		}
		rs = append(rs, r)
	}
	return rs
}

// encode returns the token ids of text. best and words are scratch buffers
// that may be nil.
func (t *tokenizer) encode(text string) []int32 {
	syms := symbols(text)
	n := len(syms)
	if n == 0 {
		return nil
	}
	best := make([]float64, n+1)
	words := make([]int32, n+1)
	for s := 0; s < n; s++ {
		// Candidates starting at s, shortest first (the reference's order).
		found := false
		node := int32(0)
		for e := s; e < n; e++ {
			c, ok := t.nodes[node].children[syms[e]]
			if !ok {
				break
			}
			node = c
			nd := &t.nodes[node]
			if nd.id < 0 {
				continue
			}
			found = true
			end := e + 1
			score := nd.score + best[s]
			if best[end] == 0 || score >= best[end] {
				best[end] = score
				words[end] = nd.id
			}
		}
		if !found {
			end := s + 1
			score := best[s]
			if best[end] == 0 || score >= best[end] {
				best[end] = score
				words[end] = unkID
			}
		}
	}
	// Walk back from the end, collapsing runs of unknown tokens.
	var rev []int32
	prevUnk := false
	for i := n; i > 0; {
		id := words[i]
		if !(prevUnk && id == unkID) {
			rev = append(rev, id)
		}
		prevUnk = id == unkID
		i -= int(t.backLen[id])
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}
