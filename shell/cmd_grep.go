package shell

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/semfs/semfs"
)

// grep: -r -R -n -i -y -l -L -c -v -w -x -E -F -G -o -h -H -m -A -B -C -NUM
// -e -f -q -s -a --include --exclude --exclude-dir, "--", exit status 0/1/2,
// GNU grep 3.x's binary-file handling (a file with a NUL byte prints
// "grep: NAME: binary file matches" on stderr instead of its lines; a line
// with invalid UTF-8 is held back the same way). With -r and no operand it
// searches "." and prints names without "./", as GNU grep does.
//
// Differences: patterns are translated to Go's RE2 (no back-references;
// \< and \> are \b, so word boundaries are ASCII); "." and negated
// bracket expressions match a byte of invalid UTF-8, which GNU's do not;
// binary detection looks at the whole file where GNU looks at its first
// buffer, and around a binary file GNU prints "--" for suppressed context
// groups.
//
// grep -r asks a semfs.GrepCandidatesFS tree for the files that may match
// and reads only those; files are matched in parallel and printed in
// traversal order.

func init() { register("grep", cmdGrep) }

type grepOpts struct {
	invert, count, list, listNot, only, quiet, noMsg, text, null bool
	number, recursive                                            bool
	withName                                                     int // -1 unset, 0 -h, 1 -H
	max                                                          int64
	before, after                                                int
	context                                                      bool
	rules                                                        []fileRule // --include and --exclude, in order
	excludeDir                                                   []string
}

type grepper struct {
	o      grepOpts
	re     *regexp.Regexp // finds a line that may match
	long   *regexp.Regexp // leftmost-longest, for -o and -w
	exact  *regexp.Regexp // ^(?:pat)$, for -w's shorter matches
	word   bool
	line   bool
	empty  bool // an empty pattern: every line matches
	source string
	fixed  bool
	icase  bool
	lit    []byte // a literal every matching line contains, if known
}

