package eval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/semfs/semfs"
)

// SyntheticQueries returns the queries of the synthetic latency run, rounds
// times over the questions: a third of them (rotating) are replaced by two
// random words, one of the 200 most common and one of the whole vocabulary
// (short common words such as "a" or "do" give a keyword point to most
// paths, the hard case of the tag query).
func SyntheticQueries(qs []Question, vocab []string, rounds int, rng *rand.Rand) []string {
	var out []string
	for r := range rounds {
		for i, q := range qs {
			text := q.Text
			if (i+r)%3 == 0 {
				text = vocab[rng.IntN(200)] + " " + vocab[rng.IntN(len(vocab))]
			}
			out = append(out, text)
		}
	}
	return out
}

// SyntheticCorpus writes n Markdown files of Zipf-distributed words from
// vocab (1–3 paragraphs of 20–80 words) into fsys, spread over 500
// directories, always the same files for the same n and vocab, and returns
// the bytes written.
func SyntheticCorpus(ctx context.Context, fsys semfs.FS, n int, vocab []string) (int64, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.1, 2, uint64(len(vocab)-1))
	var total int64
	var b strings.Builder
	for i := range n {
		b.Reset()
		for range 1 + rng.IntN(3) {
			for w := range 20 + rng.IntN(60) {
				if w > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(vocab[zipf.Uint64()])
			}
			b.WriteString(".\n\n")
		}
		p := fmt.Sprintf("/d%03d/%s-%d.md", i%500, vocab[rng.IntN(len(vocab))], i)
		if err := semfs.WriteFile(ctx, fsys, p, []byte(b.String()), 0o644); err != nil {
			return total, err
		}
		total += int64(b.Len())
	}
	return total, nil
}

// Vocabulary is the synthetic corpus's words: common English words plus the
// words of the questions, so that synthetic text shares words with the
// queries.
func Vocabulary(qs []Question) []string {
	seen := map[string]bool{}
	var out []string
	add := func(w string) {
		w = strings.ToLower(w)
		if w != "" && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	for w := range strings.FieldsSeq(common) {
		add(w)
	}
	for _, q := range qs {
		for w := range strings.FieldsSeq(q.Text) {
			add(w)
		}
	}
	return out
}

const common = `the of and to a in is it you that he was for on are with as his they be at one have this from or had by
word but what some we can out other were all there when up use your how said an each she which do their time if will way
about many then them write would like so these her long make thing see him two has look more day could go come did number
sound no most people my over know water than call first who may down side been now find any new work part take get place
made live where after back little only round man year came show every good me give our under name very through just form
sentence great think say help low line differ turn cause much mean before move right boy old too same tell does set three
want air well also play small end put home read hand port large spell add even land here must big high such follow act why
ask men change went light kind off need house picture try us again animal point mother world near build self earth father
head stand own page should country found answer school grow study still learn plant cover food sun four between state keep
eye never last let thought city tree cross farm hard start might story saw far sea draw left late run while press close
night real life few north open seem together next white children begin got walk example ease paper group always music those
both mark often letter until mile river car feet care second book carry took science eat room friend began idea fish
mountain stop once base hear horse cut sure watch color face wood main enough plain girl usual young ready above ever red
list though feel talk bird soon body dog family direct pose leave song measure door product black short numeral class wind
question happen complete ship area half rock order fire south problem piece told knew pass since top whole king space heard
best hour better true during hundred five remember step early hold west ground interest reach fast verb sing listen six
table travel less morning ten simple several vowel toward war lay against pattern slow center love person money serve
appear road map rain rule govern pull cold notice voice unit power town fine certain fly fall lead cry dark machine note
wait plan figure star box noun field rest correct able pound done beauty drive stood contain front teach week final gave
green oh quick develop ocean warm free minute strong special mind behind clear tail produce fact street inch multiply
nothing course stay wheel full force blue object decide surface deep moon island foot system busy test record boat common
gold possible plane stead dry wonder laugh thousand ago ran check game shape equate hot miss brought heat snow tire bring
yes distant fill east paint language among server client request handler buffer stream token parse error config deploy
cache index query vector model budget report invoice meeting release ticket customer account schedule backup database`
