package shell

import "fmt"

// uniq: -c (count, "%7d "), -d (only repeated), -u (only unique), -i.

func init() { register("uniq", cmdUniq) }

func cmdUniq(c *call) int {
	o, ok := c.parse(optSpec{flags: "cdui", long: map[string]bool{"count": false, "repeated": false, "unique": false, "ignore-case": false},
		alias: map[string]string{"count": "c", "repeated": "d", "unique": "u", "ignore-case": "i"}})
	if !ok {
		return 1
	}
	in := "-"
	if len(o.operands) > 0 {
		in = o.operands[0]
	}
	data, err := c.readFile(in)
	if err != nil {
		c.pathErr("%s: ", in, err)
		return 1
	}
	count, dups, uniq, icase := o.has("c"), o.has("d"), o.has("u"), o.has("i")
	eq := func(a, b string) bool {
		if icase {
			return equalFoldASCII(a, b)
		}
		return a == b
	}
	ls := lines(data)
	for i := 0; i < len(ls); {
		j := i + 1
		for j < len(ls) && eq(ls[i], ls[j]) {
			j++
		}
		n := j - i
		if (!dups || n > 1) && (!uniq || n == 1) {
			if count {
				fmt.Fprintf(c.out, "%7d %s\n", n, ls[i])
			} else {
				c.out.WriteString(ls[i] + "\n")
			}
		}
		i = j
	}
	return 0
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
