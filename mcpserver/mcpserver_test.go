package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/internal/testtree"
	"github.com/semfs/semfs/ops"
)

// tree is the shared test stack under an access layer that makes /src
// read-only.
func tree(t *testing.T) semfs.FS {
	return access.New(testtree.New(t), access.Policy{Default: access.Write, Rules: []access.Rule{{Path: "/src", Access: access.Read}}})
}

func connect(t *testing.T, fsys semfs.FS, opts Options) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv := New(fsys, opts)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and decodes its structured result into out; it returns
// the error text when the call is a tool error.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	if res.IsError {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	if out != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: decoding %s: %v", name, raw, err)
		}
	}
	return ""
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("tool %s lacks a description or input schema", tool.Name)
		}
	}
	sort.Strings(names)
	return names
}

func TestToolsListedAndReadOnlyHidesWriters(t *testing.T) {
	fsys := tree(t)
	all := toolNames(t, connect(t, fsys, Options{Principal: semfs.Principal{ID: "a"}}))
	want := []string{"edit_file", "find", "glob", "grep", "list", "move", "query", "read_file", "related", "remove", "search", "shell", "stat", "tag", "write_file"}
	if !slices.Equal(all, want) {
		t.Fatalf("tools = %v\nwant %v", all, want)
	}
	ro := toolNames(t, connect(t, fsys, Options{Principal: semfs.Principal{ID: "a"}, ReadOnly: true}))
	for _, w := range []string{"write_file", "edit_file", "tag", "remove", "move"} {
		if slices.Contains(ro, w) {
			t.Errorf("read-only session advertises %s", w)
		}
	}
	cs := connect(t, fsys, Options{Principal: semfs.Principal{ID: "a"}, ReadOnly: true})
	var sh ops.ShellOut
	call(t, cs, "shell", map[string]any{"script": "echo x > /notes/new.md"}, &sh)
	if sh.ExitCode == 0 || !strings.Contains(strings.ToLower(sh.Stderr), "read-only") {
		t.Fatalf("read-only shell redirection: %+v", sh)
	}
}

func TestEveryTool(t *testing.T) {
	cs := connect(t, tree(t), Options{Principal: semfs.Principal{ID: "agent", App: "agent-1"}})

	var rd ops.ReadOut
	if e := call(t, cs, "read_file", map[string]any{"path": "/notes/auth.md", "offset": 3, "limit": 1}, &rd); e != "" {
		t.Fatal(e)
	}
	if rd.Content != "Login fails when the token expires.\n" || rd.StartLine != 3 || rd.EndLine != 3 || rd.TotalLines != 4 {
		t.Fatalf("read_file range = %+v", rd)
	}
	var ls ops.ListOut
	call(t, cs, "list", map[string]any{"path": "/notes"}, &ls)
	if len(ls.Entries) != 2 || ls.Entries[0].Name != "auth.md" || ls.Entries[0].Type != "file" {
		t.Fatalf("list = %+v", ls)
	}
	var g ops.PathsOut
	call(t, cs, "glob", map[string]any{"pattern": "**/*.md"}, &g)
	if !slices.Equal(g.Paths, []string{"/notes/auth.md", "/notes/deploy.md"}) {
		t.Fatalf("glob = %v (the billing file is hidden from this session)", g.Paths)
	}
	var gr ops.GrepOut
	call(t, cs, "grep", map[string]any{"pattern": "token", "path": "/", "ignore_case": true}, &gr)
	if len(gr.Matches) != 2 || gr.Matches[0].Path != "/notes/auth.md" || gr.Matches[0].Line != 3 {
		t.Fatalf("grep = %+v", gr)
	}
	var fd ops.PathsOut
	call(t, cs, "find", map[string]any{"path": "/", "name": "*.go", "type": "f"}, &fd)
	if !slices.Equal(fd.Paths, []string{"/src/main.go"}) {
		t.Fatalf("find = %v", fd.Paths)
	}
	var st ops.StatOut
	call(t, cs, "stat", map[string]any{"path": "/notes/auth.md"}, &st)
	if st.Meta == nil || st.Meta.Task != "fix the auth bug" || st.Meta.CreatedBy != "setup" {
		t.Fatalf("stat = %+v", st)
	}
	var q ops.QueryOut
	call(t, cs, "query", map[string]any{"text": "auth"}, &q)
	if len(q.Results) == 0 || q.Results[0].Path != "/notes/auth.md" {
		t.Fatalf("query = %+v", q)
	}
	var se ops.SearchOut
	call(t, cs, "search", map[string]any{"query": "pipeline"}, &se)
	if len(se.Hits) == 0 || se.Hits[0].Path != "/notes/deploy.md" {
		t.Fatalf("search = %+v", se)
	}
	var rel ops.RelatedOut
	if e := call(t, cs, "related", map[string]any{"path": "/notes/auth.md"}, &rel); e != "" {
		t.Fatalf("related: %s", e)
	}

	var w ops.WriteOut
	if e := call(t, cs, "write_file", map[string]any{"path": "/work/plan.md", "content": "step one\nstep two\n"}, &w); e != "" {
		t.Fatal(e)
	}
	call(t, cs, "stat", map[string]any{"path": "/work/plan.md"}, &st)
	if st.Meta == nil || st.Meta.CreatedBy != "agent-1" {
		t.Fatalf("created_by of an agent's write = %+v", st.Meta)
	}
	if e := call(t, cs, "edit_file", map[string]any{"path": "/work/plan.md", "old_string": "step", "new_string": "stage"}, nil); !strings.Contains(e, "occurs 2 times") {
		t.Fatalf("ambiguous edit: %q", e)
	}
	call(t, cs, "edit_file", map[string]any{"path": "/work/plan.md", "old_string": "step two", "new_string": "step 2"}, &w)
	call(t, cs, "read_file", map[string]any{"path": "/work/plan.md"}, &rd)
	if rd.Content != "step one\nstep 2\n" {
		t.Fatalf("after edit: %q", rd.Content)
	}
	var ok ops.OKOut
	call(t, cs, "tag", map[string]any{"path": "/work/plan.md", "task": "release", "related_apps": []string{"ci"}}, &ok)
	call(t, cs, "stat", map[string]any{"path": "/work/plan.md"}, &st)
	if st.Meta.Task != "release" || !slices.Equal(st.Meta.RelatedApps, []string{"ci"}) {
		t.Fatalf("after tag: %+v", st.Meta)
	}
	call(t, cs, "move", map[string]any{"from": "/work/plan.md", "to": "/work/done.md"}, &ok)
	call(t, cs, "stat", map[string]any{"path": "/work/done.md"}, &st)
	if st.Meta == nil || st.Meta.Task != "release" {
		t.Fatalf("tags did not follow the move: %+v", st.Meta)
	}
	if e := call(t, cs, "remove", map[string]any{"path": "/work"}, nil); !strings.Contains(e, "recursive=true") {
		t.Fatalf("remove of a non-empty dir: %q", e)
	}
	call(t, cs, "remove", map[string]any{"path": "/work", "recursive": true}, &ok)
	var sh ops.ShellOut
	call(t, cs, "shell", map[string]any{"script": "ls / | wc -l; cat /nope"}, &sh)
	if sh.Stdout != "2\n" || sh.ExitCode != 1 || !strings.Contains(sh.Stderr, "No such file") {
		t.Fatalf("shell = %+v", sh)
	}
}

