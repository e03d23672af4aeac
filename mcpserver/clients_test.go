package mcpserver_test

// Real MCP clients against the real binary: the official TypeScript SDK
// client (testdata/node/mcp-client.mjs) and the MCP inspector's CLI drive
// `semfs mcp` over stdio and `semfs http --mcp-path /mcp` over streamable
// HTTP, on a host directory indexed by `semfs index`.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/internal/testbin"
	"github.com/semfs/semfs/internal/testtree"
)

func TestMain(m *testing.M) { testbin.Main(m) }

// nodeDir is the directory of the Node clients; the test skips when their
// packages are not installed.
func nodeDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs("../testdata/node")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: install Node.js 20 or later to run the real MCP client tests")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skipf("the Node MCP clients are not installed: run: npm ci --prefix %s", dir)
	}
	return dir
}

type nodeTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema map[string]any  `json:"inputSchema"`
	Annotations json.RawMessage `json:"annotations"`
}

type nodeCall struct {
	Tool          string         `json:"tool"`
	IsError       bool           `json:"isError"`
	Text          string         `json:"text"`
	Structured    map[string]any `json:"structured"`
	ProtocolError string         `json:"protocolError"`
}

type nodeReport struct {
	ConnectError string            `json:"connectError"`
	Server       map[string]string `json:"server"`
	Tools        []nodeTool        `json:"tools"`
	Calls        []nodeCall        `json:"calls"`
	Resources    []struct {
		URI   string `json:"uri"`
		Text  string `json:"text"`
		Error string `json:"error"`
	} `json:"resources"`
	Bench *struct {
		N      int     `json:"n"`
		P50    float64 `json:"p50_ms"`
		P99    float64 `json:"p99_ms"`
		Errors int     `json:"errors"`
	} `json:"bench"`
}

func (r nodeReport) toolNames() []string {
	var names []string
	for _, t := range r.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names
}

type call struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args,omitempty"`
}

// runNode runs mcp-client.mjs with plan and decodes its report.
func runNode(t testing.TB, plan map[string]any) nodeReport {
	t.Helper()
	dir := nodeDir(t)
	raw, _ := json.Marshal(plan)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "mcp-client.mjs"), string(raw))
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node mcp-client.mjs: %v\n%s", err, stderr.String())
	}
	var rep nodeReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("decoding the client's report: %v\n%s\nstderr: %s", err, out, stderr.String())
	}
	return rep
}

func stdioPlan(root string, flags []string, calls []call) map[string]any {
	return map[string]any{"transport": "stdio", "command": testbin.Built(),
		"args": append([]string{"mcp", "--root", root}, flags...), "calls": calls}
}

var allTools = []string{"edit_file", "find", "glob", "grep", "list", "move", "query", "read_file", "related", "remove", "search", "shell", "stat", "tag", "write_file"}
var readTools = []string{"find", "glob", "grep", "list", "query", "read_file", "related", "search", "shell", "stat"}

// get walks a decoded JSON value by keys and indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			s, _ := v.([]any)
			if k >= len(s) {
				return nil
			}
			v = s[k]
		}
	}
	return v
}

