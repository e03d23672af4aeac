package shell

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/semfs/semfs"
)

// find: operands, then an expression of -name -iname -path -wholename
// -ipath -type (f, d, or a list "f,d") -size -newer -empty -prune -true
// -false -print -print0 with ! / -not, -a / -and (or nothing), -o / -or
// and parentheses; -maxdepth and -mindepth are global options. Without
// -print or -print0 the whole expression is followed by -print.
//
// Difference: GNU find reorders an expression to test names first (its
// -O1 optimiser), which changes what an action placed before a test in an
// -o branch does; semfs evaluates left to right, as POSIX describes.
//
// Order: each directory's entries by name. GNU find visits entries in
// readdir order, which on most disks is not sorted; the differential
// test runs GNU find on a tmpfs copy written so that readdir order is
// name order.

func init() { register("find", cmdFind) }

type findExpr interface {
	eval(e *findEnv) bool
}

type findEnv struct {
	c     *call
	shown string // path as printed
	p     string // tree path
	info  fs.FileInfo
	depth int
	prune bool
}

type (
	findAnd   struct{ a, b findExpr }
	findOr    struct{ a, b findExpr }
	findNot   struct{ a findExpr }
	findConst bool
	findName  struct {
		pat   string
		icase bool
		whole bool
	}
	findType string
	findSize struct {
		cmp  int // -1 less, 0 equal, 1 greater
		n    int64
		unit int64
	}
	findNewer struct{ t time.Time }
	findEmpty struct{}
	findPrune struct{}
	findPrint struct{ nul bool }
)

func (x findAnd) eval(e *findEnv) bool   { return x.a.eval(e) && x.b.eval(e) }
func (x findOr) eval(e *findEnv) bool    { return x.a.eval(e) || x.b.eval(e) }
func (x findNot) eval(e *findEnv) bool   { return !x.a.eval(e) }
func (x findConst) eval(*findEnv) bool   { return bool(x) }
func (x findNewer) eval(e *findEnv) bool { return e.info.ModTime().After(x.t) }
func (findPrune) eval(e *findEnv) bool   { e.prune = true; return true }

func (x findName) eval(e *findEnv) bool {
	if x.whole {
		return fnmatch(x.pat, e.shown, x.icase)
	}
	name := baseName(e.shown)
	return fnmatch(x.pat, name, x.icase)
}

func (x findType) eval(e *findEnv) bool {
	t := "f"
	if e.info.IsDir() {
		t = "d"
	}
	return strings.Contains(string(x), t)
}

func (x findSize) eval(e *findEnv) bool {
	size := diskSize(e.info)
	units := (size + x.unit - 1) / x.unit
	switch x.cmp {
	case -1:
		return units < x.n
	case 1:
		return units > x.n
	}
	return units == x.n
}

func (findEmpty) eval(e *findEnv) bool {
	if !e.info.IsDir() {
		return e.info.Size() == 0
	}
	infos, err := e.c.readDir(e.p)
	return err == nil && len(infos) == 0
}

func (x findPrint) eval(e *findEnv) bool {
	e.c.out.WriteString(e.shown)
	if x.nul {
		e.c.out.WriteByte(0)
	} else {
		e.c.out.WriteByte('\n')
	}
	return true
}

type findParser struct {
	c        *call
	args     []string
	pos      int
	hasPrint bool
	maxDepth int
	minDepth int
	needPath bool // a predicate reads the tree path of files (-empty)
	failed   bool // a directory could not be read
	err      string
}

func cmdFind(c *call) int {
	args := c.args
	var roots []string
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "!" || a == "(" || (strings.HasPrefix(a, "-") && a != "-") {
			break
		}
		roots = append(roots, a)
		i++
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	fp := &findParser{c: c, args: args[i:], maxDepth: -1}
	var expr findExpr = findConst(true)
	if len(fp.args) > 0 {
		expr = fp.parseOr()
		if fp.err == "" && fp.pos < len(fp.args) {
			if fp.args[fp.pos] == ")" {
				fp.err = "invalid expression; you have too many ')'"
			} else {
				fp.err = fmt.Sprintf("paths must precede expression: `%s'", fp.args[fp.pos])
			}
		}
		if fp.err != "" {
			c.errf("%s", fp.err)
			return 1
		}
	}
	if !fp.hasPrint {
		expr = findAnd{expr, findPrint{}}
	}
	status := 0
	for _, r := range roots {
		p, info, err := c.stat(r)
		if err != nil {
			c.pathErr("‘%s’: ", r, err)
			status = 1
			continue
		}
		c.findWalk(expr, fp, r, p, info, 0)
	}
	if fp.failed {
		status = 1
	}
	return status
}

func (c *call) findWalk(expr findExpr, fp *findParser, shown, p string, info fs.FileInfo, depth int) {
	e := &findEnv{c: c}
	c.findVisit(e, expr, fp, shown, p, info, depth)
}