func cmdGrep(c *call) int {
	// -NUM is -C NUM.
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if a == "--" {
			break
		}
		if len(a) == 2 && strings.IndexByte("efmABC", a[1]) >= 0 && a[0] == '-' || a == "--regexp" || a == "--file" {
			i++
			continue
		}
		if len(a) > 1 && a[0] == '-' && a[1] >= '0' && a[1] <= '9' && strings.Trim(a[1:], "0123456789") == "" {
			c.args = append(append(append([]string{}, c.args[:i]...), "-C", a[1:]), c.args[i+1:]...)
		}
	}
	o, ok := c.parse(optSpec{flags: "rRnilLcvwxEFGohHqsayIZz", valued: "mABCef", long: map[string]bool{
		"recursive": false, "dereference-recursive": false, "line-number": false, "ignore-case": false,
		"files-with-matches": false, "files-without-match": false, "count": false, "invert-match": false,
		"word-regexp": false, "line-regexp": false, "extended-regexp": false, "fixed-strings": false,
		"basic-regexp": false, "only-matching": false, "no-filename": false, "with-filename": false,
		"quiet": false, "silent": false, "no-messages": false, "text": false, "max-count": true,
		"after-context": true, "before-context": true, "context": true, "regexp": true, "file": true,
		"include": true, "exclude": true, "exclude-dir": true, "color": true, "colour": true,
		"no-ignore-case": false, "null": false,
	}, alias: map[string]string{
		"recursive": "r", "dereference-recursive": "R", "line-number": "n", "ignore-case": "i",
		"files-with-matches": "l", "files-without-match": "L", "count": "c", "invert-match": "v",
		"word-regexp": "w", "line-regexp": "x", "extended-regexp": "E", "fixed-strings": "F",
		"basic-regexp": "G", "only-matching": "o", "no-filename": "h", "with-filename": "H",
		"quiet": "q", "silent": "q", "no-messages": "s", "text": "a", "max-count": "m",
		"null": "Z", "after-context": "A", "before-context": "B", "context": "C", "regexp": "e", "file": "f",
	}})
	if !ok {
		return 2
	}
	g := &grepper{o: grepOpts{withName: -1, max: -1}}
	var patterns []string
	havePattern := false
	mode, modeSet := "G", false
	for _, x := range o.list {
		switch x.name {
		case "r", "R":
			g.o.recursive = true
		case "n":
			g.o.number = true
		case "i", "y":
			g.icase = true
		case "no-ignore-case":
			g.icase = false
		case "l":
			g.o.list, g.o.listNot = true, false
		case "L":
			g.o.listNot, g.o.list = true, false
		case "c":
			g.o.count = true
		case "v":
			g.o.invert = true
		case "w":
			g.word = true
		case "x":
			g.line = true
		case "E", "F", "G":
			if modeSet && mode != x.name {
				c.errf("conflicting matchers specified")
				return 2
			}
			mode, modeSet = x.name, true
		case "o":
			g.o.only = true
		case "h":
			g.o.withName = 0
		case "H":
			g.o.withName = 1
		case "q":
			g.o.quiet = true
		case "s":
			g.o.noMsg = true
		case "a":
			g.o.text = true
		case "Z":
			g.o.null = true
		case "m":
			n, err := strconv.ParseInt(x.val, 10, 64)
			if err != nil {
				c.errf("invalid max count")
				return 2
			}
			g.o.max = n
		case "A", "B", "C":
			n, err := strconv.Atoi(x.val)
			if err != nil || n < 0 {
				c.errf("%s: invalid context length argument", x.val)
				return 2
			}
			if x.name != "B" {
				g.o.after = n
			}
			if x.name != "A" {
				g.o.before = n
			}
			g.o.context = true
		case "e":
			patterns = append(patterns, strings.Split(x.val, "\n")...)
			havePattern = true
		case "f":
			data, err := c.readFile(x.val)
			if err != nil {
				c.pathErr("%s: ", x.val, err)
				return 2
			}
			patterns = append(patterns, lines(data)...)
			havePattern = true
		case "include", "exclude":
			g.o.rules = append(g.o.rules, fileRule{include: x.name == "include", pat: x.val})
		case "exclude-dir":
			g.o.excludeDir = append(g.o.excludeDir, x.val)
		}
	}
	args := o.operands
	if !havePattern {
		if len(args) == 0 {
			c.errf("no pattern given\nUsage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.")
			return 2
		}
		patterns = strings.Split(args[0], "\n")
		args = args[1:]
	}
	g.fixed = mode == "F"
	if err := g.compile(patterns, mode == "E"); err != nil {
		c.errf("%v", err)
		return 2
	}
	// Like GNU grep, give up at once when no line can be selected: -m 0,
	// or -v with a pattern that matches every line.
	if g.o.max == 0 || g.o.invert && g.empty && !g.word && !g.line {
		return 1
	}

	defaultDot := false
	if len(args) == 0 {
		if g.o.recursive {
			args = []string{"."}
			defaultDot = true
		} else {
			args = []string{"-"}
		}
	}
	if g.o.withName < 0 {
		switch {
		case len(args) > 1:
			g.o.withName = 1
		case g.o.recursive:
			g.o.withName = 2 // only for files found inside a directory
		default:
			g.o.withName = 0
		}
	}
	r := &grepRun{c: c, g: g}
	for _, a := range args {
		r.operand(a, defaultDot)
		if r.quitAll {
			break
		}
	}
	switch {
	case r.selected && g.o.quiet:
		return 0
	case r.errored:
		return 2
	case r.selected:
		return 0
	}
	return 1
}

