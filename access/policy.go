package access

import (
	"context"
	"fmt"
	"math/bits"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/semfs/semfs"
)

// Access is what a path rule grants.
type Access uint8

const (
	// Unset is the zero value: as Policy.Default it means Write; a Rule
	// must not use it.
	Unset Access = iota
	// None hides a path from listings and refuses it when named.
	None
	// Read allows reading, listing and metadata, refuses writes.
	Read
	// Write allows everything.
	Write
)

// String returns "none", "read", "write" or "unset".
func (a Access) String() string {
	switch a {
	case None:
		return "none"
	case Read:
		return "read"
	case Write:
		return "write"
	}
	return "unset"
}

// MarshalText encodes a as "none", "read" or "write" ("" when unset), so
// policies read from and write to JSON and other text configuration.
func (a Access) MarshalText() ([]byte, error) {
	if a == Unset {
		return []byte{}, nil
	}
	if a > Write {
		return nil, fmt.Errorf("access: invalid access %d", a)
	}
	return []byte(a.String()), nil
}

// UnmarshalText decodes "none", "read" or "write" (any case); "" is Unset.
func (a *Access) UnmarshalText(text []byte) error {
	if len(text) == 0 {
		*a = Unset
		return nil
	}
	v, err := ParseAccess(string(text))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// ParseAccess parses "none", "read" or "write".
func ParseAccess(s string) (Access, error) {
	switch strings.ToLower(s) {
	case "none":
		return None, nil
	case "read":
		return Read, nil
	case "write":
		return Write, nil
	}
	return Unset, fmt.Errorf("access: %q is not one of none, read, write", s)
}

// Rule grants Access on the paths Path matches and everything below them.
// Path is a tree path or a glob in the contract's one syntax
// (semfs.MatchPath): "*" matches within one element, "?" one character,
// "**" any number of elements (zero included), and [...] a character class,
// as in path.Match. "/corpus" covers /corpus and its whole
// subtree; "/**/*.locked.md" covers every file so named at any depth.
type Rule struct {
	Path   string `json:"path"`
	Access Access `json:"access"`
	// Note is a human reason, shown in the detail of a refusal.
	Note string `json:"note,omitempty"`
}

// Policy is what the access layer enforces. Rules cascade: the last rule
// matching a path (or one of its ancestors) wins over Default.
type Policy struct {
	// Default applies where no rule matches; Unset means Write.
	Default Access `json:"default,omitempty"`
	Rules   []Rule `json:"rules,omitempty"`
	// Quota, when positive, is the most bytes the whole tree may hold; a
	// write that would exceed it fails with semfs.ErrQuota.
	Quota int64 `json:"quota,omitempty"`
	// Visible, when set, decides per-file visibility (see the package
	// documentation) instead of the wrapped tree's metadata. It is asked
	// about files and directories on every call, with or without a
	// principal in ctx (what a host call sees is then its decision). A
	// hidden directory must hide everything below it.
	Visible func(ctx context.Context, path string) (bool, error) `json:"-"`
}

// Validate reports the first invalid rule of p.
func (p Policy) Validate() error {
	_, err := compile(p)
	return err
}

// maxSegs bounds a pattern's elements (states are bits of a uint64).
const maxSegs = 62

type segKind uint8

const (
	segLiteral segKind = iota
	segStar            // "*": any one element
	segWild            // an element pattern with * and ? only
	segGlob            // an element pattern with [ or \ (path.Match)
	segAny             // "**": any number of elements
)

type seg struct {
	kind segKind
	text string
	// For segWild: the literal text before the first and after the last
	// wildcard, checked first; simple means text is prefix*suffix, fully
	// decided by those checks.
	prefix, suffix string
	simple         bool
}

func wildSeg(elem string) seg {
	first := strings.IndexAny(elem, "*?")
	last := strings.LastIndexAny(elem, "*?")
	return seg{
		kind:   segWild,
		text:   elem,
		prefix: elem[:first],
		suffix: elem[last+1:],
		simple: first == last && elem[first] == '*',
	}
}

func (s seg) match(name string) bool {
	switch s.kind {
	case segLiteral:
		return s.text == name
	case segStar:
		return true
	case segWild:
		if len(name) < len(s.prefix)+len(s.suffix) ||
			!strings.HasPrefix(name, s.prefix) || !strings.HasSuffix(name, s.suffix) {
			return false
		}
		return s.simple || wildMatch(s.text, name)
	default:
		ok, _ := path.Match(s.text, name)
		return ok
	}
}

// wildMatch matches name against an element pattern of literal bytes, "*"
// (any run of characters) and "?" (one character): path.Match without
// classes or escapes, and several times faster. It backtracks only to the
// last "*", which is enough: an earlier star can never need to match more.
func wildMatch(pat, name string) bool {
	px, nx := 0, 0
	starPx, starNx := -1, 0
	for px < len(pat) || nx < len(name) {
		if px < len(pat) {
			switch c := pat[px]; c {
			case '*':
				starPx, starNx = px, nx
				px++
				continue
			case '?':
				if nx < len(name) {
					_, w := utf8.DecodeRuneInString(name[nx:])
					px++
					nx += w
					continue
				}
			default:
				if nx < len(name) && name[nx] == c {
					px++
					nx++
					continue
				}
			}
		}
		if starPx >= 0 && starNx < len(name) {
			starNx++ // byte steps, as path.Match takes them
			px, nx = starPx+1, starNx
			continue
		}
		return false
	}
	return true
}

// rule is a compiled Rule: a pattern run as a small NFA whose states are the
// bits of a uint64. Bit i means "segs[:i] matched so far"; bit len(segs)
// means the pattern matched the path or one of its ancestors, and is kept
// for every path below (a rule covers a subtree).
type rule struct {
	Rule
	segs    []seg
	start   uint64 // closure of state 0
	done    uint64 // bit len(segs)
	anyMask uint64 // bits of the "**" segments
}

func compileRule(r Rule) (rule, error) {
	if r.Access != None && r.Access != Read && r.Access != Write {
		return rule{}, fmt.Errorf("access: rule %q: access must be none, read or write", r.Path)
	}
	p := r.Path
	if !utf8.ValidString(p) {
		return rule{}, fmt.Errorf("access: rule %q: not valid UTF-8", r.Path)
	}
	if p == "" || p[0] != '/' {
		return rule{}, fmt.Errorf("access: rule %q: path must start with /", r.Path)
	}
	if !semfs.ValidPattern(p) {
		return rule{}, fmt.Errorf("access: rule %q: malformed pattern; use *, ?, [...] and ** (any number of directories)", r.Path)
	}
	cr := rule{Rule: r}
	if p != "/" {
		for elem := range strings.SplitSeq(p[1:], "/") {
			switch {
			case elem == "" || elem == "." || elem == "..":
				return rule{}, fmt.Errorf("access: rule %q: empty, . or .. element", r.Path)
			case elem == "**":
				if n := len(cr.segs); n > 0 && cr.segs[n-1].kind == segAny {
					continue // "**/**" is "**"
				}
				cr.segs = append(cr.segs, seg{kind: segAny})
			case elem == "*":
				cr.segs = append(cr.segs, seg{kind: segStar})
			case strings.ContainsAny(elem, "*?") && !strings.ContainsAny(elem, `[\`):
				cr.segs = append(cr.segs, wildSeg(elem))
			case strings.ContainsAny(elem, `*?[\`):
				if _, err := path.Match(elem, ""); err != nil {
					return rule{}, fmt.Errorf("access: rule %q: bad pattern element %q", r.Path, elem)
				}
				cr.segs = append(cr.segs, seg{kind: segGlob, text: elem})
			default:
				cr.segs = append(cr.segs, seg{kind: segLiteral, text: elem})
			}
		}
	}
	if len(cr.segs) > maxSegs {
		return rule{}, fmt.Errorf("access: rule %q: more than %d elements", r.Path, maxSegs)
	}
	cr.done = 1 << len(cr.segs)
	for i, sg := range cr.segs {
		if sg.kind == segAny {
			cr.anyMask |= 1 << i
		}
	}
	cr.start = cr.closure(1)
	return cr, nil
}

// closure adds the states reachable by letting "**" match zero elements.
// One shift is enough: compileRule never puts two "**" in a row.
func (r *rule) closure(s uint64) uint64 { return s | (s&r.anyMask)<<1 }

// step consumes one path element.
func (r *rule) step(s uint64, name string) uint64 {
	if s == 0 {
		return 0
	}
	next := s & (r.done | r.anyMask) // a covered subtree stays covered; "**" absorbs the element
	for live := s &^ (r.done | r.anyMask); live != 0; live &= live - 1 {
		i := bits.TrailingZeros64(live)
		if r.segs[i].match(name) {
			next |= 1 << (i + 1)
		}
	}
	return r.closure(next)
}

// policy is a compiled Policy.
type policy struct {
	def   Access
	rules []rule
	// Facts that let common calls skip work.
	anyNone     bool // some path can be None
	allWritable bool // no path can be less than Write
	cache       atomic.Pointer[dirCache]
	last        atomic.Pointer[dirInfo] // the most recently used directory
	noRules     dirInfo                 // every directory's, when there are no rules
}

func compile(p Policy) (*policy, error) {
	cp := &policy{def: p.Default}
	cp.cache.Store(new(dirCache))
	switch cp.def {
	case Unset:
		cp.def = Write
	case None, Read, Write:
	default:
		return nil, fmt.Errorf("access: default access %d is not none, read or write", p.Default)
	}
	if p.Quota < 0 {
		return nil, fmt.Errorf("access: negative quota %d", p.Quota)
	}
	cp.anyNone = cp.def == None
	cp.allWritable = cp.def == Write
	cp.noRules.self = cp.def
	if cp.def == None {
		cp.noRules.someNone = true
		cp.noRules.noneEnds.fill()
	}
	for _, r := range p.Rules {
		cr, err := compileRule(r)
		if err != nil {
			return nil, err
		}
		cp.rules = append(cp.rules, cr)
		if r.Access == None {
			cp.anyNone = true
		}
		if r.Access != Write {
			cp.allWritable = false
		}
	}
	return cp, nil
}

// states holds the NFA state of every rule after some path.
type states []uint64

// walk returns the rules' states after canonical path p, in buf. The
// states of p's parent come from a cache, so a call costs one step per rule
// on the final element.
func (cp *policy) walk(p string, buf states) states {
	if len(cp.rules) == 0 {
		return buf[:0]
	}
	if p == "/" {
		return append(buf[:0], cp.dirStates("/")...)
	}
	dir, name := semfs.Split(p)
	return cp.stepAll(cp.dirStates(dir), name, buf)
}

// maxCachedDirs bounds the directory-state cache; when it fills, it starts
// over empty.
const maxCachedDirs = 4096

// dirCache maps a directory path to its *dirInfo.
type dirCache struct {
	m sync.Map
	n atomic.Int64
}

// dirInfo is what the rules say at a directory: their states, and the
// checks that decide its entries (immutable once built).
type dirInfo struct {
	path   string
	s      states
	checks []childCheck
	// self and selfRule are the directory's own access and its deciding
	// rule (nil for the default).
	self     Access
	selfRule *rule
	// someNone reports whether an entry can be None (else listings of the
	// directory need no rule checks at all).
	someNone bool
	// ends holds the last bytes of the names some check can decide, and
	// noneEnds those of the names that can be None; a check not bound to
	// a literal last byte (a "*", a class, a covering rule) puts in all.
	// One test of a name's last byte then settles most entries.
	ends, noneEnds byteSet
}

// byteSet is a set of bytes.
type byteSet [4]uint64

func (s *byteSet) add(c byte)      { s[c>>6] |= 1 << (c & 63) }
func (s *byteSet) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }
func (s *byteSet) fill()           { *s = byteSet{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)} }

// mayRefuse reports whether the entry name of d can be None; when false,
// it is not.
func (d *dirInfo) mayRefuse(name string) bool {
	return len(name) == 0 || d.noneEnds.has(name[len(name)-1])
}

// childCheck is one final pattern element that decides an entry of a
// directory when the entry's name matches it, or (always) a rule covering
// the directory, which decides every entry not decided before it. Checks
// are flat and carry what a match needs, so the per-entry loop is a few
// string comparisons.
type childCheck struct {
	access Access
	rule   *rule
	always bool
	kind   segKind
	text   string // segLiteral: the name; segWild: the suffix (when simple)
	prefix string // segWild, simple: the prefix
	seg    *seg   // anything else
}

// lastByte returns the byte every name c matches ends with, if there is one.
func (c *childCheck) lastByte() (byte, bool) {
	switch {
	case c.always:
		return 0, false
	case c.kind == segLiteral:
		return c.text[len(c.text)-1], true
	case c.seg.kind == segWild && c.seg.suffix != "":
		return c.seg.suffix[len(c.seg.suffix)-1], true
	}
	return 0, false
}

// dirStates returns the rules' states at directory dir; the result is
// shared and must not be modified.
func (cp *policy) dirStates(dir string) states { return cp.dir(dir).s }

// dir returns the cached rule information of directory dir.
func (cp *policy) dir(dir string) *dirInfo {
	if len(cp.rules) == 0 {
		return &cp.noRules
	}
	if d := cp.last.Load(); d != nil && d.path == dir {
		return d // the directory asked about last: the common case in a walk or a shell
	}
	c := cp.cache.Load()
	if v, ok := c.m.Load(dir); ok {
		d := v.(*dirInfo)
		cp.last.Store(d)
		return d
	}
	d := &dirInfo{path: dir, s: cp.walkSlow(dir, make(states, 0, len(cp.rules)))}
	d.self, d.selfRule = cp.decide(d.s)
	// Last rule first: the first check that decides an entry wins.
	for i := len(cp.rules) - 1; i >= 0; i-- {
		r, si := &cp.rules[i], d.s[i]
		if si == 0 {
			continue
		}
		if si&r.done != 0 {
			d.checks = append(d.checks, childCheck{access: r.Access, rule: r, always: true})
			break
		}
		for live := si &^ (r.done | r.anyMask); live != 0; live &= live - 1 {
			j := bits.TrailingZeros64(live)
			if r.closure(1<<(j+1))&r.done == 0 {
				continue
			}
			sg := &r.segs[j]
			c := childCheck{access: r.Access, rule: r, kind: sg.kind, seg: sg}
			switch {
			case sg.kind == segLiteral:
				c.text = sg.text
			case sg.kind == segWild && sg.simple:
				c.prefix, c.text = sg.prefix, sg.suffix
			case sg.kind == segWild:
				c.kind = segGlob // general case: seg.match
			}
			d.checks = append(d.checks, c)
		}
	}
	// An entry is None if a None check decides it, or if no check does and
	// the default is None (impossible when a check covers the directory).
	covered := false
	for i := range d.checks {
		c := &d.checks[i]
		covered = covered || c.always
		d.someNone = d.someNone || c.access == None
		b, ok := c.lastByte()
		switch {
		case ok:
			d.ends.add(b)
			if c.access == None {
				d.noneEnds.add(b)
			}
		case c.access == None:
			d.noneEnds.fill()
			d.ends.fill()
		default:
			d.ends.fill()
		}
	}
	if !covered && cp.def == None {
		d.someNone = true
		d.noneEnds.fill()
	}
	if c.n.Add(1) > maxCachedDirs {
		cp.cache.Store(new(dirCache))
	} else {
		c.m.Store(dir, d)
	}
	cp.last.Store(d)
	return d
}

// access returns the access of canonical path p and the deciding rule
// (nil for the default).
func (cp *policy) access(p string) (Access, *rule) {
	if len(cp.rules) == 0 {
		return cp.def, nil
	}
	if p == "/" {
		return cp.decide(cp.dirStates("/"))
	}
	dir, name := semfs.Split(p)
	return cp.childRule(cp.dir(dir), name)
}

// refused reports whether the rules refuse canonical p (give it None),
// and the deciding rule when they do (nil for the default). It is access
// for callers that only need to know that, and skips the checks for a name
// no refusing check can match.
func (cp *policy) refused(p string) (bool, *rule) {
	return cp.refusedAt(p, strings.LastIndexByte(p, '/'))
}

// refusedAt is refused given the index of p's last "/".
func (cp *policy) refusedAt(p string, slash int) (bool, *rule) {
	if len(cp.rules) == 0 || p == "/" {
		a, r := cp.access(p)
		return a == None, r
	}
	dir, name := "/", p[slash+1:]
	if slash > 0 {
		dir = p[:slash]
	}
	d := cp.dir(dir)
	if !d.mayRefuse(name) {
		return false, nil
	}
	a, r := cp.childRule(d, name)
	return a == None, r
}

// child returns the access of the entry name of directory d.
func (cp *policy) child(d *dirInfo, name string) Access {
	a, _ := cp.childRule(d, name)
	return a
}

// childRule returns the access of the entry name of directory d and the
// deciding rule (nil for the default).
func (cp *policy) childRule(d *dirInfo, name string) (Access, *rule) {
	if len(name) > 0 && !d.ends.has(name[len(name)-1]) {
		return cp.def, nil // no check can match name
	}
	for i := range d.checks {
		c := &d.checks[i]
		var hit bool
		switch {
		case c.always:
			hit = true
		case c.kind == segLiteral:
			hit = name == c.text
		case c.kind == segStar:
			hit = true
		case c.kind == segWild:
			// The last byte first: it rejects most names without a
			// call to compare memory.
			hit = len(name) >= len(c.prefix)+len(c.text) &&
				(c.text == "" || name[len(name)-1] == c.text[len(c.text)-1]) &&
				name[:len(c.prefix)] == c.prefix && name[len(name)-len(c.text):] == c.text
		default:
			hit = c.seg.match(name)
		}
		if hit {
			return c.access, c.rule
		}
	}
	return cp.def, nil
}

// walkSlow steps every rule through every element of p.
func (cp *policy) walkSlow(p string, buf states) states {
	s := buf[:0]
	for i := range cp.rules {
		s = append(s, cp.rules[i].start)
	}
	if p == "/" {
		return s
	}
	rest := p[1:]
	for rest != "" {
		name := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			name, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		for i := range cp.rules {
			s[i] = cp.rules[i].step(s[i], name)
		}
	}
	return s
}

// decide returns the access and the deciding rule (nil for the default)
// given the rules' states at a path.
func (cp *policy) decide(s states) (Access, *rule) {
	for i := len(cp.rules) - 1; i >= 0; i-- {
		if s[i]&cp.rules[i].done != 0 {
			return cp.rules[i].Access, &cp.rules[i]
		}
	}
	return cp.def, nil
}

// grantsBelow reports whether, at a path whose states are s, some path
// strictly below could be granted (Read or Write): that is what makes a
// None directory traversable.
func (cp *policy) grantsBelow(s states) bool {
	for i := len(cp.rules) - 1; i >= 0; i-- {
		r := &cp.rules[i]
		if s[i] == 0 {
			continue
		}
		if s[i]&r.done != 0 {
			// r covers the whole subtree; earlier rules cannot win below.
			return r.Access != None
		}
		if r.Access != None {
			return true // the pattern can still match something deeper
		}
	}
	return cp.def != None
}

// stepAll returns the states after the entry name of a directory whose
// states are s, in buf.
func (cp *policy) stepAll(s states, name string, buf states) states {
	c := buf[:0]
	for i := range cp.rules {
		c = append(c, cp.rules[i].step(s[i], name))
	}
	return c
}

// restrictsBelow reports whether some path at or below the path whose
// states are s could be less than Write (so a recursive operation must look
// at every path).
func (cp *policy) restrictsBelow(s states) bool {
	for i := len(cp.rules) - 1; i >= 0; i-- {
		r := &cp.rules[i]
		if s[i] == 0 {
			continue
		}
		if s[i]&r.done != 0 {
			return r.Access != Write
		}
		if r.Access != Write {
			return true
		}
	}
	return cp.def != Write
}

// refusal builds the ErrPermission of a path rule, explained by the rule's
// note; no name beyond p appears.
func refusal(op, p string, a Access, r *rule) error {
	detail := "not granted by the access policy"
	if a == Read {
		detail = "read-only by the access policy"
	}
	if r != nil && r.Note != "" {
		detail += ": " + r.Note
	}
	return semfs.PathErr(op, p, semfs.ErrPermission, detail)
}
