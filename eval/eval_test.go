package eval

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
)

// TestQuestionsAnswerable checks that every question of the GOROOT eval has
// at least one answer file in this Go installation, and that there are at
// least 100 of them.
func TestQuestionsAnswerable(t *testing.T) {
	src := filepath.Join(runtime.GOROOT(), "src")
	qs, err := LoadQuestions("testdata/goroot_questions.tsv", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) < 100 {
		t.Fatalf("%d questions; the eval needs at least 100", len(qs))
	}
	seen := map[string]bool{}
	for _, q := range qs {
		if seen[q.Text] {
			t.Errorf("duplicate question %q", q.Text)
		}
		seen[q.Text] = true
		for _, a := range q.Answers {
			if _, err := os.Stat(filepath.Join(src, filepath.FromSlash(a))); err != nil {
				t.Errorf("%q: answer %s: %v", q.Text, a, err)
			}
		}
	}
}

func TestJudge(t *testing.T) {
	ans := []string{"/a", "/b"}
	if r, m := Judge([]string{"/x", "/b", "/a"}, ans); r != 1 || m != 0.5 {
		t.Fatalf("got %v %v", r, m)
	}
	long := make([]string, 12)
	for i := range long {
		long[i] = "/n"
	}
	long[11] = "/a"
	if r, m := Judge(long, ans); r != 0 || m != 1.0/12 {
		t.Fatalf("beyond 10: %v %v", r, m)
	}
	if r, m := Judge(nil, ans); r != 0 || m != 0 {
		t.Fatalf("empty: %v %v", r, m)
	}
}

// TestSyntheticCorpusRepeatable: the synthetic corpus is the same files
// every time (benchmarks cache indexes of it), n of them, in 500 folders.
func TestSyntheticCorpusRepeatable(t *testing.T) {
	ctx := context.Background()
	vocab := Vocabulary([]Question{{Text: "parse a url"}})
	a, b := memfs.New(), memfs.New()
	na, err := SyntheticCorpus(ctx, a, 600, vocab)
	if err != nil {
		t.Fatal(err)
	}
	nb, err := SyntheticCorpus(ctx, b, 600, vocab)
	if err != nil || na != nb || na == 0 {
		t.Fatalf("sizes %d and %d, %v", na, nb, err)
	}
	files := 0
	err = semfs.WalkDir(ctx, a, "/", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		x, _ := semfs.ReadFile(ctx, a, p)
		y, err := semfs.ReadFile(ctx, b, p)
		if err != nil || string(x) != string(y) {
			t.Fatalf("%s differs between runs: %v", p, err)
		}
		return nil
	})
	if err != nil || files != 600 {
		t.Fatalf("%d files, %v", files, err)
	}
	if ents, _ := a.ReadDir(ctx, "/"); len(ents) != 500 {
		t.Fatalf("%d top-level folders, want 500", len(ents))
	}
}
