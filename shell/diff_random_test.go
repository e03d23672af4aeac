package shell

import (
	"math/rand"
	"testing"
)

// TestDifferentialRandom compares 600 command lines of sort, cut, head,
// tail, wc, uniq, tr and ls, drawn with a fixed seed from combinations of
// their options and the test tree's files, with GNU coreutils.
func TestDifferentialRandom(t *testing.T) {
	requireGNU(t)
	mem := loadMem(t, diffTree)
	disk := t.TempDir()
	writeDisk(t, disk, mem)
	cmds := []func(r *rand.Rand) string{
		func(r *rand.Rand) string {
			fl := []string{"", "-n", "-r", "-u", "-f", "-b", "-s", "-t, -k2", "-k2", "-k1,1", "-t, -k2,2n", "-k2r", "-nr", "-k1.2", "-t ' ' -k2", "-rn -k1"}
			fs := []string{"nums.txt", "csv.txt", "words.txt", "dup.txt", "b.txt a.txt", "long.txt"}
			return "sort " + fl[r.Intn(len(fl))] + " " + fl[r.Intn(len(fl))] + " " + fs[r.Intn(len(fs))]
		},
		func(r *rand.Rand) string {
			fl := []string{"-f1", "-f2", "-f1,3", "-f2-", "-f-2", "-c1", "-c2-4", "-c-3", "-b1,3", "-d, -f2", "-d, -f1,3", "-d' ' -f2", "-s -d, -f2", "-d, -f3 --output-delimiter=@"}
			fs := []string{"csv.txt", "words.txt", "a.txt", "nums.txt", "ünï.txt"}
			return "cut " + fl[r.Intn(len(fl))] + " " + fs[r.Intn(len(fs))]
		},
		func(r *rand.Rand) string {
			fl := []string{"", "-n 1", "-n 3", "-n -2", "-c 5", "-c -3", "-n 0", "-2", "-q -n 1", "-v -n 2", "-c 100"}
			fs := []string{"a.txt", "b.txt", "nonl.txt", "empty.txt", "a.txt b.txt", "nonl.txt empty.txt"}
			h := []string{"head", "tail"}[r.Intn(2)]
			f := fl[r.Intn(len(fl))]
			if h == "tail" {
				f = []string{"", "-n 1", "-n +2", "-c +3", "-c 4", "-n 0", "-3", "-q -n 1", "-v -n 1", "-n +100", "-c 100"}[r.Intn(11)]
			}
			return h + " " + f + " " + fs[r.Intn(len(fs))]
		},
		func(r *rand.Rand) string {
			fl := []string{"", "-l", "-w", "-c", "-lw", "-wc", "-m", "-lc"}
			fs := []string{"a.txt", "nonl.txt", "empty.txt", "a.txt b.txt", "ünï.txt words.txt", "csv.txt nosuch", "src/big.txt"}
			return "wc " + fl[r.Intn(len(fl))] + " " + fs[r.Intn(len(fs))]
		},
		func(r *rand.Rand) string {
			fl := []string{"", "-c", "-d", "-u", "-i", "-ci", "-cd", "-du"}
			return "sort dup.txt | uniq " + fl[r.Intn(len(fl))]
		},
		func(r *rand.Rand) string {
			fl := []string{"a-z A-Z", "-d a-e", "-s ' '", "-d '\\n'", "'[:upper:]' '[:lower:]'", "-cd '[:alpha:]\\n'", "-s a-z", "abc x", "-c a '*'", "'a-c' 'A-C'", "-ds a b"}
			return "cat words.txt | tr " + fl[r.Intn(len(fl))]
		},
		func(r *rand.Rand) string {
			fl := []string{"", "-a", "-A", "-l", "-la", "-R", "-S", "-t", "-r", "-1", "-lh", "-d", "-lS", "-ltr", "-Ra"}
			fs := []string{"", "docs", "src", "docs src", "a.txt docs", "emptydir", "docs/deep"}
			return "ls " + fl[r.Intn(len(fl))] + " " + fs[r.Intn(len(fs))]
		},
	}
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 600; i++ {
		cmd := cmds[r.Intn(len(cmds))](r)
		gnu, _, code := runGNU(t, disk, cmd)
		out, stderr, scode := run(t, New(mem, Options{}), cmd)
		if out != gnu || scode != code {
			t.Errorf("%s\n--- GNU (exit %d)\n%s--- semfs (exit %d)\n%s%s", cmd, code, gnu, scode, out, indentErr(stderr))
		}
	}
}