func TestNodeClientStdioEveryTool(t *testing.T) {
	nodeDir(t)
	root := testbin.HostTree(t)
	calls := []call{
		{"read_file", map[string]any{"path": "/notes/auth.md", "offset": 3, "limit": 1}},
		{"list", map[string]any{"path": "/notes"}},
		{"glob", map[string]any{"pattern": "**/*.md"}},
		{"grep", map[string]any{"pattern": "TODO", "path": "/notes"}},
		{"find", map[string]any{"name": "*.go", "type": "f"}},
		{"stat", map[string]any{"path": "/notes/auth.md"}},
		{"query", map[string]any{"text": "auth bug"}},
		{"search", map[string]any{"query": "token expires", "limit": 3}},
		{"related", map[string]any{"path": "/notes/auth.md"}},
		{"write_file", map[string]any{"path": "/out/new.md", "content": "hello agent\nsecond line\n"}},
		{"edit_file", map[string]any{"path": "/out/new.md", "old_string": "hello", "new_string": "bye"}},
		{"tag", map[string]any{"path": "/out/new.md", "task": "demo task", "summary": "a greeting"}},
		{"move", map[string]any{"from": "/out/new.md", "to": "/out/moved.md"}},
		{"stat", map[string]any{"path": "/out/moved.md"}},
		{"shell", map[string]any{"script": "cat /out/moved.md | wc -l; ls /out"}},
		{"write_file", map[string]any{"path": "/out/gone.md", "content": "x"}},
		{"remove", map[string]any{"path": "/out/gone.md"}},
		// Error results an agent can act on.
		{"read_file", map[string]any{"path": "/notes/missing.md"}},
		{"edit_file", map[string]any{"path": "/notes/auth.md", "old_string": "not in the file", "new_string": "x"}},
		{"find", map[string]any{"type": "x"}},
		{"read_file", map[string]any{"path": "/notes/../../etc/passwd"}},
		{"remove", map[string]any{"path": "/notes"}},
		{"nonexistent_tool", nil},
	}
	plan := stdioPlan(root, []string{"--app", "agent"}, calls)
	plan["resources"] = []string{"semfs:///notes/deploy.md", "semfs:///notes/missing.md"}
	rep := runNode(t, plan)

	if rep.Server["name"] != "semfs" {
		t.Errorf("server info = %v", rep.Server)
	}
	if got := rep.toolNames(); !slices.Equal(got, allTools) {
		t.Errorf("tools = %v, want %v", got, allTools)
	}
	for _, tool := range rep.Tools {
		if tool.Description == "" || tool.InputSchema["type"] != "object" {
			t.Errorf("tool %s: description %q, schema %v", tool.Name, tool.Description, tool.InputSchema)
		}
	}
	if len(rep.Calls) != len(calls) {
		t.Fatalf("%d results for %d calls", len(rep.Calls), len(calls))
	}
	ok := func(i int) map[string]any {
		c := rep.Calls[i]
		if c.IsError || c.ProtocolError != "" {
			t.Errorf("call %d %s %v failed: %s%s", i, c.Tool, calls[i].Args, c.Text, c.ProtocolError)
		}
		return c.Structured
	}
	if r := ok(0); r["content"] != "Login fails when the token expires.\n" || r["total_lines"] != 4.0 || r["start_line"] != 3.0 {
		t.Errorf("read_file lines 3..3 = %v", r)
	}
	if r := ok(1); get(r, "entries", 0, "name") != "auth.md" || get(r, "entries", 1, "name") != "deploy.md" || get(r, "entries", 2) != nil {
		t.Errorf("list /notes = %v", r)
	}
	if r := fmt.Sprint(ok(2)["paths"]); r != "[/billing/secret.md /notes/auth.md /notes/deploy.md]" {
		t.Errorf("glob (admin) = %s", r)
	}
	if r := ok(3); get(r, "matches", 0, "path") != "/notes/auth.md" || get(r, "matches", 0, "line") != 4.0 || get(r, "matches", 1) != nil {
		t.Errorf("grep TODO = %v", r)
	}
	if r := fmt.Sprint(ok(4)["paths"]); r != "[/src/main.go]" {
		t.Errorf("find *.go = %s", r)
	}
	if r := ok(5); get(r, "meta", "task") != "fix the auth bug" || r["type"] != "file" {
		t.Errorf("stat /notes/auth.md = %v", r)
	}
	if r := ok(6); get(r, "results", 0, "path") != "/notes/auth.md" {
		t.Errorf("query auth bug: first result = %v", get(r, "results", 0))
	}
	if r := ok(7); get(r, "hits", 0, "path") != "/notes/auth.md" {
		t.Errorf("search token expires: first hit = %v", get(r, "hits", 0))
	}
	if r := ok(8); r["candidates"] == nil {
		t.Errorf("related = %v", r)
	}
	if r := ok(9); r["bytes"] != 24.0 {
		t.Errorf("write_file = %v", r)
	}
	if r := ok(10); r["replacements"] != 1.0 {
		t.Errorf("edit_file = %v", r)
	}
	if r := ok(11); r["ok"] != true {
		t.Errorf("tag = %v", r)
	}
	if r := ok(12); r["to"] != "/out/moved.md" {
		t.Errorf("move = %v", r)
	}
	if r := ok(13); get(r, "meta", "task") != "demo task" || get(r, "meta", "createdBy") != "agent" {
		t.Errorf("stat after move: tags must follow the file and created_by be the agent: %v", r)
	}
	if r := ok(14); r["stdout"] != "2\nmoved.md\n" || r["exit_code"] != 0.0 {
		t.Errorf("shell = %v", r)
	}
	ok(15)
	ok(16)
	wantErr := func(i int, substr string) {
		c := rep.Calls[i]
		if !c.IsError || !strings.Contains(c.Text, substr) {
			t.Errorf("call %d %s %v: isError=%v text=%q protocolError=%q; want a tool error containing %q", i, c.Tool, calls[i].Args, c.IsError, c.Text, c.ProtocolError, substr)
		}
	}
	wantErr(17, "list or glob shows what is there")
	wantErr(18, "was not found")
	wantErr(19, `"f" (files) or "d"`)
	wantErr(20, "invalid")
	wantErr(21, "recursive=true")
	if c := rep.Calls[22]; !strings.Contains(c.ProtocolError, "unknown tool") {
		t.Errorf("unknown tool: %+v", c)
	}
	if r := rep.Resources; len(r) != 2 || r[0].Text != testtree.Files["/notes/deploy.md"] || r[1].Error == "" {
		t.Errorf("resources = %+v", r)
	}

	// What the tools did is on the host.
	data, err := os.ReadFile(filepath.Join(root, "out/moved.md"))
	if string(data) != "bye agent\nsecond line\n" {
		t.Errorf("host out/moved.md = %q, %v", data, err)
	}
	for _, p := range []string{"out/new.md", "out/gone.md"} {
		if _, err := os.Stat(filepath.Join(root, p)); !os.IsNotExist(err) {
			t.Errorf("host %s: %v, want it gone", p, err)
		}
	}
}

