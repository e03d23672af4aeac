package shell

import (
	"io"
	"strconv"
)

// tr: translate, delete (-d) and squeeze (-s) bytes; -c complements SET1.
// Sets take ranges (a-z), escapes (\n \t \\ \NNN) and classes ([:alpha:]
// [:digit:] [:alnum:] [:upper:] [:lower:] [:space:] [:blank:] [:punct:]).
// Like GNU tr it works on bytes.

func init() { register("tr", cmdTr) }

func cmdTr(c *call) int {
	o, ok := c.parse(optSpec{flags: "dscC", long: map[string]bool{"delete": false, "squeeze-repeats": false, "complement": false},
		alias: map[string]string{"delete": "d", "squeeze-repeats": "s", "complement": "c"}})
	if !ok {
		return 1
	}
	del, squeeze, comp := o.has("d"), o.has("s"), o.has("c") || o.has("C")
	args := o.operands
	need := 2
	if del && !squeeze || !del && squeeze && len(args) == 1 {
		need = 1
	}
	if len(args) < need {
		if len(args) == 0 {
			c.errf("missing operand\nTry 'tr --help' for more information.")
		} else {
			c.errf("missing operand after '%s'\nTry 'tr --help' for more information.", args[0])
		}
		return 1
	}
	if len(args) > need {
		c.errf("extra operand '%s'\nTry 'tr --help' for more information.", args[need])
		return 1
	}
	set1 := expandSet(args[0])
	if comp {
		var in [256]bool
		for _, b := range set1 {
			in[b] = true
		}
		set1 = set1[:0]
		for b := 0; b < 256; b++ {
			if !in[b] {
				set1 = append(set1, byte(b))
			}
		}
	}
	var set2 []byte
	if len(args) > 1 {
		set2 = expandSet(args[1])
	}
	var inSet1, inSq [256]bool
	for _, b := range set1 {
		inSet1[b] = true
	}
	var mapping [256]byte
	for i := range mapping {
		mapping[i] = byte(i)
	}
	translate := !del && len(set2) > 0
	if translate {
		for i, b := range set1 {
			j := min(i, len(set2)-1)
			mapping[b] = set2[j]
		}
	}
	sqSet := set1
	if len(set2) > 0 {
		sqSet = set2
	}
	for _, b := range sqSet {
		inSq[b] = true
	}
	data, err := io.ReadAll(c.stdin)
	if err != nil {
		c.errf("read error: %v", err)
		return 1
	}
	out := make([]byte, 0, len(data))
	last := -1
	for _, b := range data {
		if del && inSet1[b] {
			continue
		}
		b = mapping[b]
		if squeeze && inSq[b] && last == int(b) {
			continue
		}
		out = append(out, b)
		last = int(b)
	}
	c.out.Write(out)
	return 0
}

func expandSet(s string) []byte {
	var raw []byte
	var isLit []bool
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == '[' && i+1 < len(s) && s[i+1] == ':' {
			if end := indexFrom(s, ":]", i+2); end >= 0 {
				class := s[i+2 : end]
				for b := 0; b < 256; b++ {
					if b < 128 && classMatch(class, rune(b)) {
						raw = append(raw, byte(b))
						isLit = append(isLit, true)
					}
				}
				i = end + 1
				continue
			}
		}
		if ch == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				ch = '\n'
			case 't':
				ch = '\t'
			case 'r':
				ch = '\r'
			case 'a':
				ch = 7
			case 'b':
				ch = 8
			case 'f':
				ch = 12
			case 'v':
				ch = 11
			case '0', '1', '2', '3', '4', '5', '6', '7':
				j := i
				for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				v, _ := strconv.ParseUint(s[i:j], 8, 16)
				ch = byte(v)
				i = j - 1
			default:
				ch = s[i]
			}
			raw = append(raw, ch)
			isLit = append(isLit, true)
			continue
		}
		raw = append(raw, ch)
		isLit = append(isLit, ch != '-')
	}
	var out []byte
	for i := 0; i < len(raw); i++ {
		if i+2 < len(raw) && raw[i+1] == '-' && !isLit[i+1] && raw[i+2] >= raw[i] {
			for b := int(raw[i]); b <= int(raw[i+2]); b++ {
				out = append(out, byte(b))
			}
			i += 2
			continue
		}
		out = append(out, raw[i])
	}
	return out
}

func indexFrom(s, sub string, from int) int {
	for i := from; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
