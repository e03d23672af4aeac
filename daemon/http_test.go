package daemon_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/daemon"
)

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestDaemonServesHTTPAndMCP: the daemon's HTTP front end serves the JSON
// API and MCP over streamable HTTP on the same tree the socket serves.
func TestDaemonServesHTTPAndMCP(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.json")
	os.WriteFile(tokens, []byte(`{"tokens": {"agent-secret": {"id": "agent", "app": "agent-1"}}}`), 0o600)
	cfg, err := daemon.ParseConfig([]string{"-mode", "headless", "-data", dir + "/data", "-index", dir + "/index/index.db",
		"-socket", dir + "/run/semfs.sock", "-http", "127.0.0.1:0", "-http-tokens", tokens, "-mcp-path", "/mcp"},
		func(string) string { return "" }, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	d := &daemon.Main{Config: cfg, Logger: slog.New(slog.DiscardHandler)}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	base := "http://" + d.HTTPAddr()
	ctx := context.Background()

	// Written through the socket, read over HTTP.
	if err := semfs.WriteFile(ctx, client.New(cfg.Socket).FS(), "/notes/a.md", []byte("hello over http\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", base+"/v1/files/notes/a.md", nil)
	req.Header.Set("Authorization", "Bearer agent-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello over http\n" {
		t.Fatalf("GET over the daemon's HTTP: %d %q", resp.StatusCode, body)
	}
	resp, err = http.Post(base+"/v1/list", "application/json", strings.NewReader(`{"path":"/"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %d", resp.StatusCode)
	}

	// MCP over streamable HTTP: an agent writes; the file records it.
	hc := &http.Client{Transport: bearer{"agent-secret", http.DefaultTransport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "/notes/b.md", "content": "from mcp\n"}})
	if err != nil || res.IsError {
		t.Fatalf("write_file over MCP: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "stat", Arguments: map[string]any{"path": "/notes/b.md"}})
	if err != nil || res.IsError {
		t.Fatalf("stat over MCP: %v", err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(raw), `"createdBy":"agent-1"`) {
		t.Fatalf("stat = %s; want created_by agent-1", raw)
	}
}
