package wire_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/wire"
)

func TestErrorRoundTrip(t *testing.T) {
	sentinels := []error{semfs.ErrNotExist, semfs.ErrExist, semfs.ErrPermission, semfs.ErrInvalid,
		semfs.ErrNotDir, semfs.ErrIsDir, semfs.ErrNotEmpty, semfs.ErrReadOnly, semfs.ErrQuota}
	seen := map[string]bool{}
	for _, s := range sentinels {
		in := semfs.PathErr("open", "/a/b", s, "because")
		we := wire.ErrorFrom(in)
		if seen[we.Code] || we.Code == wire.CodeInternal {
			t.Fatalf("%v: code %q is internal or shared", s, we.Code)
		}
		seen[we.Code] = true
		b, _ := json.Marshal(we)
		var back wire.Error
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		out := back.Err()
		if !errors.Is(out, s) {
			t.Errorf("%v: decoded %v does not wrap the sentinel", s, out)
		}
		if out.Error() != in.Error() {
			t.Errorf("decoded text %q, want %q", out.Error(), in.Error())
		}
	}
	other := wire.ErrorFrom(fmt.Errorf("disk on fire"))
	if other.Code != wire.CodeInternal || other.Err().Error() != "disk on fire" {
		t.Errorf("plain error encoded as %+v", other)
	}
	if wire.ErrorFrom(nil) != nil {
		t.Error("ErrorFrom(nil) is not nil")
	}
}
