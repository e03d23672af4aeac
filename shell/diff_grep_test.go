package shell

import (
	"math/rand"
	"strings"
	"testing"
)

// TestDifferentialGrepRandom compares 400 grep command lines drawn (with a
// fixed seed) from combinations of options, patterns and files with GNU
// grep. The inputs leave out what grep's doc lists as known differences:
// binary files and invalid UTF-8 (tested in the main table for the cases
// that agree), and GNU's -x -w -o quirk (an extra empty line).
func TestDifferentialGrepRandom(t *testing.T) {
	requireGNU(t)
	mem := loadMem(t, diffTree)
	disk := t.TempDir()
	writeDisk(t, disk, mem)
	flags := []string{"", "-n", "-i", "-w", "-x", "-o", "-c", "-v", "-l", "-L", "-h", "-H", "-E", "-F", "-m 2", "-A 1",
		"-B 1", "-C 2", "-s", "-ow", "-ni", "-vc", "-Ec", "-q", "-lv", "-nA2", "-m1 -c"}
	pats := []string{"hello", "a.b", "^a", "e$", "[0-9]+", "an*", "ap+le", "b[ae]", "\\bfoo", "x|y", "(an)+", "[[:space:]]",
		"..", "^$", "é", "caf.", "a\\{2\\}", "[^a-z]", "l+o", "e.*e", "-1", "[[:upper:]]", "\\<the", "end\\>", "a\\|b", ""}
	files := []string{"*.txt", "a.txt b.txt", "words.txt", "dup.txt nums.txt", "ünï.txt", "long.txt", "nosuch a.txt", "-"}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 400; i++ {
		f1, f2 := flags[r.Intn(len(flags))], flags[r.Intn(len(flags))]
		both := f1 + " " + f2
		if strings.Contains(both, "-x") && strings.Contains(both, "-o") {
			continue
		}
		files := strings.Replace(files[r.Intn(len(files))], "*.txt", "a.txt b.txt csv.txt dup.txt empty.txt long.txt nonl.txt nums.txt 'with space.txt' words.txt ünï.txt", 1)
		cmd := "grep " + both + " -e '" + pats[r.Intn(len(pats))] + "' " + files
		if strings.HasSuffix(cmd, " -") {
			cmd = "cat words.txt | " + cmd
		}
		gnu, _, code := runGNU(t, disk, cmd)
		out, stderr, scode := run(t, New(mem, Options{}), cmd)
		if out != gnu || scode != code {
			t.Errorf("%s\n--- GNU (exit %d)\n%s--- semfs (exit %d)\n%s%s", cmd, code, gnu, scode, out, indentErr(stderr))
		}
	}
}
