package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBelowHiddenFileIsNotFound: a path below a file the token may not see
// answers as a path below an absent name, on every endpoint taking a path:
// before, "not a directory" came back as 409 not_dir, against 404, which
// told that the hidden file exists. A create below it answers 404
// not_exist (below an absent name it succeeds; it cannot succeed there,
// and any other answer would name a file).
func TestBelowHiddenFileIsNotFound(t *testing.T) {
	srv := server(t)
	const hid = "/billing/secret.md"
	call := func(method, path, body string) (int, ErrorBody) {
		t.Helper()
		st, b := do(t, srv, method, path, "agent-token", map[bool]string{true: "application/json"}[method == "POST"], strings.NewReader(body))
		var e ErrorBody
		if st != 200 {
			json.Unmarshal(b, &e)
		}
		return st, e
	}
	n := 0
	same := func(what, method, url, body string) {
		t.Helper()
		n++
		absent := "/billing/none" + string(rune('a'+n)) + ".md"
		hs, he := call(method, strings.ReplaceAll(url, "@", hid), strings.ReplaceAll(body, "@", hid))
		ms, me := call(method, strings.ReplaceAll(url, "@", absent), strings.ReplaceAll(body, "@", absent))
		if hs != ms || he.Code != me.Code || he.Error != strings.ReplaceAll(me.Error, absent, hid) {
			t.Errorf("%s: below the hidden file %d %s %q; below an absent name %d %s %q", what, hs, he.Code, he.Error, ms, me.Code, me.Error)
		}
		if he.Code == "not_dir" {
			t.Errorf("%s: not_dir tells a file is there", what)
		}
	}
	same("read", "POST", "/v1/read", `{"path":"@/x"}`)
	same("stat", "POST", "/v1/stat", `{"path":"@/x"}`)
	same("list", "POST", "/v1/list", `{"path":"@"}`)
	same("list below", "POST", "/v1/list", `{"path":"@/x"}`)
	same("tag", "POST", "/v1/tag", `{"path":"@/x","task":"t"}`)
	same("edit", "POST", "/v1/edit", `{"path":"@/x","old_string":"a","new_string":"b"}`)
	same("related", "POST", "/v1/related", `{"path":"@/x"}`)
	same("remove", "POST", "/v1/remove", `{"path":"@/x"}`)
	same("remove recursive", "POST", "/v1/remove", `{"path":"@/x","recursive":true}`)
	same("move from", "POST", "/v1/move", `{"from":"@/x","to":"/work/moved.md"}`)
	same("move to", "POST", "/v1/move", `{"from":"/notes/auth.md","to":"@/x"}`)
	same("find", "POST", "/v1/find", `{"path":"@/x"}`)
	same("glob", "POST", "/v1/glob", `{"pattern":"*","path":"@/x"}`)
	same("grep", "POST", "/v1/grep", `{"pattern":"Stripe","path":"@/x"}`)
	same("download", "GET", "/v1/files@/x", ``)
	for _, c := range []struct{ what, method, url, body string }{
		{"write", "POST", "/v1/write", `{"path":"@/x","content":"x"}`},
		{"upload", "PUT", "/v1/files@/x", `x`},
	} {
		st, e := call(c.method, strings.ReplaceAll(c.url, "@", hid), strings.ReplaceAll(c.body, "@", hid))
		if st != 404 || e.Code != "not_exist" {
			t.Errorf("%s below the hidden file: %d %s %q; want 404 not_exist", c.what, st, e.Code, e.Error)
		}
	}
	// The billing token still reads its file.
	st, b := do(t, srv, "GET", "/v1/files"+hid, "billing-token", "", nil)
	if st != 200 || !strings.Contains(string(b), "Stripe") {
		t.Errorf("billing reads %s: %d %s", hid, st, b)
	}
}
