package shell

import (
	"math/rand"
	"testing"

	"github.com/semfs/semfs"
)

// TestDifferentialGrepRecursiveRandom compares 300 grep -r command lines
// (roots, include/exclude rules, output options; drawn with a fixed seed)
// with GNU grep on a copy that lists directories in name order, through
// the FS and through a View. Context options are left out: around binary
// files GNU prints separators for suppressed groups (a known difference).
func TestDifferentialGrepRecursiveRandom(t *testing.T) {
	requireGNU(t)
	mem := loadMem(t, diffTree)
	d, sorted := orderedDisk(t, "semfs-grep-", mem)
	tree, err := NewTree(t.Context(), mem)
	if err != nil {
		t.Fatal(err)
	}
	fl := []string{"-r", "-rn", "-rl", "-rL", "-rc", "-rh", "-rH", "-ri", "-rw", "-rv", "-ro", "-r --include='*.md'", "-r --exclude='*.txt'", "-r --exclude-dir=deep", "-r --include='*.go' --include='*.md'", "-rm1", "-rq", "-rs", "-R"}
	pats := []string{"hello", "package", "a.b", "^#", "[0-9]", "zzz", "e$", "deep"}
	roots := []string{"", ".", "docs", "docs/", "src docs", "a.txt docs", "nosuch", "./src"}
	r := rand.New(rand.NewSource(5))
	for i := 0; i < 300; i++ {
		cmd := "grep " + fl[r.Intn(len(fl))] + " " + fl[r.Intn(len(fl))] + " -e '" + pats[r.Intn(len(pats))] + "' " + roots[r.Intn(len(roots))]
		gnu, _, code := runGNU(t, d, cmd)
		for _, opts := range []Options{{}, {View: tree.View(semfs.Principal{})}} {
			out, stderr, scode := run(t, New(mem, opts), cmd)
			want := gnu
			if sorted {
				out, want = sortLines(out), sortLines(want)
			}
			if out != want || scode != code {
				t.Errorf("%s [view=%v]\n--- GNU (exit %d)\n%s--- semfs (exit %d)\n%s%s", cmd, opts.View != nil, code, want, scode, out, indentErr(stderr))
			}
		}
	}
}
