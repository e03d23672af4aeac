package httpapi_test

// The HTTP API end to end: Go's net/http client against the built semfs
// binary running `semfs http` on a loopback port, over a host directory
// indexed by `semfs index`.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semfs/semfs/internal/testbin"
	"github.com/semfs/semfs/internal/testtree"
)

func TestMain(m *testing.M) { testbin.Main(m) }

const tokens = `{"max_json": 4096, "max_body": 65536, "tokens": {
  "admin-token": {"id": "admin", "app": "ops", "admin": true},
  "eng-token": {"id": "eng", "app": "eng-bot", "groups": ["eng"]},
  "ro-token": {"id": "ro", "groups": ["billing"], "read_only": true},
  "notes-token": {"id": "notes", "default": "none", "rules": [{"path": "/notes/**", "access": "read"}]}}}`

type response struct {
	Status int
	Header http.Header
	Body   []byte
	JSON   map[string]any
}

func do(t *testing.T, method, url, token, contentType string, body io.Reader) response {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	r := response{Status: res.StatusCode, Header: res.Header}
	r.Body, _ = io.ReadAll(res.Body)
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(r.Body, &r.JSON); err != nil {
			t.Fatalf("%s %s: %d with a JSON content type but %v: %s", method, url, r.Status, err, r.Body)
		}
	}
	return r
}

