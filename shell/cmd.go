package shell

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/interp"

	"github.com/semfs/semfs"
)

// builtin runs one command and returns its exit status.
type builtin func(c *call) int

// builtins maps command names to their Go implementations. Each lives in
// its own cmd_NAME.go file and registers itself from init.
var builtins = map[string]builtin{}

func register(name string, b builtin) { builtins[name] = b }

// call is one invocation of a builtin.
type call struct {
	ctx    context.Context
	s      *Session
	hc     interp.HandlerContext
	name   string
	args   []string // without the command name
	dir    string   // working directory
	stdin  io.Reader
	out    *bufio.Writer
	stderr io.Writer
	helped bool // --help was answered; the command exits 0
}

func (s *Session) newCall(ctx context.Context, hc interp.HandlerContext, args []string) *call {
	stdin := hc.Stdin
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	return &call{
		ctx: ctx, s: s, hc: hc, name: args[0], args: args[1:], dir: hc.Dir,
		stdin: stdin, out: bufio.NewWriterSize(hc.Stdout, 32<<10), stderr: hc.Stderr,
	}
}

func (c *call) flush() { c.out.Flush() }

// errf prints "NAME: message" on stderr.
func (c *call) errf(format string, args ...any) {
	c.out.Flush()
	fmt.Fprintf(c.stderr, c.name+": "+format+"\n", args...)
}

// abs resolves a command-line path against the working directory.
func (c *call) abs(name string) string { return vpath(c.dir, name) }

// stat describes a command-line path as the session sees it.
func (c *call) stat(name string) (string, fs.FileInfo, error) {
	p := c.abs(name)
	if strings.HasSuffix(name, "/") && name != "/" {
		info, err := c.s.nav.stat(c.ctx, p)
		if err == nil && !info.IsDir() {
			return p, nil, semfs.PathErr("stat", p, semfs.ErrNotDir, "")
		}
		return p, info, err
	}
	info, err := c.s.nav.stat(c.ctx, p)
	return p, info, err
}

func (c *call) readDir(p string) ([]fs.FileInfo, error) { return c.s.nav.readDir(c.ctx, p) }

// readFile reads a command-line path (or stdin for "-").
func (c *call) readFile(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(c.stdin)
	}
	p, info, err := c.stat(name)
	if err != nil {
		return nil, err
	}
	return c.s.readFileInfo(c.ctx, p, info)
}

// pathErr prints "NAME: PREFIX'arg': Error (hint)" for an FS failure on a
// command-line path, with a hint an agent can act on.
func (c *call) pathErr(format string, arg string, err error) {
	c.errf(format+"%s", arg, errText(err)+c.hint(arg, err))
}

// hint suggests visible paths near a missing one, or says how to fix the
// command for other errors. It never names a path the session cannot see.
func (c *call) hint(arg string, err error) string {
	switch {
	case errors.Is(err, semfs.ErrNotExist):
		if s := c.suggest(arg); len(s) > 0 {
			return " (did you mean " + strings.Join(s, " or ") + "?)"
		}
	case errors.Is(err, semfs.ErrReadOnly):
		return " (this tree is read-only; writes are refused)"
	case errors.Is(err, semfs.ErrIsDir):
		return fmt.Sprintf(" (it is a directory: list it with 'ls %s' or search it with 'grep -r PATTERN %s')", arg, arg)
	case errors.Is(err, semfs.ErrNotDir):
		return " (a component of the path is a file, not a directory)"
	}
	return ""
}

// suggest returns up to three visible paths whose name matches the base
// name of arg (exactly, ignoring case, or within a small edit distance),
// shown relative to the working directory when below it.
func (c *call) suggest(arg string) []string {
	base := path.Base(arg)
	if base == "/" || base == "." || base == "" {
		return nil
	}
	lb := strings.ToLower(base)
	type cand struct {
		p    string
		rank int
	}
	var cands []cand
	budget := 50000
	var walk func(dir string)
	walk = func(dir string) {
		if budget <= 0 {
			return
		}
		infos, err := c.s.nav.readDir(c.ctx, dir)
		if err != nil {
			return
		}
		for _, fi := range infos {
			budget--
			p := semfs.Join(dir, fi.Name())
			name := fi.Name()
			rank := -1
			switch {
			case name == base:
				rank = 0
			case strings.ToLower(name) == lb:
				rank = 1
			case len(base) >= 3 && editDistance(strings.ToLower(name), lb) <= max(1, min(2, len(base)/4)):
				rank = 2
			case len(base) >= 3 && strings.TrimSuffix(name, path.Ext(name)) == base:
				rank = 2
			}
			if rank >= 0 && p != c.abs(arg) {
				cands = append(cands, cand{p, rank})
			}
			if fi.IsDir() {
				walk(p)
			}
		}
	}
	walk("/")
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].rank < cands[j].rank })
	var out []string
	for _, cd := range cands {
		if len(out) == 3 {
			break
		}
		out = append(out, c.display(cd.p))
	}
	return out
}

