package shell

import (
	"math/rand"
	"os/exec"
	"strings"
	"testing"
)

// TestDifferentialFindRandom compares 500 find and tree command lines,
// drawn with a fixed seed from roots and expressions, with GNU findutils
// and tree, on a tmpfs copy that lists directories in name order.
func TestDifferentialFindRandom(t *testing.T) {
	requireGNU(t)
	if _, err := exec.LookPath("tree"); err != nil {
		t.Log("tree is not installed: only find lines are compared")
	}
	mem := loadMem(t, diffTree)
	d, sorted := orderedDisk(t, "semfs-find-", mem)
	gen := func(r *rand.Rand) string {
		roots := []string{"", ".", "docs", "src docs", "docs/", "./src", "nosuch", "a.txt"}
		preds := []string{"-name '*.md'", "-iname 'README'", "-type f", "-type d", "-maxdepth 1", "-mindepth 2", "-path '*deep*'", "-size -1k", "-size +0", "-empty", "! -name '*.txt'", "-not -type d", "-name '*.go' -o -name '*.md'", "\\( -type d -o -name 'a*' \\)", "-newer a.txt", "-print", "-print0", "-name '[a-c]*'", "-name '*e*' -type f", "-path ./docs -prune -o -print", "-false", "-true"}
		cmd := "find " + roots[r.Intn(len(roots))]
		for k := r.Intn(3); k >= 0; k-- {
			cmd += " " + preds[r.Intn(len(preds))]
		}
		if r.Intn(4) == 0 {
			cmd = []string{"tree ", "tree -a ", "tree -L 2 ", "tree -d "}[r.Intn(4)] + roots[r.Intn(len(roots))]
		}
		return cmd + " | tr '\\0' '\\n'"
	}
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 500; i++ {
		cmd := gen(r)
		if _, err := exec.LookPath("tree"); err != nil && strings.HasPrefix(cmd, "tree") {
			continue
		}
		gnu, _, code := runGNU(t, d, cmd)
		out, stderr, scode := run(t, New(mem, Options{}), cmd)
		want := gnu
		if sorted {
			out, want = sortLines(out), sortLines(want)
		}
		if out != want || scode != code {
			t.Errorf("%s\n--- GNU (exit %d)\n%s--- semfs (exit %d)\n%s%s", cmd, code, want, scode, out, indentErr(stderr))
		}
	}
}
