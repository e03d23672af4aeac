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
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/semfs/semfs"
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
	fsys semfs.FS
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
	s := &Server{fsys: fsys, opts: opts}
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

func (s *Server) ctx(ctx context.Context) context.Context {
	return semfs.WithPrincipal(ctx, s.opts.Principal)
}

// toolErr turns an error into a message an agent can act on. Paths in
// semfs errors are tree paths already; nothing else is added.
func toolErr(err error) error {
	var hint string
	switch semfs.Sentinel(err) {
	case semfs.ErrNotExist:
		hint = "the path does not exist: use list or glob to see what is there"
	case semfs.ErrPermission:
		hint = "your session may not do this here"
	case semfs.ErrReadOnly:
		hint = "this part of the tree is read-only"
	case semfs.ErrIsDir:
		hint = "that is a directory: use list"
	case semfs.ErrNotDir:
		hint = "a component of the path is a file, not a directory"
	case semfs.ErrNotEmpty:
		hint = "the directory is not empty: pass recursive=true to remove it with its contents"
	case semfs.ErrExist:
		hint = "something already exists there"
	case semfs.ErrInvalid:
		hint = `check the path: absolute, "/"-separated, no ".." or empty elements`
	case semfs.ErrQuota:
		hint = "the tree is over its byte quota: remove something first"
	}
	if hint == "" {
		return err
	}
	return fmt.Errorf("%v (%s)", err, hint)
}

func (s *Server) register() {
	ro := s.opts.ReadOnly
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "read_file", Description: "Read a text file. Optionally a range of lines: offset is the first line (1-based), limit the number of lines. Long files are cut at 256 KiB; ask for a later offset to continue.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.readFile)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "list", Description: "List a directory: names, types, sizes and modification times, sorted by name.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.list)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "glob", Description: `Find files whose path (relative to "path", default "/") matches a glob: * and ? within a name, ** across directories (e.g. "**/*.md").`,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.glob)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "grep", Description: "Search file contents for a regular expression (RE2/Go syntax, like grep -E) below a path; returns path:line:text matches. Uses the index to skip files that cannot match.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.grep)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "find", Description: "Find files and directories below a path by name glob (like find -name), type (f or d) and depth.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.find)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "stat", Description: "Describe a path: type, size, times, and its tags (created_by, task, related apps, summary, links, provenance, groups).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.stat)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "query", Description: "Find files by their tags and paths (not contents): keyword matches on path, created_by, task and related apps rank first, then files related by meaning. Returns metadata only; read a file for its contents.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.query)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "search", Description: "Hybrid search over file contents (keywords, BM25 and meaning) with optional filters; returns snippets with line numbers and per-signal scores. Pass next_cursor back as cursor for more.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.search)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "related", Description: "Find likely duplicates and close relatives of a file (by meaning and by shared terms).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.related)
	shellDesc := "Run a bash-syntax script in the virtual shell over the tree (ls cat grep find head tail wc sort uniq cut tr xargs tree stat du echo printf, search, query, tag; pipes, loops, globs). No host programs run. Output is capped."
	if ro {
		shellDesc += " This session is read-only: redirections into files fail."
	}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "shell", Description: shellDesc, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ro}}, s.shell)
	if !ro {
		mcp.AddTool(s.mcp, &mcp.Tool{Name: "write_file", Description: "Create or replace a file with the given text, creating parent directories. Tag it afterwards so others can find it."}, s.writeFile)
		mcp.AddTool(s.mcp, &mcp.Tool{Name: "edit_file", Description: "Replace an exact string in a file. old_string must occur exactly once unless replace_all is true; include surrounding lines to make it unique."}, s.editFile)
		mcp.AddTool(s.mcp, &mcp.Tool{Name: "tag", Description: "Set a file's tags (replacing previous ones): task, related_apps, summary, links (absolute paths), provenance, extra key=value tags."}, s.tag)
		mcp.AddTool(s.mcp, &mcp.Tool{Name: "remove", Description: "Remove a file, or a directory with recursive=true.", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)}}, s.remove)
		mcp.AddTool(s.mcp, &mcp.Tool{Name: "move", Description: "Move or rename a file or directory; tags and links follow it."}, s.move)
	}
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{Name: "file", URITemplate: "semfs://{+path}", MIMEType: "text/plain",
		Description: "A file of the tree: semfs:///notes/a.md"}, s.readResource)
}

func ptr[T any](v T) *T { return &v }

// ReadIn is the input of read_file.
type ReadIn struct {
	Path   string `json:"path" jsonschema:"absolute path of the file, e.g. /notes/todo.md"`
	Offset int    `json:"offset,omitempty" jsonschema:"first line to return (1-based); default 1"`
	Limit  int    `json:"limit,omitempty" jsonschema:"number of lines to return; default all (up to 256 KiB)"`
}

