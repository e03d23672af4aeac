package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/shell"
)

// run runs script in a fresh virtual-shell session as the principal, with
// env holding the script's variables (so no argument is ever parsed as
// shell syntax).
func (s *Server) run(ctx context.Context, script string, env ...string) (stdout, stderr string, code int, err error) {
	sess := shell.New(s.fsys, shell.Options{Principal: s.opts.Principal, Limits: s.opts.Limits, ReadOnly: s.opts.ReadOnly, Env: env})
	var out, errb bytes.Buffer
	code, err = sess.Run(s.ctx(ctx), script, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code, err
}

// GrepIn is the input of grep.
type GrepIn struct {
	Pattern    string `json:"pattern" jsonschema:"regular expression (RE2/Go syntax); with fixed=true a literal string"`
	Path       string `json:"path,omitempty" jsonschema:"file or directory to search; default /"`
	IgnoreCase bool   `json:"ignore_case,omitempty"`
	Fixed      bool   `json:"fixed,omitempty" jsonschema:"treat pattern as a literal string"`
	FilesOnly  bool   `json:"files_only,omitempty" jsonschema:"return only the names of matching files"`
	Include    string `json:"include,omitempty" jsonschema:"only files whose name matches this glob, e.g. *.go"`
	MaxCount   int    `json:"max_count,omitempty" jsonschema:"stop after this many matches per file"`
}

// Match is one grep match.
type Match struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
	Text string `json:"text,omitempty"`
}

// GrepOut is the result of grep.
type GrepOut struct {
	Matches   []Match `json:"matches"`
	Truncated bool    `json:"truncated,omitempty"`
}

func (s *Server) grep(ctx context.Context, _ *mcp.CallToolRequest, in GrepIn) (*mcp.CallToolResult, GrepOut, error) {
	if in.Path == "" {
		in.Path = "/"
	}
	flags := "-rnH"
	switch {
	case in.FilesOnly:
		flags = "-rl"
	}
	if in.Fixed {
		flags += "F"
	} else {
		flags += "E"
	}
	if in.IgnoreCase {
		flags += "i"
	}
	script := "grep " + flags
	if in.MaxCount > 0 {
		script += " -m " + strconv.Itoa(in.MaxCount)
	}
	if in.Include != "" {
		script += ` --include="$INC"`
	}
	script += ` -e "$PAT" -- "$DIR"`
	stdout, stderr, code, err := s.run(ctx, script, "PAT="+in.Pattern, "DIR="+in.Path, "INC="+in.Include)
	if err != nil {
		return nil, GrepOut{}, err
	}
	if code > 1 {
		return nil, GrepOut{}, fmt.Errorf("grep failed: %s", strings.TrimSpace(stderr))
	}
	out := GrepOut{Matches: []Match{}}
	for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		if line == "" {
			continue
		}
		if len(out.Matches) == maxPaths {
			out.Truncated = true
			break
		}
		if in.FilesOnly {
			out.Matches = append(out.Matches, Match{Path: line})
			continue
		}
		p, rest, ok1 := strings.Cut(line, ":")
		n, text, ok2 := strings.Cut(rest, ":")
		ln, err := strconv.Atoi(n)
		if !ok1 || !ok2 || err != nil {
			continue // "Binary file ... matches" and the like
		}
		out.Matches = append(out.Matches, Match{Path: p, Line: ln, Text: text})
	}
	return nil, out, nil
}

// FindIn is the input of find.
type FindIn struct {
	Path     string `json:"path,omitempty" jsonschema:"directory to search below; default /"`
	Name     string `json:"name,omitempty" jsonschema:"glob on the base name, e.g. *.md"`
	Type     string `json:"type,omitempty" jsonschema:"f for files, d for directories"`
	MaxDepth int    `json:"max_depth,omitempty"`
}

func (s *Server) find(ctx context.Context, _ *mcp.CallToolRequest, in FindIn) (*mcp.CallToolResult, PathsOut, error) {
	if in.Path == "" {
		in.Path = "/"
	}
	script := `find "$DIR"`
	if in.MaxDepth > 0 {
		script += " -maxdepth " + strconv.Itoa(in.MaxDepth)
	}
	if in.Name != "" {
		script += ` -name "$NAME"`
	}
	switch in.Type {
	case "":
	case "f", "d":
		script += " -type " + in.Type
	default:
		return nil, PathsOut{}, fmt.Errorf(`type must be "f" (files) or "d" (directories), not %q`, in.Type)
	}
	stdout, stderr, code, err := s.run(ctx, script, "DIR="+in.Path, "NAME="+in.Name)
	if err != nil {
		return nil, PathsOut{}, err
	}
	if code != 0 {
		return nil, PathsOut{}, fmt.Errorf("find failed: %s", strings.TrimSpace(stderr))
	}
	out := PathsOut{Paths: []string{}}
	for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		if line == "" {
			continue
		}
		if len(out.Paths) == maxPaths {
			out.Truncated = true
			break
		}
		out.Paths = append(out.Paths, line)
	}
	return nil, out, nil
}

// ShellIn is the input of shell.
type ShellIn struct {
	Script string `json:"script" jsonschema:"bash-syntax script, e.g. cd /notes && grep -rl TODO . | head"`
}

// ShellOut is the result of shell.
type ShellOut struct {
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	ExitCode int    `json:"exit_code"`
}

func (s *Server) shell(ctx context.Context, _ *mcp.CallToolRequest, in ShellIn) (*mcp.CallToolResult, ShellOut, error) {
	stdout, stderr, code, err := s.run(ctx, in.Script)
	if err != nil {
		return nil, ShellOut{}, err
	}
	return nil, ShellOut{Stdout: stdout, Stderr: stderr, ExitCode: code}, nil
}

