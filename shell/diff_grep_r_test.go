package shell

import (
	"bytes"
	"math/rand"
	"os"
	"os/exec"
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
	d, err := os.MkdirTemp("/dev/shm", "semfs-grep-")
	if err != nil {
		d = t.TempDir()
	} else {
		defer os.RemoveAll(d)
	}
	writeDisk(t, d, mem)
	sorted := !listsInNameOrder(t, d)
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
		c := exec.Command("bash", "-c", cmd)
		c.Dir = d
		c.Env = gnuEnv()
		var gout bytes.Buffer
		c.Stdout = &gout
		code := 0
		if err := c.Run(); err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		for _, opts := range []Options{{}, {View: tree.View(semfs.Principal{})}} {
			out, stderr, scode := run(t, New(mem, opts), cmd)
			want := gout.String()
			if sorted {
				out, want = sortLines(out), sortLines(want)
			}
			if out != want || scode != code {
				t.Errorf("%s [view=%v]\n--- GNU (exit %d)\n%s--- semfs (exit %d)\n%s%s", cmd, opts.View != nil, code, want, scode, out, indentErr(stderr))
			}
		}
	}
}