// hiddenCalls touches /billing/secret.md (visible to group billing only)
// through every tool.
var hiddenCalls = []call{
	{"read_file", map[string]any{"path": "/billing/secret.md"}},
	{"list", map[string]any{"path": "/billing"}},
	{"glob", map[string]any{"pattern": "**"}},
	{"grep", map[string]any{"pattern": "Stripe|Invoices"}},
	{"grep", map[string]any{"pattern": "Stripe", "path": "/billing/secret.md"}},
	{"find", map[string]any{"path": "/"}},
	{"find", map[string]any{"name": "secret*"}},
	{"stat", map[string]any{"path": "/billing/secret.md"}},
	{"query", map[string]any{"text": "invoices secret billing"}},
	{"search", map[string]any{"query": "Stripe keys rotate monthly invoices"}},
	{"search", map[string]any{"query": "invoices", "path": "/billing"}},
	{"related", map[string]any{"path": "/billing/secret.md"}},
	{"related", map[string]any{"path": "/notes/deploy.md", "limit": 50}},
	{"shell", map[string]any{"script": "cat /billing/secret.md; ls -la /billing; find / -name '*secret*'; grep -r Stripe /; tree /; stat /billing/secret.md; search invoices; query invoices"}},
	{"write_file", map[string]any{"path": "/billing/secret.md", "content": "overwritten"}},
	{"edit_file", map[string]any{"path": "/billing/secret.md", "old_string": "Stripe", "new_string": "x"}},
	{"tag", map[string]any{"path": "/billing/secret.md", "task": "stolen"}},
	{"move", map[string]any{"from": "/billing/secret.md", "to": "/notes/stolen.md"}},
	{"remove", map[string]any{"path": "/billing/secret.md"}},
	{"remove", map[string]any{"path": "/billing", "recursive": true}},
	{"shell", map[string]any{"script": "echo x > /billing/secret.md; rm -r /billing; mv /billing/secret.md /notes/x.md"}},
}

// secretWords are words of the hidden file's contents and tags; no result
// may contain them. secretName may appear only in the error of a call that
// named the file itself.
var (
	secretWords = regexp.MustCompile(`(?i)stripe|invoices|monthly`)
	secretName  = regexp.MustCompile(`secret\.md`)
)

