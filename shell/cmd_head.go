package shell

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// head and tail: -n N and -c N (head also -n -N, -c -N: all but the last
// N; tail also -n +K, -c +K: from the K-th on), the obsolete -N form, and
// "==> NAME <==" headers for several files (-q hides them, -v forces them).

func init() {
	register("head", func(c *call) int { return headTail(c, false) })
	register("tail", func(c *call) int { return headTail(c, true) })
}

func headTail(c *call, tail bool) int {
	// The obsolete "-5" form means "-n 5" (for tail only before a single
	// file, as GNU tail accepts it).
	obsolete := ""
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if a == "--" {
			break
		}
		if a == "-n" || a == "-c" || a == "--lines" || a == "--bytes" {
			i++
			continue
		}
		if len(a) > 1 && a[0] == '-' && a[1] >= '0' && a[1] <= '9' {
			obsolete = a[1:]
			c.args = append(append(append([]string{}, c.args[:i]...), "-n", a[1:]), c.args[i+1:]...)
			break
		}
	}
	o, ok := c.parse(optSpec{flags: "qv", valued: "nc", long: map[string]bool{"lines": true, "bytes": true, "quiet": false, "silent": false, "verbose": false},
		alias: map[string]string{"lines": "n", "bytes": "c", "quiet": "q", "silent": "q", "verbose": "v"}})
	if !ok {
		return 1
	}
	count, bytesMode, from, allBut := int64(10), false, false, false
	for _, x := range o.list {
		if x.name != "n" && x.name != "c" {
			continue
		}
		bytesMode = x.name == "c"
		v := x.val
		from, allBut = false, false
		switch {
		case tail && strings.HasPrefix(v, "+"):
			from = true
			v = v[1:]
		case !tail && strings.HasPrefix(v, "-"):
			allBut = true
			v = v[1:]
		case tail && strings.HasPrefix(v, "-"):
			v = v[1:]
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			what := "lines"
			if bytesMode {
				what = "bytes"
			}
			c.errf("invalid number of %s: '%s'", what, x.val)
			return 1
		}
		count = n
	}
	args := o.operands
	if tail && obsolete != "" && len(args) > 1 {
		c.errf("option used in invalid context -- %s", obsolete)
		return 1
	}
	if tail && count == 0 && !from {
		return 0 // GNU tail reads nothing when it will print nothing
	}
	if len(args) == 0 {
		args = []string{"-"}
	}
	headers := (len(args) > 1 || o.has("v")) && !o.has("q")
	status := 0
	first := true
	for _, a := range args {
		data, err := c.readFile(a)
		if err != nil {
			c.pathErr("cannot open '%s' for reading: ", a, err)
			status = 1
			continue
		}
		if headers {
			name := a
			if a == "-" {
				name = "standard input"
			}
			if !first {
				c.out.WriteString("\n")
			}
			fmt.Fprintf(c.out, "==> %s <==\n", name)
		}
		first = false
		c.out.Write(cutPart(data, count, bytesMode, tail, from, allBut))
	}
	return status
}

// cutPart selects the part of data head or tail prints.
func cutPart(data []byte, n int64, bytesMode, tail, from, allBut bool) []byte {
	size := int64(len(data))
	if bytesMode {
		switch {
		case tail && from:
			if n == 0 {
				n = 1
			}
			return data[min(n-1, size):]
		case tail:
			return data[size-min(n, size):]
		case allBut:
			return data[:size-min(n, size)]
		default:
			return data[:min(n, size)]
		}
	}
	// Offsets just past each newline.
	switch {
	case tail && from:
		if n == 0 {
			n = 1
		}
		off := 0
		for k := int64(1); k < n; k++ {
			i := bytes.IndexByte(data[off:], '\n')
			if i < 0 {
				return nil
			}
			off += i + 1
		}
		return data[off:]
	case tail:
		if n == 0 {
			return nil
		}
		end := len(data)
		if end > 0 && data[end-1] == '\n' {
			end--
		}
		start := end
		for k := int64(0); k < n; k++ {
			i := bytes.LastIndexByte(data[:start], '\n')
			if i < 0 {
				return data
			}
			start = i
		}
		return data[start+1:]
	case allBut:
		// Drop the last n lines (a final line without newline counts).
		var ends []int
		for i, b := range data {
			if b == '\n' {
				ends = append(ends, i+1)
			}
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			ends = append(ends, len(data))
		}
		keep := int64(len(ends)) - n
		if keep <= 0 {
			return nil
		}
		return data[:ends[keep-1]]
	default:
		off := 0
		for k := int64(0); k < n; k++ {
			i := bytes.IndexByte(data[off:], '\n')
			if i < 0 {
				return data
			}
			off += i + 1
		}
		return data[:off]
	}
}
