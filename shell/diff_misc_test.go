package shell

import (
	"math/rand"
	"testing"
)

// TestDifferentialMiscRandom compares 400 command lines of cat, basename,
// dirname, stat -c and xargs, drawn with a fixed seed, with GNU coreutils
// and findutils.
func TestDifferentialMiscRandom(t *testing.T) {
	requireGNU(t)
	mem := loadMem(t, diffTree)
	d := t.TempDir()
	writeDisk(t, d, mem)
	gens := []func(r *rand.Rand) string{
		func(r *rand.Rand) string {
			fs := []string{"a.txt", "nonl.txt", "empty.txt", "nonl.txt nonl.txt", "- a.txt", "docs", "nosuch", "'with space.txt'"}
			return "echo in | cat " + []string{"", "-n"}[r.Intn(2)] + " " + fs[r.Intn(len(fs))] + " " + fs[r.Intn(len(fs))]
		},
		func(r *rand.Rand) string {
			ps := []string{"/a/b", "a/b/", "/", "//", "a", ".", "..", "/a//b//", "a.txt", "dir/file.tar.gz", ""}
			p := ps[r.Intn(len(ps))]
			switch r.Intn(3) {
			case 0:
				return "basename '" + p + "'"
			case 1:
				return "basename '" + p + "' .gz"
			}
			return "dirname '" + p + "'"
		},
		func(r *rand.Rand) string {
			fmts := []string{"%n", "%s", "%F", "%a %A", "%h", "%U:%G", "%b %B", "%n=%s", "%%", "%Y"}
			fs := []string{"a.txt", "docs", "empty.txt", "emptydir", "src/big.txt", "nosuch"}
			return "stat -c '" + fmts[r.Intn(len(fmts))] + "' " + fs[r.Intn(len(fs))] + " " + fs[r.Intn(len(fs))]
		},
		func(r *rand.Rand) string {
			ins := []string{"printf 'a b c\\nd\\n'", "printf 'x\\0y\\0'", "echo a.txt b.txt", "printf 'a.txt\\nnosuch\\n'", "echo", "printf \"'q u' \\\"d q\\\" e\\\\ f\\n\""}
			xs := []string{"", "-n 1", "-n 2", "-0", "-I@ echo [@]", "echo X", "cat", "wc -l", "-n 1 basename", "-r echo R"}
			return ins[r.Intn(len(ins))] + " | xargs " + xs[r.Intn(len(xs))]
		},
	}
	r := rand.New(rand.NewSource(4))
	for i := 0; i < 400; i++ {
		cmd := gens[r.Intn(len(gens))](r)
		gnu, _, code := runGNU(t, d, cmd)
		out, stderr, scode := run(t, New(mem, Options{}), cmd)
		if out != gnu || scode != code {
			t.Errorf("%s\n--- GNU (exit %d)\n%s--- semfs (exit %d)\n%s%s", cmd, code, gnu, scode, out, indentErr(stderr))
		}
	}
}
