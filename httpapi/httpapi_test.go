package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/internal/testtree"
	"github.com/semfs/semfs/ops"
)

func server(t *testing.T) *httptest.Server {
	t.Helper()
	api := New(testtree.New(t), Config{MaxJSON: 4096, MaxBody: 1 << 16, Tokens: map[string]Token{
		"agent-token":   {ID: "agent", App: "agent-1"},
		"billing-token": {ID: "bill", Groups: []string{"billing"}},
		"ro-token":      {ID: "reader", ReadOnly: true},
		"fenced-token":  {ID: "fenced", Default: access.None, Rules: []access.Rule{{Path: "/notes", Access: access.Read}}},
	}})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return srv
}

// do sends a request and returns the status and body.
func do(t *testing.T, srv *httptest.Server, method, path, token, contentType string, body io.Reader) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func post(t *testing.T, srv *httptest.Server, path, token string, in any, out any) (int, ErrorBody) {
	t.Helper()
	raw, _ := json.Marshal(in)
	status, body := do(t, srv, "POST", path, token, "application/json", bytes.NewReader(raw))
	var e ErrorBody
	if status == 200 {
		if out != nil {
			if err := json.Unmarshal(body, out); err != nil {
				t.Fatalf("%s: %v in %s", path, err, body)
			}
		}
	} else {
		json.Unmarshal(body, &e)
	}
	return status, e
}

func TestOperations(t *testing.T) {
	srv := server(t)
	var rd ops.ReadOut
	if st, e := post(t, srv, "/v1/read", "agent-token", map[string]any{"path": "/notes/auth.md", "offset": 3, "limit": 1}, &rd); st != 200 || rd.Content != "Login fails when the token expires.\n" {
		t.Fatalf("read: %d %v %+v", st, e, rd)
	}
	var w ops.WriteOut
	if st, e := post(t, srv, "/v1/write", "agent-token", map[string]any{"path": "/work/a.md", "content": "hello\n"}, &w); st != 200 || w.Bytes != 6 {
		t.Fatalf("write: %d %v", st, e)
	}
	var s ops.StatOut
	post(t, srv, "/v1/stat", "agent-token", map[string]any{"path": "/work/a.md"}, &s)
	if s.Meta == nil || s.Meta.CreatedBy != "agent-1" {
		t.Fatalf("created_by through HTTP = %+v", s.Meta)
	}
	var se ops.SearchOut
	post(t, srv, "/v1/search", "agent-token", map[string]any{"query": "pipeline"}, &se)
	if len(se.Hits) == 0 || se.Hits[0].Path != "/notes/deploy.md" {
		t.Fatalf("search = %+v", se)
	}
	var q ops.QueryOut
	post(t, srv, "/v1/query", "agent-token", map[string]any{"text": "auth bug"}, &q)
	if len(q.Results) == 0 || q.Results[0].Path != "/notes/auth.md" {
		t.Fatalf("query = %+v", q)
	}
	// Raw upload and download.
	st, body := do(t, srv, "PUT", "/v1/files/bin/blob.bin", "agent-token", "", bytes.NewReader([]byte{0, 1, 2, 255}))
	if st != 200 {
		t.Fatalf("PUT: %d %s", st, body)
	}
	st, body = do(t, srv, "GET", "/v1/files/bin/blob.bin", "agent-token", "", nil)
	if st != 200 || !bytes.Equal(body, []byte{0, 1, 2, 255}) {
		t.Fatalf("GET: %d %v", st, body)
	}
}