// checkHidden asserts that no result of hiddenCalls revealed the hidden
// file and that every call naming it failed, then that the file is intact
// on the host.
func checkHidden(t *testing.T, root string, rep nodeReport) {
	t.Helper()
	if len(rep.Calls) != len(hiddenCalls) {
		t.Fatalf("%d results for %d calls", len(rep.Calls), len(hiddenCalls))
	}
	for i, c := range rep.Calls {
		raw, _ := json.Marshal(c.Structured)
		named := strings.Contains(fmt.Sprint(hiddenCalls[i].Args), "secret.md")
		if m := secretWords.FindString(c.Text + string(raw)); m != "" {
			t.Errorf("%s %v revealed %q: %s %s", c.Tool, hiddenCalls[i].Args, m, c.Text, raw)
		}
		if m := secretName.FindString(c.Text + string(raw)); m != "" && !named {
			t.Errorf("%s %v revealed the hidden name: %s %s", c.Tool, hiddenCalls[i].Args, c.Text, raw)
		}
		named = named || hiddenCalls[i].Tool == "remove"
		if hiddenCalls[i].Tool == "shell" {
			named = false // a script's failures are in its exit code and stderr
		}
		if named && !c.IsError && c.ProtocolError == "" {
			t.Errorf("%s %v succeeded on a hidden file: %s", c.Tool, hiddenCalls[i].Args, raw)
		}
	}
	data, err := os.ReadFile(filepath.Join(root, "billing/secret.md"))
	if string(data) != testtree.Files["/billing/secret.md"] {
		t.Errorf("the hidden file changed on the host: %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(root, "notes/stolen.md")); !os.IsNotExist(err) {
		t.Errorf("notes/stolen.md: %v", err)
	}
	// The tag query of an admin still finds it with its own task.
	var q []struct {
		Path string `json:"path"`
		Task string `json:"task"`
	}
	out := testbin.Run(t, "--root", root, "--json", "query", "invoices")
	if err := json.Unmarshal([]byte(out), &q); err != nil {
		t.Fatalf("semfs query --json: %v\n%s", err, out)
	}
	if len(q) == 0 || q[0].Path != "/billing/secret.md" || q[0].Task != "invoices" {
		t.Errorf("the hidden file's tags changed: %s", out)
	}
}

func TestNodeClientStdioHiddenFiles(t *testing.T) {
	nodeDir(t)
	root := testbin.HostTree(t)
	rep := runNode(t, stdioPlan(root, []string{"--app", "intruder", "--groups", "eng"}, hiddenCalls))
	checkHidden(t, root, rep)
	// The same session does see the rest of the tree.
	if got := rep.Calls[2].Structured["paths"]; fmt.Sprint(got) != "[/notes/auth.md /notes/deploy.md /src/main.go]" {
		t.Errorf("glob ** as group eng = %v", got)
	}
}

func TestNodeClientStdioReadOnly(t *testing.T) {
	nodeDir(t)
	root := testbin.HostTree(t)
	rep := runNode(t, stdioPlan(root, []string{"--read-only", "--groups", "eng"}, append([]call{
		{"shell", map[string]any{"script": "echo x > /notes/x.md"}},
		{"read_file", map[string]any{"path": "/notes/deploy.md"}},
		{"write_file", map[string]any{"path": "/notes/x.md", "content": "x"}},
	}, hiddenCalls...)))
	if got := rep.toolNames(); !slices.Equal(got, readTools) {
		t.Errorf("read-only tools = %v, want %v", got, readTools)
	}
	for _, tool := range rep.Tools {
		if !strings.Contains(string(tool.Annotations), `"readOnlyHint":true`) {
			t.Errorf("read-only session: tool %s is not annotated read-only: %s", tool.Name, tool.Annotations)
		}
	}
	if c := rep.Calls[0]; c.Structured["exit_code"] == 0.0 || c.Structured["stderr"] == "" {
		t.Errorf("a redirection in a read-only shell: %+v", c)
	}
	if c := rep.Calls[1]; c.Structured["content"] != testtree.Files["/notes/deploy.md"] {
		t.Errorf("read_file in a read-only session: %+v", c)
	}
	if c := rep.Calls[2]; !strings.Contains(c.ProtocolError, "unknown tool") {
		t.Errorf("write_file in a read-only session must not exist: %+v", c)
	}
	if _, err := os.Stat(filepath.Join(root, "notes/x.md")); !os.IsNotExist(err) {
		t.Errorf("a read-only session wrote notes/x.md: %v", err)
	}
	rep.Calls = rep.Calls[3:]
	checkHidden(t, root, rep)
}

// TestInspectorCLI drives `semfs mcp` with the MCP inspector's CLI mode.
func TestInspectorCLI(t *testing.T) {
	dir := nodeDir(t)
	cli := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "cli", "build", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		t.Skipf("the MCP inspector is not installed: run: npm ci --prefix %s", dir)
	}
	root := testbin.HostTree(t)
	inspect := func(args ...string) map[string]any {
		t.Helper()
		argv := append([]string{cli, "--cli", testbin.Path(t), "mcp", "--root", root, "--groups", "eng"}, args...)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "node", argv...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("inspector %v: %v\n%s%s", args, err, out, stderr.String())
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("inspector %v: %v\n%s", args, err, out)
		}
		return v
	}
	var names []string
	for _, tool := range inspect("--method", "tools/list")["tools"].([]any) {
		names = append(names, get(tool, "name").(string))
	}
	slices.Sort(names)
	if !slices.Equal(names, allTools) {
		t.Errorf("inspector tools/list = %v", names)
	}
	r := inspect("--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=/notes/deploy.md")
	if get(r, "structuredContent", "content") != testtree.Files["/notes/deploy.md"] {
		t.Errorf("inspector read_file = %v", r)
	}
	r = inspect("--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=/billing/secret.md")
	if get(r, "isError") != true || secretWords.MatchString(fmt.Sprint(r)) || !strings.Contains(fmt.Sprint(r), "does not exist") {
		t.Errorf("inspector read_file of a hidden file = %v", r)
	}
}