// display shows a tree path relative to the working directory when it is
// below it ("./docs/a.md"), and absolute otherwise.
func (c *call) display(p string) string {
	if c.dir != "/" && semfs.HasPrefix(p, c.dir) && p != c.dir {
		return "." + p[len(c.dir):]
	}
	if c.dir == "/" {
		return "." + p
	}
	return p
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// opts is the result of parsing a command line GNU-style: short options
// may be grouped (-rn) and take a value attached or as the next argument
// (-A2, -A 2); long options take "=value" or the next argument; options
// and operands may be mixed; "--" ends the options; "-" is an operand.
type opts struct {
	list     []opt
	operands []string
}

type opt struct {
	name string // one letter, or the long name
	val  string
}

// optSpec describes a command's options: flags are short options without
// a value, valued are short options with one, long maps long names to
// whether they take a value (a long name may alias a short one through
// alias).
type optSpec struct {
	flags  string
	valued string
	long   map[string]bool
	alias  map[string]string // long name → short letter
}

func (c *call) parse(spec optSpec) (*opts, bool) {
	o := &opts{}
	args := c.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--help":
			fmt.Fprintf(c.out, "%s: a semfs builtin (GNU-compatible output for the options it supports).\n%s\n", c.name, spec.supported())
			c.helped = true
			return nil, false
		case a == "--":
			o.operands = append(o.operands, args[i+1:]...)
			return o, true
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			takes, ok := spec.long[name]
			if !ok {
				// Unique prefix, as getopt_long allows.
				var match string
				for n := range spec.long {
					if strings.HasPrefix(n, name) {
						if match != "" {
							match = ""
							break
						}
						match = n
					}
				}
				if match == "" {
					c.errf("unrecognized option '%s'\n%s", a, spec.supported())
					return nil, false
				}
				name, takes = match, spec.long[match]
			}
			if takes && !hasVal {
				if i+1 >= len(args) {
					c.errf("option '--%s' requires an argument\nTry '%s --help' for more information.", name, c.name)
					return nil, false
				}
				i++
				val = args[i]
			}
			if al, ok := spec.alias[name]; ok {
				name = al
			}
			o.list = append(o.list, opt{name, val})
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				ch := a[j]
				switch {
				case strings.IndexByte(spec.flags, ch) >= 0:
					o.list = append(o.list, opt{string(ch), ""})
				case strings.IndexByte(spec.valued, ch) >= 0:
					val := a[j+1:]
					if val == "" {
						if i+1 >= len(args) {
							c.errf("option requires an argument -- '%c'\nTry '%s --help' for more information.", ch, c.name)
							return nil, false
						}
						i++
						val = args[i]
					}
					o.list = append(o.list, opt{string(ch), val})
					j = len(a)
				default:
					c.errf("invalid option -- '%c'\n%s", ch, spec.supported())
					return nil, false
				}
			}
		default:
			o.operands = append(o.operands, a)
		}
	}
	return o, true
}

// supported lists the options of a command, for the message about an
// unknown one (an agent can fix its command from it).
func (spec optSpec) supported() string {
	var parts []string
	for _, ch := range spec.flags + spec.valued {
		parts = append(parts, "-"+string(ch))
	}
	longs := make([]string, 0, len(spec.long))
	for n := range spec.long {
		longs = append(longs, "--"+n)
	}
	sort.Strings(longs)
	return "semfs supports: " + strings.Join(append(parts, longs...), " ")
}

func (o *opts) has(name string) bool {
	for _, x := range o.list {
		if x.name == name {
			return true
		}
	}
	return false
}

// last returns the value of the last occurrence of option name.
func (o *opts) last(name string) (string, bool) {
	for i := len(o.list) - 1; i >= 0; i-- {
		if o.list[i].name == name {
			return o.list[i].val, true
		}
	}
	return "", false
}

func (o *opts) all(name string) []string {
	var out []string
	for _, x := range o.list {
		if x.name == name {
			out = append(out, x.val)
		}
	}
	return out
}

// lines splits data into lines without their newlines; a final line with
// no newline is kept.
func lines(data []byte) []string {
	s := string(data)
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}
