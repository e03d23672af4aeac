// Package mcpserver exposes a semfs tree to agents as Model Context Protocol
// tools (github.com/modelcontextprotocol/go-sdk): read, write and edit
// files, list, glob, grep and find, stat with tags, tag, the tag query,
// hybrid search, related files, remove, move, and a shell that runs a
// script in the virtual shell.
//
// Every tool runs as the session's principal against the tree it is given —
// normally an access layer — so a path the principal may not see does not
// exist through any tool, and a read-only session advertises no mutating
// tool at all. Errors come back as tool errors (IsError) whose text says
// what failed and what to do next.
package mcpserver

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/ops"
	"github.com/semfs/semfs/shell"
)

// Options configure a server.
type Options struct {
	// Principal is who the session acts as; it is put in the context of
	// every call.
	Principal semfs.Principal
	// ReadOnly leaves out every mutating tool.
	ReadOnly bool
	// Limits bound the shell tool (default shell.DefaultLimits).
	Limits shell.Limits
	// MaxRead caps the bytes read_file returns in one call (default 256 KiB).
	MaxRead int
	// Version is reported to clients.
	Version string
}

// Server serves one tree to MCP clients.
type Server struct {
	ops  *ops.Service
	opts Options
	mcp  *mcp.Server
}

// New builds the MCP server for fsys.
func New(fsys semfs.FS, opts Options) *Server {
	if opts.MaxRead <= 0 {
		opts.MaxRead = 256 << 10
	}
	if opts.Limits == (shell.Limits{}) {
		opts.Limits = shell.DefaultLimits
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	s := &Server{opts: opts, ops: &ops.Service{FS: fsys, Principal: opts.Principal, ReadOnly: opts.ReadOnly, Limits: opts.Limits, MaxRead: opts.MaxRead}}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "semfs", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: `semfs is a shared filesystem for agents. Files carry tags (created_by, task, related apps, summary, links).
Find files by meaning or keyword with "search" (contents) and "query" (tags and paths), or with list/glob/grep/find.
Paths are absolute, rooted at "/". Read with read_file; write with write_file or edit_file; tag what you write with "tag" so others can find it.`,
	})
	s.register()
	return s
}

// MCP returns the underlying SDK server (to run it on a transport).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves on the stdio transport until the client disconnects or ctx ends.
func (s *Server) Run(ctx context.Context) error {
	return s.mcp.Run(ctx, &mcp.StdioTransport{})
}

func (s *Server) register() {
	ro := s.opts.ReadOnly
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "read_file", Description: "Read a text file. Optionally a range of lines: offset is the first line (1-based), limit the number of lines. Long files are cut at 256 KiB; ask for a later offset to continue.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, tool(s.ops.ReadFile))
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "list", Description: "List a directory: names, types, sizes and modification times, sorted by name.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, tool(s.ops.List))
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "glob", Description: `Find files whose path (relative to "path", default "/") matches a glob: * and ? within a name, ** across directories (e.g. "**/*.md").`,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, tool(s.ops.Glob))
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "grep", Description: "Search file contents for a regular expression (RE2/Go syntax, like grep -E) below a path; returns path:line:text matches. Uses the index to skip files that cannot match.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, tool(s.ops.Grep))
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "find", Description: "Find files and directories below a path by name glob (like find -name), type (f or d) and depth.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, tool(s.ops.Find))
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "stat", Description: "Describe a path: type, size, times, and its tags (created_by, task, related apps, summary, links, provenance, groups).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, tool(s.ops.Stat))
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "query", Description: "Find files by their tags and paths (not contents): keyword matches on path, created_by, task and related apps rank first, then files related by meaning. Returns metadata only; read a file for its contents.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, tool(s.ops.Query))
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "search", Description: "Hybrid search over file contents (keywords, BM25 and meaning) with optional filters; returns snippets with line numbers and per-signal scores. Pass next_cursor back as cursor for more.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, tool(s.ops.Search))
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "related", Description: "Find likely duplicates and close relatives of a file (by meaning and by shared terms).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, tool(s.ops.Related))
	shellDesc := "Run a bash-syntax script in the virtual shell over the tree (ls cat grep find head tail wc sort uniq cut tr xargs tree stat du echo printf, search, query, tag; pipes, loops, globs). No host programs run. Output is capped."
	if ro {
		shellDesc += " This session is read-only: redirections into files fail."
	}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "shell", Description: shellDesc, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ro}}, tool(s.ops.Shell))
	if !ro {
		mcp.AddTool(s.mcp, &mcp.Tool{Name: "write_file", Description: "Create or replace a file with the given text, creating parent directories. Tag it afterwards so others can find it."}, tool(s.ops.WriteFile))
		mcp.AddTool(s.mcp, &mcp.Tool{Name: "edit_file", Description: "Replace an exact string in a file. old_string must occur exactly once unless replace_all is true; include surrounding lines to make it unique."}, tool(s.ops.EditFile))
		mcp.AddTool(s.mcp, &mcp.Tool{Name: "tag", Description: "Set a file's tags (replacing previous ones): task, related_apps, summary, links (absolute paths), provenance, extra key=value tags."}, tool(s.ops.Tag))
		mcp.AddTool(s.mcp, &mcp.Tool{Name: "remove", Description: "Remove a file, or a directory with recursive=true.", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)}}, tool(s.ops.Remove))
		mcp.AddTool(s.mcp, &mcp.Tool{Name: "move", Description: "Move or rename a file or directory; tags and links follow it."}, tool(s.ops.Move))
	}
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{Name: "file", URITemplate: "semfs://{+path}", MIMEType: "text/plain",
		Description: "A file of the tree: semfs:///notes/a.md"}, s.readResource)
}

func ptr[T any](v T) *T { return &v }

// tool adapts an operation to a typed MCP tool handler: its result becomes
// the structured content, its error a tool error.
func tool[In, Out any](fn func(context.Context, In) (Out, error)) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		out, err := fn(ctx, in)
		return nil, out, err
	}
}

func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	p, ok := strings.CutPrefix(uri, "semfs://")
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	data, err := semfs.ReadFile(semfs.WithPrincipal(ctx, s.opts.Principal), s.ops.FS, p)
	if err != nil {
		if semfs.IsAbsence(err) {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		return nil, ops.Hint(err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: strings.ToValidUTF8(string(data), "\uFFFD")}}}, nil
}