// findVisit evaluates expr on one entry and descends into directories. e
// is reused for every entry of the walk.
func (c *call) findVisit(e *findEnv, expr findExpr, fp *findParser, shown, p string, info fs.FileInfo, depth int) {
	if c.ctx.Err() != nil {
		return
	}
	*e = findEnv{c: c, shown: shown, p: p, info: info, depth: depth}
	if depth >= fp.minDepth {
		expr.eval(e)
	}
	if !info.IsDir() || e.prune || (fp.maxDepth >= 0 && depth >= fp.maxDepth) {
		return
	}
	infos, err := c.readDir(p)
	if err != nil {
		c.pathErr("‘%s’: ", shown, err)
		fp.failed = true
		return
	}
	prefix := shown + "/"
	if strings.HasSuffix(shown, "/") {
		prefix = shown
	}
	for _, fi := range infos {
		cp := ""
		if fi.IsDir() || fp.needPath {
			cp = semfs.Join(p, fi.Name())
		}
		c.findVisit(e, expr, fp, prefix+fi.Name(), cp, fi, depth+1)
	}
}

func (fp *findParser) peek() string {
	if fp.pos < len(fp.args) {
		return fp.args[fp.pos]
	}
	return ""
}

func (fp *findParser) parseOr() findExpr {
	x := fp.parseAnd()
	for fp.err == "" && (fp.peek() == "-o" || fp.peek() == "-or") {
		fp.pos++
		y := fp.parseAnd()
		x = findOr{x, y}
	}
	return x
}

func (fp *findParser) parseAnd() findExpr {
	x := fp.parseNot()
	for fp.err == "" {
		t := fp.peek()
		if t == "" || t == "-o" || t == "-or" || t == ")" {
			return x
		}
		if t == "-a" || t == "-and" {
			fp.pos++
		}
		y := fp.parseNot()
		x = findAnd{x, y}
	}
	return x
}

func (fp *findParser) parseNot() findExpr {
	t := fp.peek()
	if t == "!" || t == "-not" {
		fp.pos++
		return findNot{fp.parseNot()}
	}
	return fp.primary()
}

func (fp *findParser) primary() findExpr {
	if fp.err != "" {
		return findConst(false)
	}
	t := fp.peek()
	if t == "" {
		fp.err = "expected an expression"
		return findConst(false)
	}
	fp.pos++
	arg := func() string {
		if fp.pos >= len(fp.args) {
			fp.err = fmt.Sprintf("missing argument to `%s'", t)
			return ""
		}
		a := fp.args[fp.pos]
		fp.pos++
		return a
	}
	switch t {
	case "(":
		x := fp.parseOr()
		if fp.peek() != ")" {
			if fp.err == "" {
				fp.err = "invalid expression; I was expecting to find a ')' somewhere but did not see one."
			}
			return x
		}
		fp.pos++
		return x
	case "-name", "-iname":
		return findName{pat: arg(), icase: t == "-iname"}
	case "-path", "-wholename", "-ipath", "-iwholename":
		return findName{pat: arg(), icase: strings.HasPrefix(t, "-i"), whole: true}
	case "-type":
		v := arg()
		for _, part := range strings.Split(v, ",") {
			if part != "f" && part != "d" && part != "l" && part != "b" && part != "c" && part != "p" && part != "s" {
				fp.err = fmt.Sprintf("Unknown argument to -type: %s", part)
			}
		}
		return findType(v)
	case "-size":
		return fp.size(arg())
	case "-newer":
		ref := arg()
		if fp.err != "" {
			return findConst(false)
		}
		_, info, err := fp.c.stat(ref)
		if err != nil {
			fp.err = fmt.Sprintf("‘%s’: %s", ref, errText(err))
			return findConst(false)
		}
		return findNewer{info.ModTime()}
	case "-empty":
		fp.needPath = true
		return findEmpty{}
	case "-prune":
		return findPrune{}
	case "-true":
		return findConst(true)
	case "-false":
		return findConst(false)
	case "-print", "-print0":
		fp.hasPrint = true
		return findPrint{nul: t == "-print0"}
	case "-maxdepth", "-mindepth":
		v := arg()
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			fp.err = fmt.Sprintf("Expected a positive decimal integer argument to %s, but got ‘%s’", t, v)
			return findConst(true)
		}
		if t == "-maxdepth" {
			fp.maxDepth = n
		} else {
			fp.minDepth = n
		}
		return findConst(true)
	}
	fp.err = fmt.Sprintf("unknown predicate `%s'", t)
	return findConst(false)
}

func (fp *findParser) size(v string) findExpr {
	x := findSize{unit: 512}
	s := v
	if strings.HasPrefix(s, "+") {
		x.cmp, s = 1, s[1:]
	} else if strings.HasPrefix(s, "-") {
		x.cmp, s = -1, s[1:]
	}
	if s != "" {
		switch s[len(s)-1] {
		case 'c':
			x.unit = 1
		case 'w':
			x.unit = 2
		case 'b':
			x.unit = 512
		case 'k':
			x.unit = 1024
		case 'M':
			x.unit = 1 << 20
		case 'G':
			x.unit = 1 << 30
		}
		if s[len(s)-1] < '0' || s[len(s)-1] > '9' {
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		fp.err = fmt.Sprintf("invalid argument `%s' to `-size'", v)
	}
	x.n = n
	return x
}
