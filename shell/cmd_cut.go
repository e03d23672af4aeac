package shell

import (
	"sort"
	"strconv"
	"strings"
)

// cut: -f LIST with -d DELIM (default TAB) and -s, -c/-b LIST (bytes, as
// GNU cut counts), --output-delimiter. LIST is N, N-, -M, N-M, separated
// by commas.

func init() { register("cut", cmdCut) }

type cutRange struct{ lo, hi int } // 1-based, hi 0 = to the end

func cmdCut(c *call) int {
	o, ok := c.parse(optSpec{flags: "s", valued: "dfcb", long: map[string]bool{"delimiter": true, "fields": true, "characters": true,
		"bytes": true, "only-delimited": false, "output-delimiter": true},
		alias: map[string]string{"delimiter": "d", "fields": "f", "characters": "c", "bytes": "b", "only-delimited": "s"}})
	if !ok {
		return 1
	}
	delim := "\t"
	if d, ok := o.last("d"); ok {
		if len(d) != 1 {
			c.errf("the delimiter must be a single character\nTry 'cut --help' for more information.")
			return 1
		}
		delim = d
	}
	var list string
	fields := false
	if v, ok := o.last("f"); ok {
		list, fields = v, true
	} else if v, ok := o.last("c"); ok {
		list = v
	} else if v, ok := o.last("b"); ok {
		list = v
	} else {
		c.errf("you must specify a list of bytes, characters, or fields\nTry 'cut --help' for more information.")
		return 1
	}
	ranges, ok := parseList(list)
	if !ok {
		c.errf("invalid field value '%s'\nTry 'cut --help' for more information.", list)
		return 1
	}
	outDelim := delim
	if v, ok := o.last("output-delimiter"); ok {
		outDelim = v
	} else if !fields {
		outDelim = ""
	}
	args := o.operands
	if len(args) == 0 {
		args = []string{"-"}
	}
	status := 0
	for _, a := range args {
		data, err := c.readFile(a)
		if err != nil {
			c.pathErr("%s: ", a, err)
			status = 1
			continue
		}
		for _, l := range lines(data) {
			if fields {
				if !strings.Contains(l, delim) {
					if !o.has("s") {
						c.out.WriteString(l + "\n")
					}
					continue
				}
				parts := strings.Split(l, delim)
				var sel []string
				for i, p := range parts {
					if inRanges(ranges, i+1) {
						sel = append(sel, p)
					}
				}
				c.out.WriteString(strings.Join(sel, outDelim) + "\n")
				continue
			}
			var b strings.Builder
			prev := -2
			for i := 0; i < len(l); i++ {
				if inRanges(ranges, i+1) {
					if outDelim != "" && prev >= 0 && prev != i-1 {
						b.WriteString(outDelim)
					}
					b.WriteByte(l[i])
					prev = i
				}
			}
			c.out.WriteString(b.String() + "\n")
		}
	}
	return status
}

func parseList(s string) ([]cutRange, bool) {
	var out []cutRange
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		var r cutRange
		var err error
		switch {
		case !isRange:
			r.lo, err = strconv.Atoi(part)
			r.hi = r.lo
		default:
			r.lo = 1
			if lo != "" {
				r.lo, err = strconv.Atoi(lo)
			}
			if err == nil && hi != "" {
				r.hi, err = strconv.Atoi(hi)
			}
			if lo == "" && hi == "" {
				return nil, false
			}
		}
		if err != nil || r.lo < 1 || (r.hi != 0 && r.hi < r.lo) {
			return nil, false
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].lo < out[j].lo })
	return out, true
}

func inRanges(rs []cutRange, n int) bool {
	for _, r := range rs {
		if n >= r.lo && (r.hi == 0 || n <= r.hi) {
			return true
		}
	}
	return false
}
