// Package ops is the one implementation of the operations every front end
// offers on a tree — read a file or a range of its lines, write, edit, list,
// glob, grep, find, stat with tags, tag, the tag query, search, related
// files, remove, move, and running a script in the virtual shell — with
// their JSON-ready inputs and outputs. The MCP server and the HTTP API are
// thin wrappers over a Service; the access policy is enforced by the tree
// the Service is given.
package ops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/shell"
)

// Service runs operations on one tree as one principal.
type Service struct {
	FS        semfs.FS
	Principal semfs.Principal
	// ReadOnly refuses every mutating operation (and shell redirections).
	ReadOnly bool
	// Limits bound the shell operation (default shell.DefaultLimits).
	Limits shell.Limits
	// MaxRead caps the bytes Read returns in one call (default 256 KiB).
	MaxRead int
}

func (s *Service) ctx(ctx context.Context) context.Context {
	return semfs.WithPrincipal(ctx, s.Principal)
}

func (s *Service) maxRead() int {
	if s.MaxRead <= 0 {
		return 256 << 10
	}
	return s.MaxRead
}

func (s *Service) limits() shell.Limits {
	if s.Limits == (shell.Limits{}) {
		return shell.DefaultLimits
	}
	return s.Limits
}

// ErrReadOnlySession is returned by mutating operations of a read-only
// service.
var ErrReadOnlySession = fmt.Errorf("%w: this session is read-only", semfs.ErrReadOnly)

func (s *Service) writable() error {
	if s.ReadOnly {
		return ErrReadOnlySession
	}
	return nil
}

// Hint wraps err with a sentence telling an agent or a person what to do
// next; errors.Is still finds the sentinel.
func Hint(err error) error {
	var hint string
	switch semfs.Sentinel(err) {
	case semfs.ErrNotExist:
		hint = "the path does not exist: list or glob shows what is there"
	case semfs.ErrPermission:
		hint = "this session may not do this here"
	case semfs.ErrReadOnly:
		hint = "this part of the tree is read-only"
	case semfs.ErrIsDir:
		hint = "that is a directory: list it"
	case semfs.ErrNotDir:
		hint = "a component of the path is a file, not a directory"
	case semfs.ErrNotEmpty:
		hint = "the directory is not empty: remove it with recursive=true"
	case semfs.ErrExist:
		hint = "something already exists there"
	case semfs.ErrInvalid:
		hint = `check the path: absolute, "/"-separated, no ".." or empty elements`
	case semfs.ErrQuota:
		hint = "the tree is over its byte quota: remove something first"
	}
	var h *hinted
	if hint == "" || errors.As(err, &h) {
		return err // nothing to add, or hinted already
	}
	return &hinted{err, hint}
}

// hinted is an error with a hint appended to its text.
type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() + " (" + h.hint + ")" }
func (h *hinted) Unwrap() error { return h.err }

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

func (s *Service) ReadFile(ctx context.Context, in ReadIn) (ReadOut, error) {
	data, err := semfs.ReadFile(s.ctx(ctx), s.FS, in.Path)
	if err != nil {
		return ReadOut{}, Hint(err)
	}
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return ReadOut{}, fmt.Errorf("%s is a binary file (%d bytes); use stat to see what it is", in.Path, len(data))
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
		return out, fmt.Errorf("offset %d is past the end: %s has %d lines", in.Offset, in.Path, len(lines))
	}
	end := len(lines)
	if in.Limit > 0 {
		end = min(end, start-1+in.Limit)
	}
	var b strings.Builder
	out.StartLine = start
	out.EndLine = start - 1
	for i := start - 1; i < end; i++ {
		if b.Len()+len(lines[i]) > s.maxRead() {
			out.Truncated = true
			break
		}
		b.WriteString(lines[i])
		out.EndLine = i + 1
	}
	out.Content = b.String()
	return out, nil
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