func (g *grepper) compile(patterns []string, extended bool) error {
	var parts []string
	for _, p := range patterns {
		if p == "" {
			g.empty = true
		}
		var gp string
		if g.fixed {
			gp = regexp.QuoteMeta(p)
		} else {
			var err error
			gp, err = translateRE(p, extended)
			if err != nil {
				return err
			}
		}
		parts = append(parts, gp)
	}
	src := strings.Join(parts, "|")
	if len(parts) > 1 {
		src = "(?:" + strings.Join(parts, ")|(?:") + ")"
	}
	g.source = src
	if g.line {
		src = "^(?:" + src + ")$"
	}
	src = "(?m)" + src
	if g.icase {
		src = "(?i)" + src
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return fmt.Errorf("invalid regular expression: %v", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	g.re = re
	g.long = regexp.MustCompile(src)
	g.long.Longest()
	ex := "^(?:" + g.source + ")$"
	if g.icase {
		ex = "(?i)" + ex
	}
	g.exact = regexp.MustCompile(ex)
	if !g.icase && !g.empty {
		g.lit = requiredLiteral(g.source)
	}
	return nil
}

// requiredLiteral returns the longest literal string (3 bytes or more)
// that every match of the Go pattern src contains, or nil. grep looks for
// it with bytes.Index and runs the regexp only on the lines holding it.
func requiredLiteral(src string) []byte {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	var best string
	consider := func(r *syntax.Regexp) {
		if r.Op == syntax.OpLiteral && r.Flags&syntax.FoldCase == 0 && len(string(r.Rune)) > len(best) {
			best = string(r.Rune)
		}
	}
	switch re.Op {
	case syntax.OpLiteral:
		consider(re)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			consider(sub)
		}
	}
	if len(best) < 3 {
		return nil
	}
	return []byte(best)
}

// isWordByte reports whether the rune starting at b[i] (or ending before
// it, for before) is a word constituent: a letter, digit or underscore.
func wordAt(b []byte, i int, before bool) bool {
	var r rune
	if before {
		if i <= 0 {
			return false
		}
		r, _ = utf8.DecodeLastRune(b[:i])
	} else {
		if i >= len(b) {
			return false
		}
		r, _ = utf8.DecodeRune(b[i:])
	}
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// matches returns the match extents GNU grep selects on line (for -o and
// -w): leftmost-longest, with -w requiring word boundaries on both sides
// (trying shorter matches at the same start, then later starts).
func (g *grepper) matches(line []byte, all bool) [][2]int {
	var out [][2]int
	for s := 0; s <= len(line); {
		loc := g.long.FindIndex(line[s:])
		if loc == nil {
			break
		}
		a, b := s+loc[0], s+loc[1]
		if g.word {
			ok := !wordAt(line, a, true) && !wordAt(line, b, false)
			for e := b - 1; !ok && e >= a; e-- {
				if e < len(line) && !utf8.RuneStart(line[e]) {
					continue
				}
				if g.exact.Match(line[a:e]) && !wordAt(line, a, true) && !wordAt(line, e, false) {
					b, ok = e, true
				}
			}
			if !ok {
				_, n := utf8.DecodeRune(line[a:])
				s = a + max(n, 1)
				continue
			}
		}
		if b > a || !all {
			out = append(out, [2]int{a, b})
			if !all {
				return out
			}
		}
		if b > a {
			s = b
		} else {
			s = b + 1
		}
	}
	return out
}

// lineMatches reports whether line is matched (before -v).
func (g *grepper) lineMatches(line []byte) bool {
	if g.empty && !g.word && !g.line {
		return true
	}
	if !g.word {
		return g.re.Match(line)
	}
	if !g.re.Match(line) {
		return false
	}
	return len(g.matches(line, false)) > 0
}

// grepRun is one grep invocation: it prints per-file results in order.
type grepRun struct {
	c        *call
	g        *grepper
	selected bool
	errored  bool
	quitAll  bool
	lastOut  bool // a context group was printed (for "--")
	mu       sync.Mutex
}

type grepFile struct {
	name   string // as displayed
	p      string // tree path ("" for stdin)
	info   fs.FileInfo
	inDir  bool // found by recursion
	out    bytes.Buffer
	errMsg string
	sel    bool
	err    bool
	binary bool // print the binary-file message after out
	done   chan struct{}
	skip   bool // known not to match (index), no read needed
	groups bool // printed a context group
}

func (r *grepRun) operand(a string, defaultDot bool) {
	c, g := r.c, r.g
	if a == "-" {
		data, _ := c.readFile("-")
		f := &grepFile{name: "(standard input)"}
		g.file(f, data)
		r.emit(f)
		return
	}
	p, info, err := c.stat(a)
	if err != nil {
		if !g.o.noMsg {
			c.pathErr("%s: ", a, err)
		}
		r.errored = true
		return
	}
	if !info.IsDir() {
		if !r.included(a, false) {
			return
		}
		r.files([]*grepFile{{name: a, p: p, info: info}})
		return
	}
	if !g.o.recursive {
		if !g.o.noMsg {
			c.errf("%s: Is a directory (use grep -r to search the files in a directory)", a)
		}
		r.errored = true
		return
	}
	prefix := a
	switch {
	case defaultDot:
		prefix = ""
	case strings.HasSuffix(a, "/"):
	default:
		prefix = a + "/"
	}
	// Files the index rules out print nothing, except with -c (a zero
	// count) and -L (their names): only then are they kept, unread.
	cands := r.candidates(p)
	keepNonCandidates := r.g.o.count || r.g.o.listNot
	var list []*grepFile
	c.walkFiles(p, func(fp string, fi fs.FileInfo, isDir bool) bool {
		if isDir {
			return fp == p || len(r.g.o.excludeDir) == 0 || r.included(path.Base(fp), true)
		}
		skip := false
		if cands != nil {
			if _, ok := cands[fp]; !ok {
				if !keepNonCandidates {
					return true
				}
				skip = true
			}
		}
		if len(r.g.o.rules) > 0 && !r.included(path.Base(fp), false) {
			return true
		}
		list = append(list, &grepFile{name: prefix + strings.TrimPrefix(semfs.Rel(fp, p), "/"), p: fp, info: fi, inDir: true, skip: skip})
		return true
	}, func(dp string, err error) {
		// A directory that cannot be listed is reported in its place.
		list = append(list, &grepFile{name: prefix + strings.TrimPrefix(semfs.Rel(dp, p), "/"), p: dp, err: true,
			errMsg: fmt.Sprintf("grep: %s: %s\n", strings.TrimSuffix(prefix+strings.TrimPrefix(semfs.Rel(dp, p), "/"), "/"), errText(err)), skip: true})
	})
	r.files(list)
}

// walkFiles calls fn for every directory and file below root in preorder
// (entries of a directory by name); fn returning false for a directory
// skips it.
func (c *call) walkFiles(root string, fn func(p string, info fs.FileInfo, isDir bool) bool, onErr func(p string, err error)) {
	if vn, ok := c.s.nav.(*viewNav); ok && !vn.hasOverlay() {
		var walk func(i int) bool
		v := vn.v
		walk = func(i int) bool {
			nd := &v.t.nodes[i]
			if !nd.info.IsDir() {
				return fn(nd.path, &nd.info, false)
			}
			if !fn(nd.path, &nd.info, true) {
				return true
			}
			for _, ch := range nd.children {
				if v.vis.has(ch) && !walk(ch) {
					return false
				}
			}
			return true
		}
		if i, ok := v.lookup(root); ok {
			walk(i)
		}
		return
	}
	var walk func(p string, info fs.FileInfo)
	walk = func(p string, info fs.FileInfo) {
		if !info.IsDir() {
			fn(p, info, false)
			return
		}
		if !fn(p, info, true) {
			return
		}
		infos, err := c.readDir(p)
		if err != nil {
			onErr(p, err)
			return
		}
		for _, fi := range infos {
			walk(semfs.Join(p, fi.Name()), fi)
		}
	}
	if info, err := c.s.nav.stat(c.ctx, root); err == nil {
		walk(root, info)
	}
}

func (n *viewNav) hasOverlay() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.overlay) > 0
}