const testTokens = `{"tokens": {
  "admin-token": {"id": "admin", "app": "ops", "admin": true},
  "eng-token": {"id": "eng", "app": "eng-bot", "groups": ["eng"]},
  "ro-token": {"id": "ro", "groups": ["eng"], "read_only": true}}}`

func TestNodeClientStreamableHTTP(t *testing.T) {
	nodeDir(t)
	root := testbin.HostTree(t)
	base := testbin.StartHTTP(t, root, testTokens, "--mcp-path", "/mcp")
	plan := func(token string, calls []call) map[string]any {
		return map[string]any{"transport": "http", "url": base + "/mcp", "token": token, "calls": calls}
	}

	rep := runNode(t, plan("admin-token", []call{
		{"read_file", map[string]any{"path": "/billing/secret.md"}},
		{"write_file", map[string]any{"path": "/notes/from-http.md", "content": "over http\n"}},
		{"stat", map[string]any{"path": "/notes/from-http.md"}},
	}))
	if got := rep.toolNames(); !slices.Equal(got, allTools) {
		t.Errorf("admin tools = %v", got)
	}
	if c := rep.Calls[0]; c.IsError || c.Structured["content"] != testtree.Files["/billing/secret.md"] {
		t.Errorf("admin read_file of the billing file: %+v", c)
	}
	if c := rep.Calls[2]; get(c.Structured, "meta", "createdBy") != "ops" {
		t.Errorf("created_by of a file written with the admin token: %+v", c)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "notes/from-http.md")); string(data) != "over http\n" {
		t.Errorf("host notes/from-http.md = %q", data)
	}

	checkHidden(t, root, runNode(t, plan("eng-token", hiddenCalls)))

	rep = runNode(t, plan("ro-token", nil))
	if got := rep.toolNames(); !slices.Equal(got, readTools) {
		t.Errorf("read-only token tools = %v", got)
	}

	// The inspector's CLI over streamable HTTP with a bearer token.
	if cli := filepath.Join(nodeDir(t), "node_modules", "@modelcontextprotocol", "inspector", "cli", "build", "cli.js"); fileExists(cli) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "node", cli, "--cli", base+"/mcp", "--transport", "http",
			"--header", "Authorization: Bearer eng-token", "--method", "tools/call", "--tool-name", "glob", "--tool-arg", "pattern=**")
		out, err := cmd.Output()
		var r map[string]any
		if err == nil {
			err = json.Unmarshal(out, &r)
		}
		if got := fmt.Sprint(get(r, "structuredContent", "paths")); err != nil || got != "[/notes/auth.md /notes/deploy.md /notes/from-http.md /src/main.go]" {
			t.Errorf("inspector over HTTP, glob ** as eng: %v, %s", err, out)
		}
	}

	for _, tok := range []string{"wrong-token", ""} {
		rep = runNode(t, plan(tok, nil))
		if !strings.Contains(rep.ConnectError, "unauthorized") || rep.Tools != nil {
			t.Errorf("token %q: connect error %q, tools %v", tok, rep.ConnectError, rep.toolNames())
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