// WriteIn is the input of write_file.
type WriteIn struct {
	Path    string `json:"path" jsonschema:"absolute path of the file to create or replace"`
	Content string `json:"content" jsonschema:"the file's complete new text"`
}

// WriteOut is the result of write_file and edit_file.
type WriteOut struct {
	Path         string `json:"path"`
	Bytes        int    `json:"bytes"`
	Replacements int    `json:"replacements,omitempty"`
}

func (s *Server) writeFile(ctx context.Context, _ *mcp.CallToolRequest, in WriteIn) (*mcp.CallToolResult, WriteOut, error) {
	if err := semfs.WriteFile(s.ctx(ctx), s.fsys, in.Path, []byte(in.Content), 0o644); err != nil {
		return nil, WriteOut{}, toolErr(err)
	}
	return nil, WriteOut{Path: in.Path, Bytes: len(in.Content)}, nil
}

// EditIn is the input of edit_file.
type EditIn struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string" jsonschema:"exact text to replace, including whitespace"`
	NewString  string `json:"new_string" jsonschema:"replacement text"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence instead of exactly one"`
}

func (s *Server) editFile(ctx context.Context, _ *mcp.CallToolRequest, in EditIn) (*mcp.CallToolResult, WriteOut, error) {
	c := s.ctx(ctx)
	if in.OldString == "" {
		return nil, WriteOut{}, fmt.Errorf("old_string is empty; to create or replace a whole file use write_file")
	}
	data, err := semfs.ReadFile(c, s.fsys, in.Path)
	if err != nil {
		return nil, WriteOut{}, toolErr(err)
	}
	text := string(data)
	n := strings.Count(text, in.OldString)
	switch {
	case n == 0:
		return nil, WriteOut{}, fmt.Errorf("old_string was not found in %s; read the file and copy the text exactly, whitespace included", in.Path)
	case n > 1 && !in.ReplaceAll:
		return nil, WriteOut{}, fmt.Errorf("old_string occurs %d times in %s; include more surrounding text to make it unique, or set replace_all", n, in.Path)
	}
	if in.ReplaceAll {
		text = strings.ReplaceAll(text, in.OldString, in.NewString)
	} else {
		text = strings.Replace(text, in.OldString, in.NewString, 1)
	}
	if err := semfs.WriteFile(c, s.fsys, in.Path, []byte(text), 0o644); err != nil {
		return nil, WriteOut{}, toolErr(err)
	}
	return nil, WriteOut{Path: in.Path, Bytes: len(text), Replacements: n}, nil
}

// TagIn is the input of tag.
type TagIn struct {
	Path        string            `json:"path"`
	Task        string            `json:"task,omitempty" jsonschema:"the task this file belongs to"`
	RelatedApps []string          `json:"related_apps,omitempty"`
	Summary     string            `json:"summary,omitempty"`
	Links       []string          `json:"links,omitempty" jsonschema:"absolute paths of related files"`
	Provenance  string            `json:"provenance,omitempty" jsonschema:"where the content came from"`
	Extra       map[string]string `json:"extra,omitempty" jsonschema:"free key=value tags"`
}

// OKOut acknowledges a change.
type OKOut struct {
	Path string `json:"path"`
	To   string `json:"to,omitempty"`
	OK   bool   `json:"ok"`
}

func (s *Server) tag(ctx context.Context, _ *mcp.CallToolRequest, in TagIn) (*mcp.CallToolResult, OKOut, error) {
	c := s.ctx(ctx)
	// Visibility is not an agent's to change: keep the file's groups.
	var keep semfs.Tags
	if m, err := semfs.GetMeta(c, s.fsys, in.Path); err == nil {
		keep = m.Tags
	} else {
		return nil, OKOut{}, toolErr(err)
	}
	t := semfs.Tags{Task: in.Task, RelatedApps: in.RelatedApps, Summary: in.Summary, Links: in.Links,
		Provenance: in.Provenance, Extra: in.Extra, Groups: keep.Groups, Public: keep.Public}
	if err := semfs.SetTags(c, s.fsys, in.Path, t); err != nil {
		return nil, OKOut{}, toolErr(err)
	}
	return nil, OKOut{Path: in.Path, OK: true}, nil
}

// RemoveIn is the input of remove.
type RemoveIn struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"remove a directory and everything in it"`
}

func (s *Server) remove(ctx context.Context, _ *mcp.CallToolRequest, in RemoveIn) (*mcp.CallToolResult, OKOut, error) {
	c := s.ctx(ctx)
	var err error
	if in.Recursive {
		if _, serr := semfs.Stat(c, s.fsys, in.Path); serr != nil {
			return nil, OKOut{}, toolErr(serr)
		}
		err = semfs.RemoveAll(c, s.fsys, in.Path)
	} else {
		err = semfs.Remove(c, s.fsys, in.Path)
	}
	if err != nil {
		return nil, OKOut{}, toolErr(err)
	}
	return nil, OKOut{Path: in.Path, OK: true}, nil
}

// MoveIn is the input of move.
type MoveIn struct {
	From string `json:"from"`
	To   string `json:"to"`
}

func (s *Server) move(ctx context.Context, _ *mcp.CallToolRequest, in MoveIn) (*mcp.CallToolResult, OKOut, error) {
	if err := semfs.Rename(s.ctx(ctx), s.fsys, in.From, in.To); err != nil {
		return nil, OKOut{}, toolErr(err)
	}
	return nil, OKOut{Path: in.From, To: in.To, OK: true}, nil
}
