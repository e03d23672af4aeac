package ops

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/semfs/semfs"
)

// A front end may hint an error an operation already hinted (the HTTP API
// does): the hint must appear once and the sentinel stay reachable.
func TestHintOnce(t *testing.T) {
	err := &fs.PathError{Op: "read", Path: "/a", Err: semfs.ErrNotExist}
	twice := Hint(Hint(err))
	if n := strings.Count(twice.Error(), "list or glob"); n != 1 {
		t.Errorf("hint appears %d times: %q", n, twice)
	}
	if !errors.Is(twice, semfs.ErrNotExist) {
		t.Errorf("errors.Is lost the sentinel: %v", twice)
	}
	if plain := errors.New("x"); Hint(plain) != plain {
		t.Errorf("an error without a sentinel must come back unchanged")
	}
}
