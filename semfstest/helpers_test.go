package semfstest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/semfstest"
)

// fatalRecorder is a semfstest.TB whose Fatalf records the message and
// returns, so that a test can see a helper fail.
type fatalRecorder struct{ fatal []string }

func (r *fatalRecorder) Helper()               {}
func (r *fatalRecorder) Errorf(string, ...any) {}
func (r *fatalRecorder) Logf(string, ...any)   {}
func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.fatal = append(r.fatal, fmt.Sprintf(format, args...))
}

func TestNamesAndReadString(t *testing.T) {
	ctx := context.Background()
	fsys := memfs.New()
	for p, data := range map[string]string{"/d/b.txt": "bee", "/d/a/x": "", "/d/c": "sea"} {
		if err := semfs.WriteFile(ctx, fsys, p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := semfstest.Names(t, ctx, fsys, "/d"), []string{"a/", "b.txt", "c"}; !slices.Equal(got, want) {
		t.Errorf("Names(/d) = %q; want %q", got, want)
	}
	if got := semfstest.ReadString(t, ctx, fsys, "/d/c"); got != "sea" {
		t.Errorf("ReadString(/d/c) = %q; want sea", got)
	}

	r := &fatalRecorder{}
	if got := semfstest.Names(r, ctx, fsys, "/missing"); got != nil || len(r.fatal) != 1 || !strings.Contains(r.fatal[0], "ReadDir(/missing)") {
		t.Errorf("Names of a missing directory: %q, failures %q; want nil and one failure naming it", got, r.fatal)
	}
	r = &fatalRecorder{}
	if got := semfstest.ReadString(r, ctx, fsys, "/d"); got != "" || len(r.fatal) != 1 || !strings.Contains(r.fatal[0], "ReadFile(/d)") {
		t.Errorf("ReadString of a directory: %q, failures %q; want \"\" and one failure naming it", got, r.fatal)
	}
}