func (r *grepRun) included(name string, dir bool) bool {
	o := r.g.o
	base := path.Base(name)
	if dir {
		for _, x := range o.excludeDir {
			if m, _ := path.Match(x, base); m {
				return false
			}
		}
		return true
	}
	// GNU grep: the last matching rule wins; when none matches, a file is
	// included unless the first rule is an --include.
	if len(o.rules) == 0 {
		return true
	}
	decided, in := false, false
	for _, r := range o.rules {
		if m, _ := path.Match(r.pat, base); m || fnmatch(r.pat, name, false) {
			decided, in = true, r.include
		}
	}
	if !decided {
		return !o.rules[0].include
	}
	return in
}

// fileRule is one --include or --exclude option.
type fileRule struct {
	include bool
	pat     string
}

// candidates asks the tree's index for the files below root that may
// match, or returns nil when every file must be read: the tree has no
// index, the index cannot help, or the options need every file (-v, an
// empty pattern).
func (r *grepRun) candidates(root string) map[string]struct{} {
	g := r.g
	gc, ok := r.c.s.fsys.(semfs.GrepCandidatesFS)
	if !ok || g.o.invert || g.empty {
		return nil
	}
	paths, ok, err := gc.GrepCandidates(r.c.ctx, root, g.source, semfs.GrepOptions{IgnoreCase: g.icase})
	if err != nil || !ok {
		return nil
	}
	set := make(map[string]struct{}, len(paths))
	for _, p := range paths {
		set[p] = struct{}{}
	}
	return set
}