func TestErrorsAndStatuses(t *testing.T) {
	srv := server(t)
	for _, c := range []struct {
		name, method, path, token, ctype, body string
		status                                 int
		code                                   string
	}{
		{"no token", "POST", "/v1/list", "", "application/json", `{"path":"/"}`, 401, "unauthorized"},
		{"wrong token", "POST", "/v1/list", "nope", "application/json", `{"path":"/"}`, 401, "unauthorized"},
		{"malformed JSON", "POST", "/v1/list", "agent-token", "application/json", `{"path":`, 400, "bad_request"},
		{"unknown field", "POST", "/v1/list", "agent-token", "application/json", `{"path":"/","evil":1}`, 400, "bad_request"},
		{"two values", "POST", "/v1/list", "agent-token", "application/json", `{"path":"/"}{}`, 400, "bad_request"},
		{"empty body", "POST", "/v1/list", "agent-token", "application/json", ``, 400, "bad_request"},
		{"not JSON", "POST", "/v1/list", "agent-token", "text/plain", `x`, 415, "bad_media_type"},
		{"oversized JSON", "POST", "/v1/write", "agent-token", "application/json", `{"path":"/x","content":"` + strings.Repeat("a", 5000) + `"}`, 413, "too_large"},
		{"oversized upload", "PUT", "/v1/files/big", "agent-token", "", strings.Repeat("a", 1<<17), 413, "too_large"},
		{"traversal", "POST", "/v1/read", "agent-token", "application/json", `{"path":"/../etc/passwd"}`, 400, "invalid"},
		{"traversal raw", "GET", "/v1/files/a/..%2f..%2fetc", "agent-token", "", ``, 400, "invalid"},
		{"missing", "POST", "/v1/read", "agent-token", "application/json", `{"path":"/nope"}`, 404, "not_exist"},
		{"hidden is absent", "POST", "/v1/read", "agent-token", "application/json", `{"path":"/billing/secret.md"}`, 404, "not_exist"},
		{"read-only token", "POST", "/v1/write", "ro-token", "application/json", `{"path":"/x","content":"x"}`, 403, "read_only"},
		{"read-only upload", "PUT", "/v1/files/x", "ro-token", "", `x`, 403, "read_only"},
		{"fenced path", "POST", "/v1/read", "fenced-token", "application/json", `{"path":"/src/main.go"}`, 403, "permission"},
		{"not empty", "POST", "/v1/remove", "agent-token", "application/json", `{"path":"/notes"}`, 409, "not_empty"},
		{"unknown endpoint", "POST", "/v1/nope", "agent-token", "application/json", `{}`, 404, "not_found"},
	} {
		st, body := do(t, srv, c.method, c.path, c.token, c.ctype, strings.NewReader(c.body))
		var e ErrorBody
		json.Unmarshal(body, &e)
		if st != c.status || e.Code != c.code || e.Error == "" {
			t.Errorf("%s: %d %q (%s); want %d %q", c.name, st, e.Code, e.Error, c.status, c.code)
		}
		if strings.Contains(e.Error, "secret.md") && !strings.Contains(c.body, "secret") {
			t.Errorf("%s: error reveals a hidden file: %s", c.name, e.Error)
		}
	}
	// The billing token sees the billing file; the agent's listings omit it.
	var rd ops.ReadOut
	if st, _ := post(t, srv, "/v1/read", "billing-token", map[string]any{"path": "/billing/secret.md"}, &rd); st != 200 {
		t.Fatalf("billing read: %d", st)
	}
	var ls ops.ListOut
	post(t, srv, "/v1/list", "agent-token", map[string]any{"path": "/"}, &ls)
	for _, e := range ls.Entries {
		if e.Name == "billing" {
			t.Fatal("the agent's listing shows a directory holding only hidden files")
		}
	}
}

func TestOpenAPIMatchesRoutes(t *testing.T) {
	srv := server(t)
	st, body := do(t, srv, "GET", "/v1/openapi.json", "", "", nil)
	if st != 200 {
		t.Fatalf("openapi: %d", st)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi document: %v %q", err, doc.OpenAPI)
	}
	var documented []string
	for p, methods := range doc.Paths {
		for m := range methods {
			documented = append(documented, strings.ToUpper(m)+" "+p)
			// Every documented endpoint is served (an unknown one answers
			// "no such endpoint").
			url := strings.ReplaceAll(p, "{path}", "notes/auth.md")
			st, body := do(t, srv, strings.ToUpper(m), url, "agent-token", "application/json", strings.NewReader(`{}`))
			if st == 404 && strings.Contains(string(body), "no such endpoint") {
				t.Errorf("documented %s %s is not served", m, p)
			}
		}
	}
	sort.Strings(documented)
	if len(documented) != len(routes) {
		t.Fatalf("documented %d endpoints, serving %d: %v", len(documented), len(routes), documented)
	}
	if !strings.Contains(string(body), `"old_string"`) || !strings.Contains(string(body), `"next_cursor"`) {
		t.Fatal("request/response schemas missing from the document")
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"tokens": {"t1": {"id": "ci", "groups": ["billing"], "read_only": true, "default": "none",
		"rules": [{"path": "/reports/**", "access": "read"}]}}, "timeout": "5s"}`), 0o600)
	c, err := LoadConfig(good)
	if err != nil || c.Tokens["t1"].Rules[0].Access != access.Read || c.Tokens["t1"].Default != access.None {
		t.Fatalf("LoadConfig = %+v, %v", c, err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"tokens": {}, "tokenz": 1}`), 0o600)
	if _, err := LoadConfig(bad); err == nil || !strings.Contains(err.Error(), "tokenz") {
		t.Fatalf("unknown field accepted: %v", err)
	}
}
