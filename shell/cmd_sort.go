package shell

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
)

// sort: -n -r -u -f -b -s -k POS1[,POS2][nrfb] -t SEP -o? no. Comparison is
// by bytes (the C.UTF-8 locale); keys that compare equal fall back to the
// whole line unless -s, as GNU sort does.

func init() { register("sort", cmdSort) }

type sortKey struct {
	sf, sc, ef, ec       int // 1-based fields and characters; ef 0 = end of line, ec 0 = end of field
	numeric, rev, fold   bool
	blankStart, blankEnd bool
}

func cmdSort(c *call) int {
	o, ok := c.parse(optSpec{flags: "nrufbs", valued: "kt", long: map[string]bool{
		"numeric-sort": false, "reverse": false, "unique": false, "ignore-case": false, "ignore-leading-blanks": false,
		"stable": false, "key": true, "field-separator": true,
	}, alias: map[string]string{"numeric-sort": "n", "reverse": "r", "unique": "u", "ignore-case": "f",
		"ignore-leading-blanks": "b", "stable": "s", "key": "k", "field-separator": "t"}})
	if !ok {
		return 2
	}
	global := sortKey{numeric: o.has("n"), rev: o.has("r"), fold: o.has("f"), blankStart: o.has("b"), blankEnd: o.has("b")}
	sep := -1
	for _, t := range o.all("t") {
		if len(t) != 1 {
			c.errf("multi-character tab '%s'", t)
			return 2
		}
		if sep >= 0 && sep != int(t[0]) {
			c.errf("incompatible tabs")
			return 2
		}
		sep = int(t[0])
	}
	var keys []sortKey
	for _, k := range o.all("k") {
		key, ok := parseKey(k, global)
		if !ok {
			c.errf("invalid number at field start: invalid count at start of '%s'", k)
			return 2
		}
		keys = append(keys, key)
	}
	args := o.operands
	if len(args) == 0 {
		args = []string{"-"}
	}
	var all []string
	status := 0
	for _, a := range args {
		data, err := c.readFile(a)
		if err != nil {
			c.pathErr("cannot read: %s: ", a, err)
			return 2
		}
		all = append(all, lines(data)...)
	}
	stable, unique := o.has("s"), o.has("u")
	cmpKeys := func(a, b string) int {
		if len(keys) == 0 {
			return compareField(a, b, global)
		}
		for _, k := range keys {
			if r := compareField(extractKey(a, k, sep), extractKey(b, k, sep), k); r != 0 {
				return r
			}
		}
		return 0
	}
	cmp := func(a, b string) int {
		if r := cmpKeys(a, b); r != 0 || stable || unique {
			return r
		}
		r := strings.Compare(a, b)
		if global.rev {
			r = -r
		}
		return r
	}
	slices.SortStableFunc(all, cmp)
	for i, l := range all {
		if unique && i > 0 && cmpKeys(all[i-1], l) == 0 {
			continue
		}
		c.out.WriteString(l)
		c.out.WriteByte('\n')
	}
	return status
}

func parseKey(s string, global sortKey) (sortKey, bool) {
	k := sortKey{}
	start, end, hasEnd := strings.Cut(s, ",")
	var opts string
	num := func(x string) (int, int, string, bool) {
		i := 0
		for i < len(x) && x[i] >= '0' && x[i] <= '9' {
			i++
		}
		f, err := strconv.Atoi(x[:i])
		if err != nil {
			return 0, 0, "", false
		}
		x = x[i:]
		ch := 0
		if strings.HasPrefix(x, ".") {
			j := 1
			for j < len(x) && x[j] >= '0' && x[j] <= '9' {
				j++
			}
			ch, _ = strconv.Atoi(x[1:j])
			x = x[j:]
		}
		return f, ch, x, true
	}
	var o1, o2 string
	var ok bool
	k.sf, k.sc, o1, ok = num(start)
	if !ok || k.sf < 1 {
		return k, false
	}
	if k.sc == 0 {
		k.sc = 1
	}
	if hasEnd {
		k.ef, k.ec, o2, ok = num(end)
		if !ok {
			return k, false
		}
	}
	opts = o1 + o2
	for _, ch := range o1 {
		if ch == 'b' {
			k.blankStart = true
		}
	}
	for _, ch := range o2 {
		if ch == 'b' {
			k.blankEnd = true
		}
	}
	for _, ch := range opts {
		switch ch {
		case 'n':
			k.numeric = true
		case 'r':
			k.rev = true
		case 'f':
			k.fold = true
		}
	}
	if opts == "" {
		k.numeric, k.rev, k.fold = global.numeric, global.rev, global.fold
		k.blankStart, k.blankEnd = global.blankStart, global.blankEnd
	}
	return k, true
}

// fieldStarts returns the byte offset where each field begins, and the end
// of the line. Without a separator a field is a run of non-blanks with the
// blanks before it.
func fieldStarts(line string, sep int) []int {
	starts := []int{0}
	if sep >= 0 {
		for i := 0; i < len(line); i++ {
			if int(line[i]) == sep {
				starts = append(starts, i+1)
			}
		}
		return starts
	}
	i := 0
	for i < len(line) {
		for i < len(line) && isBlank(line[i]) {
			i++
		}
		for i < len(line) && !isBlank(line[i]) {
			i++
		}
		if i < len(line) {
			starts = append(starts, i)
		}
	}
	return starts
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' }

func extractKey(line string, k sortKey, sep int) string {
	starts := fieldStarts(line, sep)
	fieldEnd := func(f int) int { // end of field f (1-based), without its separator
		if f < len(starts) {
			e := starts[f]
			if sep >= 0 {
				e--
			}
			return e
		}
		return len(line)
	}
	if k.sf > len(starts) {
		return ""
	}
	b := starts[k.sf-1]
	if k.blankStart {
		for b < len(line) && isBlank(line[b]) && b < fieldEnd(k.sf) {
			b++
		}
	}
	b = min(b+k.sc-1, fieldEnd(k.sf))
	e := len(line)
	if k.ef > 0 {
		if k.ef > len(starts) {
			e = len(line)
		} else if k.ec == 0 {
			e = fieldEnd(k.ef)
		} else {
			s := starts[k.ef-1]
			if k.blankEnd {
				for s < len(line) && isBlank(line[s]) {
					s++
				}
			}
			e = min(s+k.ec, fieldEnd(k.ef))
		}
	}
	if e < b {
		return ""
	}
	return line[b:e]
}

func compareField(a, b string, k sortKey) int {
	var r int
	switch {
	case k.numeric:
		r = compareNum(a, b)
	case k.fold:
		r = bytes.Compare(bytes.ToUpper([]byte(a)), bytes.ToUpper([]byte(b)))
	default:
		if k.blankStart && len(a)+len(b) > 0 {
			a, b = strings.TrimLeft(a, " \t"), strings.TrimLeft(b, " \t")
		}
		r = strings.Compare(a, b)
	}
	if k.rev {
		r = -r
	}
	return r
}

// compareNum compares the leading numbers of a and b as GNU sort -n does:
// blanks, an optional minus sign, digits and an optional fraction; no
// number is zero.
func compareNum(a, b string) int {
	x, y := leadingNum(a), leadingNum(b)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func leadingNum(s string) float64 {
	s = strings.TrimLeft(s, " \t")
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(s[:i], "."), 64)
	if err != nil {
		return 0
	}
	return v
}