func TestHTTPEndToEnd(t *testing.T) {
	root := testbin.HostTree(t)
	// A host symlink pointing out of the tree, made after indexing.
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "notes", "escape")); err != nil {
		t.Fatal(err)
	}
	base := testbin.StartHTTP(t, root, tokens)
	post := func(token, op, body string) response {
		t.Helper()
		return do(t, "POST", base+"/v1/"+op, token, "application/json", strings.NewReader(body))
	}
	expect := func(name string, r response, status int, code string) {
		t.Helper()
		if r.Status != status || (code != "" && r.JSON["code"] != code) {
			t.Errorf("%s: %d %s, want %d %s", name, r.Status, r.Body, status, code)
		}
		if r.Status >= 400 && (r.JSON["error"] == nil || r.JSON["error"] == "") {
			t.Errorf("%s: error response without a JSON error: %s", name, r.Body)
		}
	}

	// Public endpoints and authentication.
	expect("health", do(t, "GET", base+"/v1/health", "", "", nil), 200, "")
	api := do(t, "GET", base+"/v1/openapi.json", "", "", nil)
	for _, p := range []string{"/v1/read", "/v1/search", "/v1/files/{path}", "/v1/shell"} {
		if get(api.JSON, "paths", p) == nil {
			t.Errorf("openapi.json lacks %s", p)
		}
	}
	for _, tok := range []string{"", "wrong-token", "admin-token2", "Admin-Token"} {
		r := post(tok, "read", `{"path":"/notes/auth.md"}`)
		expect("token "+tok, r, 401, "unauthorized")
		if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("401 without WWW-Authenticate: %v", r.Header)
		}
	}
	expect("unknown endpoint", post("admin-token", "nope", `{}`), 404, "not_found")

	// A good request.
	r := post("eng-token", "read", `{"path":"/notes/auth.md","offset":4}`)
	if r.Status != 200 || r.JSON["content"] != "TODO: refresh tokens.\n" {
		t.Errorf("read: %d %s", r.Status, r.Body)
	}

	// Malformed and unexpected bodies.
	expect("malformed JSON", post("eng-token", "read", `{"path": "/notes/auth.md"`), 400, "bad_request")
	expect("not an object", post("eng-token", "read", `["/notes/auth.md"]`), 400, "bad_request")
	expect("two values", post("eng-token", "read", `{"path":"/notes/auth.md"} {}`), 400, "bad_request")
	expect("empty body", post("eng-token", "read", ``), 400, "bad_request")
	r = post("eng-token", "read", `{"path":"/notes/auth.md","pathh":"x"}`)
	expect("unknown field", r, 400, "bad_request")
	if !strings.Contains(r.JSON["error"].(string), `"pathh"`) {
		t.Errorf("unknown field: the error should name it: %s", r.Body)
	}
	expect("wrong type", post("eng-token", "read", `{"path": 7}`), 400, "bad_request")
	expect("form body", do(t, "POST", base+"/v1/read", "eng-token", "application/x-www-form-urlencoded", strings.NewReader("path=/notes/auth.md")), 415, "bad_media_type")

	// Oversized bodies: the JSON limit and the upload limit of the tokens file.
	big := `{"path":"/notes/big.md","content":"` + strings.Repeat("x", 5000) + `"}`
	expect("oversized JSON", post("eng-token", "write", big), 413, "too_large")
	expect("oversized upload", do(t, "PUT", base+"/v1/files/notes/big.bin", "eng-token", "application/octet-stream", bytes.NewReader(make([]byte, 70000))), 413, "too_large")
	if _, err := os.Stat(filepath.Join(root, "notes/big.md")); !os.IsNotExist(err) {
		t.Errorf("an oversized write reached the host: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "notes/big.bin")); !os.IsNotExist(err) {
		t.Errorf("an oversized upload reached the host: %v", err)
	}
	r = do(t, "PUT", base+"/v1/files/notes/ok.bin", "eng-token", "application/octet-stream", bytes.NewReader(make([]byte, 60000)))
	if r.Status != 200 || r.JSON["bytes"] != 60000.0 {
		t.Errorf("upload under the limit: %d %s", r.Status, r.Body)
	}

	// Path traversal: in JSON paths, in raw file URLs, and through a host symlink.
	for _, p := range []string{"/../etc/passwd", "/notes/../../etc/passwd", "/notes/../auth.md", "/notes//auth.md", "/notes/./auth.md", "/notes/auth.md\x00"} {
		js, _ := json.Marshal(p)
		r := post("admin-token", "read", fmt.Sprintf(`{"path":%s}`, js))
		expect("read "+p, r, 400, "invalid")
		w := post("admin-token", "write", fmt.Sprintf(`{"path":%s,"content":"x"}`, js))
		expect("write "+p, w, 400, "invalid")
	}
	for _, u := range []string{"/v1/files/%2e%2e/%2e%2e/etc/passwd", "/v1/files/notes/..%2f..%2f..%2fetc%2fpasswd", "/v1/files/notes/%2e%2e%2f%2e%2e%2fetc%2fpasswd"} {
		r := do(t, "GET", base+u, "admin-token", "", nil)
		if r.Status != 400 || bytes.Contains(r.Body, []byte("root:")) {
			t.Errorf("GET %s: %d %s", u, r.Status, r.Body)
		}
	}
	r = do(t, "GET", base+"/v1/files/notes/escape", "admin-token", "", nil)
	if r.Status == 200 || bytes.Contains(r.Body, []byte("root:")) {
		t.Errorf("GET through a symlink out of the tree: %d %s", r.Status, r.Body)
	}
	r = post("admin-token", "read", `{"path":"/notes/escape"}`)
	if r.Status == 200 || bytes.Contains(r.Body, []byte("root:")) {
		t.Errorf("read through a symlink out of the tree: %d %s", r.Status, r.Body)
	}

	// Hidden files per token.
	// Group visibility makes a file absent (404); a path rule of "none"
	// refuses it (403).
	for tok, want := range map[string]struct {
		status int
		code   string
	}{"eng-token": {404, "not_exist"}, "notes-token": {403, "permission"}} {
		expect(tok+" read hidden", post(tok, "read", `{"path":"/billing/secret.md"}`), want.status, want.code)
		expect(tok+" stat hidden", post(tok, "stat", `{"path":"/billing/secret.md"}`), want.status, want.code)
		expect(tok+" GET hidden", do(t, "GET", base+"/v1/files/billing/secret.md", tok, "", nil), want.status, want.code)
		for _, q := range []struct{ op, body string }{
			{"glob", `{"pattern":"**"}`},
			{"grep", `{"pattern":"Stripe|Invoices"}`},
			{"find", `{}`},
			{"search", `{"query":"Stripe keys rotate monthly invoices"}`},
			{"query", `{"text":"invoices billing"}`},
			{"list", `{"path":"/"}`},
			{"shell", `{"script":"cat /billing/secret.md; grep -r Stripe /; find /; search invoices"}`},
		} {
			r := post(tok, q.op, q.body)
			named := q.op == "shell" // the script names the file; its error may too
			if (!named && bytes.Contains(r.Body, []byte("secret.md"))) || bytes.Contains(r.Body, []byte("Stripe")) ||
				bytes.Contains(r.Body, []byte("Invoices")) || r.Status != 200 {
				t.Errorf("%s %s %s revealed the hidden file: %d %s", tok, q.op, q.body, r.Status, r.Body)
			}
		}
	}
	expect("eng write hidden", post("eng-token", "write", `{"path":"/billing/secret.md","content":"x"}`), 403, "permission")
	expect("eng remove hidden", post("eng-token", "remove", `{"path":"/billing","recursive":true}`), 404, "not_exist")
	expect("eng move hidden", post("eng-token", "move", `{"from":"/billing/secret.md","to":"/notes/x.md"}`), 404, "not_exist")
	r = do(t, "GET", base+"/v1/files/billing/secret.md", "ro-token", "", nil)
	if r.Status != 200 || string(r.Body) != testtree.Files["/billing/secret.md"] {
		t.Errorf("billing member reads the billing file: %d %s", r.Status, r.Body)
	}

	// Path rules and read-only tokens.
	expect("notes-token reads outside its rules", post("notes-token", "read", `{"path":"/src/main.go"}`), 403, "permission")
	expect("notes-token writes", post("notes-token", "write", `{"path":"/notes/x.md","content":"x"}`), 403, "permission")
	expect("ro write", post("ro-token", "write", `{"path":"/notes/x.md","content":"x"}`), 403, "read_only")
	expect("ro PUT", do(t, "PUT", base+"/v1/files/notes/x.md", "ro-token", "application/octet-stream", strings.NewReader("x")), 403, "read_only")
	expect("ro tag", post("ro-token", "tag", `{"path":"/notes/auth.md","task":"x"}`), 403, "read_only")
	if _, err := os.Stat(filepath.Join(root, "notes/x.md")); !os.IsNotExist(err) {
		t.Errorf("a refused write reached the host: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "billing/secret.md")); string(data) != testtree.Files["/billing/secret.md"] {
		t.Errorf("the hidden file changed: %q", data)
	}

	// Writes land on the host with their author.
	r = post("eng-token", "write", `{"path":"/notes/new/a.md","content":"from eng\n"}`)
	if r.Status != 200 {
		t.Errorf("write: %d %s", r.Status, r.Body)
	}
	r = post("eng-token", "stat", `{"path":"/notes/new/a.md"}`)
	if get(r.JSON, "meta", "createdBy") != "eng-bot" {
		t.Errorf("created_by of an eng-token write: %s", r.Body)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "notes/new/a.md")); string(data) != "from eng\n" {
		t.Errorf("host notes/new/a.md = %q", data)
	}
	expect("not empty", post("eng-token", "remove", `{"path":"/notes"}`), 409, "not_empty")
}

func get(v any, path ...string) any {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}
