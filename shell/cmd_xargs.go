package shell

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/interp"
)

// xargs: build command lines from stdin and run them — builtins only, no
// host programs. -n MAX, -0, -I REPLACE (one input line per command), -d
// DELIM, -r (--no-run-if-empty). Items are separated by blanks and
// newlines, with '...', "..." and backslash quoting. The default command
// is echo. Exit status 123 if a command failed, 127 if it does not exist.

func init() { register("xargs", cmdXargs) }

func cmdXargs(c *call) int {
	// Options stop at the first operand (the command).
	var cmd []string
	var optArgs []string
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if a == "--" {
			cmd = c.args[i+1:]
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			cmd = c.args[i:]
			break
		}
		optArgs = append(optArgs, a)
		if (a == "-n" || a == "-I" || a == "-d" || a == "-L") && i+1 < len(c.args) {
			i++
			optArgs = append(optArgs, c.args[i])
		}
	}
	saved := c.args
	c.args = optArgs
	o, ok := c.parse(optSpec{flags: "0rt", valued: "nIdL", long: map[string]bool{"null": false, "max-args": true, "replace": true,
		"delimiter": true, "no-run-if-empty": false, "max-lines": true},
		alias: map[string]string{"null": "0", "max-args": "n", "replace": "I", "delimiter": "d", "no-run-if-empty": "r", "max-lines": "L"}})
	c.args = saved
	if !ok {
		return 1
	}
	if len(cmd) == 0 {
		cmd = []string{"echo"}
	}
	data, err := io.ReadAll(c.stdin)
	if err != nil {
		c.errf("read error: %v", err)
		return 1
	}
	maxArgs := 0
	if v, ok := o.last("n"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			c.errf("invalid number \"%s\" for -n option", v)
			return 1
		}
		maxArgs = n
	}
	if v, ok := o.last("L"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			c.errf("invalid number \"%s\" for -L option", v)
			return 1
		}
		maxArgs = n // one item per line here: the common case
	}
	replace, hasReplace := o.last("I")
	var items []string
	switch {
	case hasReplace:
		// One line per command; quotes and backslashes still quote, but
		// blanks inside the line do not separate.
		for _, l := range lines(data) {
			l = strings.TrimLeft(l, " \t")
			if l == "" {
				continue
			}
			it, err := unquoteXargs(l, false)
			if err != nil {
				c.errf("%v", err)
				return 1
			}
			items = append(items, it...)
		}
		maxArgs = 1
	case o.has("0"):
		for _, it := range bytes.Split(data, []byte{0}) {
			items = append(items, string(it))
		}
		if len(items) > 0 && items[len(items)-1] == "" {
			items = items[:len(items)-1]
		}
	default:
		if d, ok := o.last("d"); ok {
			sep := unescapeDelim(d)
			items = strings.Split(string(data), sep)
			if len(items) > 0 && items[len(items)-1] == "" {
				items = items[:len(items)-1]
			}
		} else {
			items, err = unquoteXargs(string(data), true)
			if err != nil {
				c.errf("%v", err)
				return 1
			}
		}
	}
	if len(items) == 0 && (o.has("r") || hasReplace) {
		return 0
	}
	status := 0
	run := func(args []string) bool {
		argv := append(append([]string{}, cmd...), args...)
		if hasReplace {
			argv = make([]string, len(cmd))
			for i, a := range cmd {
				argv[i] = strings.ReplaceAll(a, replace, args[0])
			}
		}
		// Arguments are C strings to GNU xargs: a NUL ends them.
		for i, a := range argv {
			if j := strings.IndexByte(a, 0); j >= 0 {
				argv[i] = a[:j]
			}
		}
		code := c.runBuiltin(argv)
		switch {
		case code == 127:
			status = 127
			return false
		case code == 255:
			status = 124
			return false
		case code != 0:
			status = 123
		}
		return c.ctx.Err() == nil
	}
	if len(items) == 0 {
		run(nil)
		return status
	}
	step := len(items)
	if maxArgs > 0 {
		step = maxArgs
	}
	for i := 0; i < len(items); i += step {
		if !run(items[i:min(i+step, len(items))]) {
			break
		}
	}
	return status
}

// runBuiltin runs argv as a command of this shell, writing to the call's
// output: a semfs builtin, or one of the interpreter's (echo, printf, ...).
func (c *call) runBuiltin(argv []string) int {
	c.out.Flush()
	if b, ok := builtins[argv[0]]; ok && !strings.HasPrefix(argv[0], "\x00") {
		sub := *c
		sub.name, sub.args = argv[0], argv[1:]
		sub.stdin = strings.NewReader("")
		code := b(&sub)
		sub.out.Flush()
		return code
	}
	if interp.IsBuiltin(argv[0]) {
		switch argv[0] {
		case "echo", "printf", "true", "false", "test", "[", ":", "pwd":
			err := c.hc.Builtin(c.ctx, argv)
			if err == nil {
				return 0
			}
			var es interp.ExitStatus
			if errors.As(err, &es) {
				return int(es)
			}
			if code, ok := interp.IsExitStatus(err); ok {
				return int(code)
			}
			return 1
		}
	}
	c.errf("%s: No such file or directory (xargs runs the shell's builtins only)", argv[0])
	return 127
}

func unescapeDelim(d string) string {
	switch d {
	case `\n`:
		return "\n"
	case `\t`:
		return "\t"
	case `\0`:
		return "\x00"
	}
	return d
}

// unquoteXargs splits xargs input into items: blanks and newlines separate
// (when blanks is set), quotes and backslashes quote.
func unquoteXargs(s string, blanks bool) ([]string, error) {
	var items []string
	var cur strings.Builder
	inItem := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case blanks && (ch == ' ' || ch == '\t' || ch == '\n'):
			if inItem {
				items = append(items, cur.String())
				cur.Reset()
				inItem = false
			}
		case ch == '\'' || ch == '"':
			j := strings.IndexByte(s[i+1:], ch)
			if j < 0 {
				kind := "single"
				if ch == '"' {
					kind = "double"
				}
				return nil, errors.New("unmatched " + kind + " quote; by default quotes are special to xargs unless you use the -0 option")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inItem = true
		case ch == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inItem = true
		default:
			cur.WriteByte(ch)
			inItem = true
		}
	}
	if inItem {
		items = append(items, cur.String())
	}
	return items, nil
}
