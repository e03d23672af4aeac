package index

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestTagIndexTiers checks Tiers against counting substrings in every live
// hay, through random sets, replacements and deletes (enough of them to
// compact the index several times), with words of one to six bytes, NULs,
// repeated words and non-ASCII text.
func TestTagIndexTiers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	parts := []string{"auth", "bug", "a", "do", "md", "report", "é", "x/y", "notes", "plan", "Ab"}
	hayOf := func() string {
		var fields []string
		for range 4 {
			var b strings.Builder
			for range 1 + rng.IntN(3) {
				b.WriteString(parts[rng.IntN(len(parts))])
			}
			fields = append(fields, b.String())
		}
		return TagHay(fields[0], fields[1], fields[2], fields[3:])
	}
	ti := NewTagIndex()
	live := map[string]string{}
	words := [][]string{{"a"}, {"do", "md"}, {"auth"}, {"thbu"}, {"a", "a"}, {"é"}, {"x/y"}, {"port", "b"}, {"zz"},
		{"th\x00bu"}, {"ab"}, {"report", "notes", "plan", "d"}, {"mdr"}, {"ée"}}
	check := func(step int) {
		for _, ws := range words {
			got := ti.Tiers(ws)
			want := make([][]string, len(ws)+1)
			for p, hay := range live {
				n := 0
				for _, w := range ws {
					if !strings.Contains(w, "\x00") && strings.Contains(hay, w) {
						n++
					}
				}
				if n > 0 {
					want[n] = append(want[n], p)
				}
			}
			for n := range want {
				g := slices.Clone(got[n])
				slices.Sort(g)
				slices.Sort(want[n])
				if !slices.Equal(g, want[n]) {
					t.Fatalf("step %d, words %q, %d points: got %d files %v, want %d %v", step, ws, n, len(g), head(g), len(want[n]), head(want[n]))
				}
			}
		}
	}
	for step := range 6000 {
		p := fmt.Sprintf("/f%d", rng.IntN(1500))
		switch r := rng.IntN(11); {
		case r < 6:
			h := hayOf()
			ti.Set(p, h)
			live[p] = h
		case r < 7:
			ti.Set(p, live[p]) // unchanged hay (or a new file with an empty one)
			live[p] = live[p]
		case r < 8:
			// A rename: p moves to q with a new hay.
			q, h := fmt.Sprintf("/f%d", rng.IntN(1500)), hayOf()
			ti.Apply([]string{p}, [][2]string{{q, h}})
			delete(live, p)
			live[q] = h
		case r < 9:
			ti.Delete(p)
			delete(live, p)
		default:
			// A batch, built off the lock: new, replaced, unchanged and
			// repeated paths, applied as Set would one after the other.
			var paths, hays []string
			for range 1 + rng.IntN(40) {
				q := fmt.Sprintf("/f%d", rng.IntN(1500))
				h := hayOf()
				if rng.IntN(4) == 0 {
					h = live[q]
				}
				paths, hays = append(paths, q), append(hays, h)
				live[q] = h
			}
			if rng.IntN(3) == 0 { // the same path twice in one batch
				paths, hays = append(paths, paths[0]), append(hays, hayOf())
				live[paths[0]] = hays[len(hays)-1]
			}
			b := NewTagBatch(paths, hays)
			if b.Len() != len(paths) || b.Hay(0) != hays[0] {
				t.Fatalf("batch of %d: Len %d, first hay %q", len(paths), b.Len(), b.Hay(0))
			}
			ti.SetBatch(b)
		}
		if step%500 == 0 {
			check(step)
		}
	}
	check(-1)
	if ti.Len() != len(live) {
		t.Fatalf("Len %d, want %d", ti.Len(), len(live))
	}
	ti.Reset()
	if got := ti.Tiers([]string{"a"}); len(got[1]) != 0 || ti.Len() != 0 {
		t.Fatalf("after Reset: %v, Len %d", got, ti.Len())
	}
}

func head(s []string) []string { return s[:min(5, len(s))] }

// BenchmarkTagIndexTiers: keyword points of a question-like query over 100k
// synthetic paths (words of one or two letters give most files a point).
//
//	go test -run '^$' -bench TagIndexTiers ./index
func BenchmarkTagIndexTiers(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := strings.Fields("the of and to a in is it you that he was for on are with as his they be at one have this from or had by word but what some we can out other were all there when up use your how said an each she which do their time if will way about many then them write would like so these her long make thing see him two has look more day could go come did number sound no most people my over know water than call first who may down side been now find any new work part take get place made live where after back little only round man year came show every good me give our under name very through just form sentence")
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	ti := NewTagIndex()
	for i := range 100000 {
		p := fmt.Sprintf("/d%03d/%s-%d.md", i%500, vocab[rng.IntN(len(vocab))], i)
		ti.Set(p, TagHay(p, "", "", nil))
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)

	words := strings.Fields("how do i parse a url into scheme host and path")
	b.ResetTimer()
	for range b.N {
		ti.Tiers(words)
	}
	b.ReportMetric((float64(m1.HeapAlloc)-float64(m0.HeapAlloc))/1e6, "heap-MB")
	runtime.KeepAlive(ti)
}

// TestTagBatchGrams: a batch lists, for each distinct gram of its hays,
// the ascending indexes of the hays holding it, as adding each hay to a
// map of lists does; grams holding a NUL are left out.
func TestTagBatchGrams(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const alphabet = "ab/.\x00xyz-_0"
	for range 200 {
		var paths, hays []string
		for i := range rng.IntN(300) {
			var b strings.Builder
			for range rng.IntN(30) {
				b.WriteByte(alphabet[rng.IntN(len(alphabet))])
			}
			paths, hays = append(paths, fmt.Sprintf("/f%d", i)), append(hays, b.String())
		}
		want := map[uint32][]uint32{}
		for i, hay := range hays {
			addGrams(want, hay, uint32(i))
		}
		b := NewTagBatch(paths, hays)
		got := map[uint32][]uint32{}
		for g, k := range b.keys {
			if _, dup := got[k]; dup {
				t.Fatalf("gram %x listed twice", k)
			}
			for _, i := range b.idx[b.offs[g]:b.offs[g+1]] {
				got[k] = append(got[k], uint32(i))
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%d grams, want %d", len(got), len(want))
		}
		for k, w := range want {
			if !slices.Equal(got[k], w) {
				t.Fatalf("gram %x: hays %v, want %v", k, got[k], w)
			}
		}
	}
}

// BenchmarkNewTagBatch: the tag grams of a batch of 8192 files named as
// the synthetic ingest's notes, as a store's PreparePut groups them.
//
//	go test -run '^$' -bench NewTagBatch ./index
func BenchmarkNewTagBatch(b *testing.B) {
	words := strings.Fields("the of and to a in is it you that he was for on are with as his they be at one have this from or had by")
	var paths, hays []string
	for i := range 8192 {
		p := fmt.Sprintf("/d%03d/%s-%d.md", i%500, words[i%len(words)], i)
		paths, hays = append(paths, p), append(hays, TagHay(p, "", "", nil))
	}
	for b.Loop() {
		NewTagBatch(paths, hays)
	}
}
