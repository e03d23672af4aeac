package eval

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
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