func (s *Service) List(ctx context.Context, in PathIn) (ListOut, error) {
	if in.Path == "" {
		in.Path = "/"
	}
	entries, err := semfs.ReadDir(s.ctx(ctx), s.FS, in.Path)
	if err != nil {
		return ListOut{}, Hint(err)
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
	return out, nil
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

func (s *Service) Glob(ctx context.Context, in GlobIn) (PathsOut, error) {
	if in.Path == "" {
		in.Path = "/"
	}
	paths, err := semfs.Glob(s.ctx(ctx), s.FS, in.Path, in.Pattern)
	if err != nil {
		return PathsOut{}, Hint(err)
	}
	out := PathsOut{Paths: paths}
	if out.Paths == nil {
		out.Paths = []string{}
	}
	if len(out.Paths) > maxPaths {
		out.Paths, out.Truncated = out.Paths[:maxPaths], true
	}
	return out, nil
}

// StatOut is the result of stat.
type StatOut struct {
	Path    string      `json:"path"`
	Type    string      `json:"type"`
	Size    int64       `json:"size"`
	ModTime time.Time   `json:"mod_time"`
	Meta    *semfs.Meta `json:"meta,omitempty"`
}

func (s *Service) Stat(ctx context.Context, in PathIn) (StatOut, error) {
	c := s.ctx(ctx)
	info, err := semfs.Stat(c, s.FS, in.Path)
	if err != nil {
		return StatOut{}, Hint(err)
	}
	out := StatOut{Path: in.Path, Type: "file", Size: info.Size(), ModTime: info.ModTime()}
	if info.IsDir() {
		out.Type = "dir"
		return out, nil
	}
	if _, ok := s.FS.(semfs.MetaFS); ok {
		m, err := semfs.GetMeta(c, s.FS, in.Path)
		if err != nil && !errors.Is(err, semfs.ErrNotExist) {
			return out, Hint(err)
		}
		if err == nil {
			out.Meta = &m
		}
	}
	return out, nil
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

func (s *Service) Query(ctx context.Context, in QueryIn) (QueryOut, error) {
	q, ok := s.FS.(semfs.QueryFS)
	if !ok {
		return QueryOut{}, notImplemented("tag query")
	}
	if in.Limit <= 0 {
		in.Limit = 20
	}
	res, err := q.Query(s.ctx(ctx), in.Text, in.Limit)
	if err != nil {
		return QueryOut{}, Hint(err)
	}
	if res == nil {
		res = []semfs.QueryResult{}
	}
	return QueryOut{Results: res}, nil
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

func (s *Service) Search(ctx context.Context, in SearchIn) (SearchOut, error) {
	sf, ok := s.FS.(semfs.SearchFS)
	if !ok {
		return SearchOut{}, notImplemented("content search")
	}
	if in.Limit <= 0 {
		in.Limit = 10
	}
	out := SearchOut{Hits: []semfs.SearchHit{}}
	next, err := sf.Search(s.ctx(ctx), semfs.SearchRequest{Query: in.Query, PathPrefix: in.Path, Task: in.Task,
		CreatedBy: in.CreatedBy, Type: in.Type, Tags: in.Tags, Limit: in.Limit, Cursor: in.Cursor},
		func(h semfs.SearchHit) error { out.Hits = append(out.Hits, h); return nil })
	if err != nil {
		return out, Hint(err)
	}
	out.NextCursor = next
	return out, nil
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

func (s *Service) Related(ctx context.Context, in RelatedIn) (RelatedOut, error) {
	rf, ok := s.FS.(semfs.RelatedFS)
	if !ok {
		return RelatedOut{}, notImplemented("related-file search")
	}
	c, err := rf.Related(s.ctx(ctx), in.Path, in.Limit)
	if err != nil {
		return RelatedOut{}, Hint(err)
	}
	if c == nil {
		c = []semfs.Candidate{}
	}
	return RelatedOut{Candidates: c}, nil
}

// run runs script in a fresh virtual-shell session as the principal, with
// env holding the script's variables (so no argument is ever parsed as
// shell syntax).
func (s *Service) run(ctx context.Context, script string, env ...string) (stdout, stderr string, code int, err error) {
	sess := shell.New(s.FS, shell.Options{Principal: s.Principal, Limits: s.limits(), ReadOnly: s.ReadOnly, Env: env})
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

func (s *Service) Grep(ctx context.Context, in GrepIn) (GrepOut, error) {
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
		return GrepOut{}, err
	}
	if code > 1 {
		return GrepOut{}, fmt.Errorf("grep failed: %s", strings.TrimSpace(stderr))
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
	return out, nil
}

// FindIn is the input of find.
type FindIn struct {
	Path     string `json:"path,omitempty" jsonschema:"directory to search below; default /"`
	Name     string `json:"name,omitempty" jsonschema:"glob on the base name, e.g. *.md"`
	Type     string `json:"type,omitempty" jsonschema:"f for files, d for directories"`
	MaxDepth int    `json:"max_depth,omitempty"`
}

func (s *Service) Find(ctx context.Context, in FindIn) (PathsOut, error) {
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
		return PathsOut{}, fmt.Errorf(`type must be "f" (files) or "d" (directories), not %q`, in.Type)
	}
	stdout, stderr, code, err := s.run(ctx, script, "DIR="+in.Path, "NAME="+in.Name)
	if err != nil {
		return PathsOut{}, err
	}
	if code != 0 {
		return PathsOut{}, fmt.Errorf("find failed: %s", strings.TrimSpace(stderr))
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
	return out, nil
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

func (s *Service) Shell(ctx context.Context, in ShellIn) (ShellOut, error) {
	stdout, stderr, code, err := s.run(ctx, in.Script)
	if err != nil {
		return ShellOut{}, err
	}
	return ShellOut{Stdout: stdout, Stderr: stderr, ExitCode: code}, nil
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

func (s *Service) WriteFile(ctx context.Context, in WriteIn) (WriteOut, error) {
	if err := s.writable(); err != nil {
		return WriteOut{}, err
	}
	if err := semfs.WriteFile(s.ctx(ctx), s.FS, in.Path, []byte(in.Content), 0o644); err != nil {
		return WriteOut{}, Hint(err)
	}
	return WriteOut{Path: in.Path, Bytes: len(in.Content)}, nil
}

// EditIn is the input of edit_file.
type EditIn struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string" jsonschema:"exact text to replace, including whitespace"`
	NewString  string `json:"new_string" jsonschema:"replacement text"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence instead of exactly one"`
}

func (s *Service) EditFile(ctx context.Context, in EditIn) (WriteOut, error) {
	if err := s.writable(); err != nil {
		return WriteOut{}, err
	}
	c := s.ctx(ctx)
	if in.OldString == "" {
		return WriteOut{}, fmt.Errorf("old_string is empty; to create or replace a whole file use write_file")
	}
	data, err := semfs.ReadFile(c, s.FS, in.Path)
	if err != nil {
		return WriteOut{}, Hint(err)
	}
	text := string(data)
	n := strings.Count(text, in.OldString)
	switch {
	case n == 0:
		return WriteOut{}, fmt.Errorf("old_string was not found in %s; read the file and copy the text exactly, whitespace included", in.Path)
	case n > 1 && !in.ReplaceAll:
		return WriteOut{}, fmt.Errorf("old_string occurs %d times in %s; include more surrounding text to make it unique, or set replace_all", n, in.Path)
	}
	if in.ReplaceAll {
		text = strings.ReplaceAll(text, in.OldString, in.NewString)
	} else {
		text = strings.Replace(text, in.OldString, in.NewString, 1)
	}
	if err := semfs.WriteFile(c, s.FS, in.Path, []byte(text), 0o644); err != nil {
		return WriteOut{}, Hint(err)
	}
	return WriteOut{Path: in.Path, Bytes: len(text), Replacements: n}, nil
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

func (s *Service) Tag(ctx context.Context, in TagIn) (OKOut, error) {
	if err := s.writable(); err != nil {
		return OKOut{}, err
	}
	c := s.ctx(ctx)
	// Visibility is not an agent's to change: keep the file's groups.
	var keep semfs.Tags
	if m, err := semfs.GetMeta(c, s.FS, in.Path); err == nil {
		keep = m.Tags
	} else {
		return OKOut{}, Hint(err)
	}
	t := semfs.Tags{Task: in.Task, RelatedApps: in.RelatedApps, Summary: in.Summary, Links: in.Links,
		Provenance: in.Provenance, Extra: in.Extra, Groups: keep.Groups, Public: keep.Public}
	if err := semfs.SetTags(c, s.FS, in.Path, t); err != nil {
		return OKOut{}, Hint(err)
	}
	return OKOut{Path: in.Path, OK: true}, nil
}

// RemoveIn is the input of remove.
type RemoveIn struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"remove a directory and everything in it"`
}

func (s *Service) Remove(ctx context.Context, in RemoveIn) (OKOut, error) {
	if err := s.writable(); err != nil {
		return OKOut{}, err
	}
	c := s.ctx(ctx)
	var err error
	if in.Recursive {
		if _, serr := semfs.Stat(c, s.FS, in.Path); serr != nil {
			return OKOut{}, Hint(serr)
		}
		err = semfs.RemoveAll(c, s.FS, in.Path)
	} else {
		err = semfs.Remove(c, s.FS, in.Path)
	}
	if err != nil {
		return OKOut{}, Hint(err)
	}
	return OKOut{Path: in.Path, OK: true}, nil
}

// MoveIn is the input of move.
type MoveIn struct {
	From string `json:"from"`
	To   string `json:"to"`
}

func (s *Service) Move(ctx context.Context, in MoveIn) (OKOut, error) {
	if err := s.writable(); err != nil {
		return OKOut{}, err
	}
	if err := semfs.Rename(s.ctx(ctx), s.FS, in.From, in.To); err != nil {
		return OKOut{}, Hint(err)
	}
	return OKOut{Path: in.From, To: in.To, OK: true}, nil
}