// ReadOut is the result of read_file.
type ReadOut struct {
	Path       string `json:"path"`
	Content    string `json:"content"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line"`
	TotalLines int    `json:"total_lines"`
	Truncated  bool   `json:"truncated"`
}

func (s *Server) readFile(ctx context.Context, _ *mcp.CallToolRequest, in ReadIn) (*mcp.CallToolResult, ReadOut, error) {
	data, err := semfs.ReadFile(s.ctx(ctx), s.fsys, in.Path)
	if err != nil {
		return nil, ReadOut{}, toolErr(err)
	}
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return nil, ReadOut{}, fmt.Errorf("%s is a binary file (%d bytes); use stat to see what it is", in.Path, len(data))
	}
	text := string(data)
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	lines := strings.SplitAfter(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	out := ReadOut{Path: in.Path, TotalLines: len(lines)}
	start := max(in.Offset, 1)
	if start > len(lines) && len(lines) > 0 {
		return nil, out, fmt.Errorf("offset %d is past the end: %s has %d lines", in.Offset, in.Path, len(lines))
	}
	end := len(lines)
	if in.Limit > 0 {
		end = min(end, start-1+in.Limit)
	}
	var b strings.Builder
	out.StartLine = start
	out.EndLine = start - 1
	for i := start - 1; i < end; i++ {
		if b.Len()+len(lines[i]) > s.opts.MaxRead {
			out.Truncated = true
			break
		}
		b.WriteString(lines[i])
		out.EndLine = i + 1
	}
	out.Content = b.String()
	return nil, out, nil
}

// Entry is one directory entry.
type Entry struct {
	Name    string    `json:"name"`
	Type    string    `json:"type"` // "file" or "dir"
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
}

// PathIn names one path.
type PathIn struct {
	Path string `json:"path" jsonschema:"absolute path, e.g. /notes"`
}

// ListOut is the result of list.
type ListOut struct {
	Path    string  `json:"path"`
	Entries []Entry `json:"entries"`
}

func (s *Server) list(ctx context.Context, _ *mcp.CallToolRequest, in PathIn) (*mcp.CallToolResult, ListOut, error) {
	if in.Path == "" {
		in.Path = "/"
	}
	entries, err := semfs.ReadDir(s.ctx(ctx), s.fsys, in.Path)
	if err != nil {
		return nil, ListOut{}, toolErr(err)
	}
	out := ListOut{Path: in.Path, Entries: []Entry{}}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue // vanished meanwhile
		}
		typ := "file"
		if e.IsDir() {
			typ = "dir"
		}
		out.Entries = append(out.Entries, Entry{Name: e.Name(), Type: typ, Size: info.Size(), ModTime: info.ModTime()})
	}
	return nil, out, nil
}

// GlobIn is the input of glob.
type GlobIn struct {
	Pattern string `json:"pattern" jsonschema:"glob relative to path, e.g. **/*.md"`
	Path    string `json:"path,omitempty" jsonschema:"directory to search below; default /"`
}

// PathsOut is a list of paths.
type PathsOut struct {
	Paths     []string `json:"paths"`
	Truncated bool     `json:"truncated,omitempty"`
}

const maxPaths = 2000

func (s *Server) glob(ctx context.Context, _ *mcp.CallToolRequest, in GlobIn) (*mcp.CallToolResult, PathsOut, error) {
	if in.Path == "" {
		in.Path = "/"
	}
	paths, err := semfs.Glob(s.ctx(ctx), s.fsys, in.Path, in.Pattern)
	if err != nil {
		return nil, PathsOut{}, toolErr(err)
	}
	out := PathsOut{Paths: paths}
	if out.Paths == nil {
		out.Paths = []string{}
	}
	if len(out.Paths) > maxPaths {
		out.Paths, out.Truncated = out.Paths[:maxPaths], true
	}
	return nil, out, nil
}

// StatOut is the result of stat.
type StatOut struct {
	Path    string      `json:"path"`
	Type    string      `json:"type"`
	Size    int64       `json:"size"`
	ModTime time.Time   `json:"mod_time"`
	Meta    *semfs.Meta `json:"meta,omitempty"`
}