// files greps list in parallel and prints the results in list order.
func (r *grepRun) files(list []*grepFile) {
	if len(list) == 0 {
		return
	}
	ctx, cancel := context.WithCancel(r.c.ctx)
	defer cancel()
	workers := runtime.GOMAXPROCS(0)
	if len(list) < 4 {
		workers = 1
	}
	jobs := make(chan *grepFile)
	for _, f := range list {
		f.done = make(chan struct{})
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range jobs {
				if ctx.Err() == nil {
					r.one(ctx, f)
				}
				close(f.done)
			}
		}()
	}
	go func() {
		defer close(jobs)
		// At most 256 files ahead of the printer.
		for i, f := range list {
			if i >= 256 {
				select {
				case <-list[i-256].done:
				case <-ctx.Done():
					return
				}
			}
			select {
			case jobs <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	for _, f := range list {
		select {
		case <-f.done:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		r.emit(f)
		if r.quitAll {
			cancel()
			break
		}
	}
	cancel()
	wg.Wait()
}

func (r *grepRun) one(ctx context.Context, f *grepFile) {
	if f.err {
		return // an unlistable directory, reported by emit
	}
	if f.skip {
		r.g.file(f, nil)
		return
	}
	data, err := r.c.s.readFileInfo(ctx, f.p, f.info)
	if err != nil {
		f.err = true
		if !r.g.o.noMsg {
			f.errMsg = fmt.Sprintf("grep: %s: %s\n", f.name, errText(err))
		}
		return
	}
	r.g.file(f, data)
}

func (r *grepRun) emit(f *grepFile) {
	c := r.c
	if f.errMsg != "" {
		c.out.Flush()
		c.stderr.Write([]byte(f.errMsg))
	}
	if f.err {
		r.errored = true
	}
	if f.sel {
		r.selected = true
		if r.g.o.quiet {
			r.quitAll = true
		}
	}
	if f.out.Len() > 0 {
		out := f.out.Bytes()
		if f.groups && r.lastOut {
			c.out.WriteString("--\n")
		}
		c.out.Write(out)
	}
	if f.groups {
		r.lastOut = true
	}
	if f.binary {
		c.out.Flush()
		fmt.Fprintf(c.stderr, "grep: %s: binary file matches\n", f.name)
	}
}

// file greps one file's contents into f.out.
func (g *grepper) file(f *grepFile, data []byte) {
	o := g.o
	showName := o.withName == 1 || (o.withName == 2 && f.inDir)
	binary := !o.text && bytes.IndexByte(data, 0) >= 0
	if binary {
		// GNU grep treats NUL bytes of a binary file as line ends; its
		// lines are never printed, but counts (-c -v) see them.
		data = bytes.ReplaceAll(data, []byte{0}, []byte{'\n'})
	}
	quietOut := o.quiet || o.count || o.list || o.listNot
	var count int64
	w := &f.out
	prefix := func(lineNo int, sep byte) {
		if showName {
			w.WriteString(f.name)
			if o.null {
				w.WriteByte(0)
			} else {
				w.WriteByte(sep)
			}
		}
		if o.number {
			w.WriteString(strconv.Itoa(lineNo))
			w.WriteByte(sep)
		}
	}
	lastPrinted := 0 // line number of the last line written (for context)
	emit := func(no int, sep byte, text []byte) {
		if o.context {
			if lastPrinted > 0 && no > lastPrinted+1 {
				w.WriteString("--\n")
			}
			f.groups = true
		}
		lastPrinted = no
		if o.only && sep == '-' {
			return // -o prints no context lines, but they still join groups
		}
		prefix(no, sep)
		w.Write(text)
		w.WriteByte('\n')
	}
	// Line-by-line selection, with the whole-buffer regexp search jumping
	// over lines that cannot match when nothing else needs them.
	pendingAfter := 0
	type ln struct {
		start, end, no int
	}
	var beforeBuf []ln
	stop := false
	pos, lineNo := 0, 0
	fast := !o.invert && !o.context && !(g.empty && !g.word && !g.line)
	for pos < len(data) && !stop {
		if fast {
			var loc []int
			if g.lit != nil {
				if i := bytes.Index(data[pos:], g.lit); i >= 0 {
					loc = []int{i, i}
				}
			} else {
				loc = g.re.FindIndex(data[pos:])
			}
			if loc == nil {
				break
			}
			ls := pos + bytes.LastIndexByte(data[pos:pos+loc[0]], '\n') + 1
			lineNo += bytes.Count(data[pos:ls], []byte{'\n'})
			pos = ls
			if pos >= len(data) {
				break // an empty match after the final newline is no line
			}
		}
		end := bytes.IndexByte(data[pos:], '\n')
		next := 0
		if end < 0 {
			end = len(data)
			next = len(data)
		} else {
			end += pos
			next = end + 1
		}
		lineNo++
		line := data[pos:end]
		sel := g.lineMatches(line) != o.invert
		if sel {
			count++
			f.sel = true
			switch {
			case binary && !quietOut:
				f.binary = true
				stop = true
			case quietOut:
				if o.quiet || o.list || o.listNot {
					stop = true
				}
			default:
				if !o.text && !o.only && !utf8.Valid(line) {
					f.binary = true // GNU holds back a line with an encoding error
					break
				}
				for _, b := range beforeBuf {
					emit(b.no, '-', data[b.start:b.end])
				}
				beforeBuf = beforeBuf[:0]
				if o.only {
					if !o.invert {
						for _, m := range g.matches(line, true) {
							if !o.text && !utf8.Valid(line[m[0]:m[1]]) {
								f.binary = true
								continue
							}
							emit(lineNo, ':', line[m[0]:m[1]])
						}
					}
				} else {
					emit(lineNo, ':', line)
				}
				pendingAfter = o.after
			}
			if o.max > 0 && count >= o.max {
				stop = true
			}
		} else if o.context && !quietOut && !binary {
			if pendingAfter > 0 {
				pendingAfter--
				emit(lineNo, '-', line)
			} else if o.before > 0 {
				beforeBuf = append(beforeBuf, ln{pos, end, lineNo})
				if len(beforeBuf) > o.before {
					beforeBuf = beforeBuf[1:]
				}
			}
		}
		pos = next
	}
	// Trailing context after the -m-th match.
	if stop && o.context && pendingAfter > 0 && !quietOut && !binary {
		for pos < len(data) && pendingAfter > 0 {
			end := bytes.IndexByte(data[pos:], '\n')
			next := 0
			if end < 0 {
				end, next = len(data), len(data)
			} else {
				end += pos
				next = end + 1
			}
			lineNo++
			emit(lineNo, '-', data[pos:end])
			pendingAfter--
			pos = next
		}
	}
	switch {
	case o.quiet:
	case o.list && count > 0, o.listNot && count == 0:
		w.WriteString(f.name)
		if o.null {
			w.WriteByte(0)
		} else {
			w.WriteByte('\n')
		}
	case o.list, o.listNot:
	case o.count:
		if showName {
			w.WriteString(f.name)
			if o.null {
				w.WriteByte(0)
			} else {
				w.WriteByte(':')
			}
		}
		w.WriteString(strconv.FormatInt(count, 10))
		w.WriteByte('\n')
	}
}
