package shell

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// wc: -l -w -c (-m counts characters); all of -l -w -c by default. Column
// width follows GNU wc: the digits of the total size of the regular files
// named, at least 7 when one input is not a regular file (stdin), and 1
// when a single input gets a single count. Known difference: "wc < FILE"
// sees a pipe here, so it uses width 7 where GNU sees a regular file.

func init() { register("wc", cmdWc) }

type wcCounts struct{ lines, words, chars, bytes int64 }

func cmdWc(c *call) int {
	o, ok := c.parse(optSpec{flags: "lwcm", long: map[string]bool{"lines": false, "words": false, "bytes": false, "chars": false},
		alias: map[string]string{"lines": "l", "words": "w", "bytes": "c", "chars": "m"}})
	if !ok {
		return 1
	}
	pl, pw, pc, pm := o.has("l"), o.has("w"), o.has("c"), o.has("m")
	if !pl && !pw && !pc && !pm {
		pl, pw, pc = true, true, true
	}
	nCounts := 0
	for _, b := range []bool{pl, pw, pc, pm} {
		if b {
			nCounts++
		}
	}
	args := o.operands
	named := len(args) > 0
	if !named {
		args = []string{"-"}
	}
	// Width from the inputs' sizes, as GNU computes it.
	width := 1
	if !(len(args) == 1 && nCounts == 1) {
		minW, total := 1, int64(0)
		for _, a := range args {
			if a == "-" {
				minW = 7
				continue
			}
			_, info, err := c.stat(a)
			if err != nil {
				continue
			}
			if !info.Mode().IsRegular() {
				minW = 7
			} else {
				total += info.Size()
			}
		}
		for ; total >= 10; total /= 10 {
			width++
		}
		width = max(width, minW)
	}
	print := func(k wcCounts, name string) {
		var parts []string
		for _, x := range []struct {
			on bool
			v  int64
		}{{pl, k.lines}, {pw, k.words}, {pm, k.chars}, {pc, k.bytes}} {
			if x.on {
				parts = append(parts, fmt.Sprintf("%*s", width, strconv.FormatInt(x.v, 10)))
			}
		}
		c.out.WriteString(strings.Join(parts, " "))
		if name != "" {
			c.out.WriteString(" " + name)
		}
		c.out.WriteString("\n")
	}
	var total wcCounts
	status := 0
	for _, a := range args {
		data, err := c.readFile(a)
		if err != nil {
			c.pathErr("%s: ", a, err)
			status = 1
			continue
		}
		var k wcCounts
		if pw || pm {
			k = wcCount(data)
		} else {
			k = wcCounts{lines: int64(bytes.Count(data, []byte{'\n'})), bytes: int64(len(data))}
		}
		total.lines += k.lines
		total.words += k.words
		total.chars += k.chars
		total.bytes += k.bytes
		name := a
		if !named {
			name = ""
		}
		print(k, name)
	}
	if len(args) > 1 {
		print(total, "total")
	}
	return status
}

func wcCount(data []byte) wcCounts {
	k := wcCounts{bytes: int64(len(data))}
	inWord := false
	for i := 0; i < len(data); {
		var r rune
		n := 1
		if b := data[i]; b < utf8.RuneSelf {
			r = rune(b)
		} else {
			r, n = utf8.DecodeRune(data[i:])
		}
		i += n
		k.chars++
		if r == '\n' {
			k.lines++
		}
		if isSpace(r) {
			inWord = false
		} else if !inWord {
			inWord = true
			k.words++
		}
	}
	return k
}

// isSpace is glibc's iswspace in a UTF-8 locale: no-break spaces are not
// spaces.
func isSpace(r rune) bool {
	switch r {
	case 0xa0, 0x2007, 0x202f, 0x85:
		return false
	}
	return unicode.IsSpace(r)
}