func (s *Server) stat(ctx context.Context, _ *mcp.CallToolRequest, in PathIn) (*mcp.CallToolResult, StatOut, error) {
	c := s.ctx(ctx)
	info, err := semfs.Stat(c, s.fsys, in.Path)
	if err != nil {
		return nil, StatOut{}, toolErr(err)
	}
	out := StatOut{Path: in.Path, Type: "file", Size: info.Size(), ModTime: info.ModTime()}
	if info.IsDir() {
		out.Type = "dir"
		return nil, out, nil
	}
	if _, ok := s.fsys.(semfs.MetaFS); ok {
		m, err := semfs.GetMeta(c, s.fsys, in.Path)
		if err != nil && !errors.Is(err, semfs.ErrNotExist) {
			return nil, out, toolErr(err)
		}
		if err == nil {
			out.Meta = &m
		}
	}
	return nil, out, nil
}

func notImplemented(what string) error {
	return fmt.Errorf("this tree has no %s (it is not indexed); use grep or glob instead", what)
}

// QueryIn is the input of query.
type QueryIn struct {
	Text  string `json:"text" jsonschema:"what you are looking for, e.g. files about the auth bug"`
	Limit int    `json:"limit,omitempty" jsonschema:"maximum results; default 20"`
}

// QueryOut is the result of query.
type QueryOut struct {
	Results []semfs.QueryResult `json:"results"`
}

func (s *Server) query(ctx context.Context, _ *mcp.CallToolRequest, in QueryIn) (*mcp.CallToolResult, QueryOut, error) {
	q, ok := s.fsys.(semfs.QueryFS)
	if !ok {
		return nil, QueryOut{}, notImplemented("tag query")
	}
	if in.Limit <= 0 {
		in.Limit = 20
	}
	res, err := q.Query(s.ctx(ctx), in.Text, in.Limit)
	if err != nil {
		return nil, QueryOut{}, toolErr(err)
	}
	if res == nil {
		res = []semfs.QueryResult{}
	}
	return nil, QueryOut{Results: res}, nil
}

// SearchIn is the input of search.
type SearchIn struct {
	Query     string            `json:"query" jsonschema:"words or a question; inline filters work too: task:X created_by:Y path:/dir type:md tag:k=v"`
	Path      string            `json:"path,omitempty" jsonschema:"only files below this directory"`
	Task      string            `json:"task,omitempty"`
	CreatedBy string            `json:"created_by,omitempty"`
	Type      string            `json:"type,omitempty" jsonschema:"file extension without dot, e.g. go"`
	Tags      map[string]string `json:"tags,omitempty"`
	Limit     int               `json:"limit,omitempty" jsonschema:"page size; default 10"`
	Cursor    string            `json:"cursor,omitempty" jsonschema:"next_cursor of a previous call, for the next page"`
}

// SearchOut is the result of search.
type SearchOut struct {
	Hits       []semfs.SearchHit `json:"hits"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

func (s *Server) search(ctx context.Context, _ *mcp.CallToolRequest, in SearchIn) (*mcp.CallToolResult, SearchOut, error) {
	sf, ok := s.fsys.(semfs.SearchFS)
	if !ok {
		return nil, SearchOut{}, notImplemented("content search")
	}
	if in.Limit <= 0 {
		in.Limit = 10
	}
	out := SearchOut{Hits: []semfs.SearchHit{}}
	next, err := sf.Search(s.ctx(ctx), semfs.SearchRequest{Query: in.Query, PathPrefix: in.Path, Task: in.Task,
		CreatedBy: in.CreatedBy, Type: in.Type, Tags: in.Tags, Limit: in.Limit, Cursor: in.Cursor},
		func(h semfs.SearchHit) error { out.Hits = append(out.Hits, h); return nil })
	if err != nil {
		return nil, out, toolErr(err)
	}
	out.NextCursor = next
	return nil, out, nil
}

// RelatedIn is the input of related.
type RelatedIn struct {
	Path  string `json:"path" jsonschema:"the file to find relatives of"`
	Limit int    `json:"limit,omitempty"`
}

// RelatedOut is the result of related.
type RelatedOut struct {
	Candidates []semfs.Candidate `json:"candidates"`
}

func (s *Server) related(ctx context.Context, _ *mcp.CallToolRequest, in RelatedIn) (*mcp.CallToolResult, RelatedOut, error) {
	rf, ok := s.fsys.(semfs.RelatedFS)
	if !ok {
		return nil, RelatedOut{}, notImplemented("related-file search")
	}
	c, err := rf.Related(s.ctx(ctx), in.Path, in.Limit)
	if err != nil {
		return nil, RelatedOut{}, toolErr(err)
	}
	if c == nil {
		c = []semfs.Candidate{}
	}
	return nil, RelatedOut{Candidates: c}, nil
}

func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	p, ok := strings.CutPrefix(uri, "semfs://")
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	data, err := semfs.ReadFile(s.ctx(ctx), s.fsys, p)
	if err != nil {
		if semfs.IsAbsence(err) {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		return nil, toolErr(err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: strings.ToValidUTF8(string(data), "\uFFFD")}}}, nil
}