func TestErrorsAreToolErrorsAndHideNothing(t *testing.T) {
	cs := connect(t, tree(t), Options{Principal: semfs.Principal{ID: "agent"}})
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_file", map[string]any{"path": "/missing.md"}, "does not exist"},
		{"read_file", map[string]any{"path": "/billing/secret.md"}, "does not exist"}, // hidden: absent, not refused
		{"read_file", map[string]any{"path": "/../etc/passwd"}, "invalid"},
		{"write_file", map[string]any{"path": "/src/x.go", "content": "x"}, "permission"},
		{"list", map[string]any{"path": "/notes/auth.md"}, "not a directory"},
		{"find", map[string]any{"type": "x"}, `type must be "f"`},
		{"glob", map[string]any{"pattern": "[", "path": "/"}, "malformed pattern"},
		{"edit_file", map[string]any{"path": "/notes/auth.md", "old_string": "absent text", "new_string": "x"}, "not found"},
	} {
		e := call(t, cs, c.tool, c.args, nil)
		if !strings.Contains(strings.ToLower(e), c.want) {
			t.Errorf("%s %v: error %q, want it to mention %q", c.tool, c.args, e, c.want)
		}
		if asked, _ := json.Marshal(c.args); !strings.Contains(string(asked), "billing") && (strings.Contains(e, "secret") || strings.Contains(e, "billing")) {
			t.Errorf("%s: error reveals a hidden name: %q", c.tool, e)
		}
	}
	// Nothing the session may not see leaks through search, query, grep or shell.
	var se ops.SearchOut
	call(t, cs, "search", map[string]any{"query": "stripe invoices"}, &se)
	var q ops.QueryOut
	call(t, cs, "query", map[string]any{"text": "invoices"}, &q)
	var gr ops.GrepOut
	call(t, cs, "grep", map[string]any{"pattern": "Stripe"}, &gr)
	var sh ops.ShellOut
	call(t, cs, "shell", map[string]any{"script": "ls -R /; grep -r Stripe /"}, &sh)
	if len(se.Hits)+len(q.Results)+len(gr.Matches) != 0 || strings.Contains(sh.Stdout+sh.Stderr, "secret") {
		t.Fatalf("hidden file leaked: search %v query %v grep %v shell %q", se.Hits, q.Results, gr.Matches, sh.Stdout)
	}
	// The billing group sees it.
	bill := connect(t, tree(t), Options{Principal: semfs.Principal{ID: "b", Groups: []string{"billing"}}})
	var rd ops.ReadOut
	if e := call(t, bill, "read_file", map[string]any{"path": "/billing/secret.md"}, &rd); e != "" || !strings.Contains(rd.Content, "Stripe") {
		t.Fatalf("billing session: %q %+v", e, rd)
	}
}
