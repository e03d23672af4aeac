package shell

import (
	"path"
	"strings"
)

// basename (-a, -s SUFFIX, -z) and dirname (-z). echo and printf are the
// interpreter's builtins; xargs runs them through the interpreter.

func init() {
	register("basename", cmdBasename)
	register("dirname", cmdDirname)
}

func cmdBasename(c *call) int {
	o, ok := c.parse(optSpec{flags: "az", valued: "s", long: map[string]bool{"multiple": false, "suffix": true, "zero": false},
		alias: map[string]string{"multiple": "a", "suffix": "s", "zero": "z"}})
	if !ok {
		return 1
	}
	args := o.operands
	if len(args) == 0 {
		c.errf("missing operand\nTry 'basename --help' for more information.")
		return 1
	}
	suffix, multi := "", o.has("a")
	if s, ok := o.last("s"); ok {
		suffix, multi = s, true
	}
	if !multi {
		if len(args) > 2 {
			c.errf("extra operand '%s'\nTry 'basename --help' for more information.", args[2])
			return 1
		}
		if len(args) == 2 {
			suffix = args[1]
		}
		args = args[:1]
	}
	end := "\n"
	if o.has("z") {
		end = "\x00"
	}
	for _, a := range args {
		b := baseName(a)
		if suffix != "" && b != suffix && strings.HasSuffix(b, suffix) {
			b = b[:len(b)-len(suffix)]
		}
		c.out.WriteString(b + end)
	}
	return 0
}

func baseName(a string) string {
	if a == "" {
		return ""
	}
	t := strings.TrimRight(a, "/")
	if t == "" {
		return "/"
	}
	return path.Base(t)
}

func cmdDirname(c *call) int {
	o, ok := c.parse(optSpec{flags: "z", long: map[string]bool{"zero": false}, alias: map[string]string{"zero": "z"}})
	if !ok {
		return 1
	}
	if len(o.operands) == 0 {
		c.errf("missing operand\nTry 'dirname --help' for more information.")
		return 1
	}
	end := "\n"
	if o.has("z") {
		end = "\x00"
	}
	for _, a := range o.operands {
		c.out.WriteString(dirName(a) + end)
	}
	return 0
}

func dirName(a string) string {
	t := strings.TrimRight(a, "/")
	if t == "" {
		if strings.HasPrefix(a, "/") {
			return "/"
		}
		return "."
	}
	i := strings.LastIndexByte(t, '/')
	if i < 0 {
		return "."
	}
	d := strings.TrimRight(t[:i], "/")
	if d == "" {
		return "/"
	}
	return d
}
