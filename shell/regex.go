package shell

import (
	"fmt"
	"strings"
)

// POSIX regular expressions (GNU grep's BRE and ERE dialects) translated to
// Go's RE2 syntax. Matching is done with Go's regexp in leftmost-longest
// mode, as POSIX requires. Back-references (\1) have no RE2 equivalent and
// are refused with a message; \< and \> become \b.

// translateRE converts one POSIX pattern to Go syntax.
func translateRE(p string, extended bool) (string, error) {
	var b strings.Builder
	atStart := true // at the start of the RE or of a group or alternative
	for i := 0; i < len(p); i++ {
		ch := p[i]
		start := atStart
		atStart = false
		switch ch {
		case '\\':
			if i+1 >= len(p) {
				return "", fmt.Errorf("trailing backslash (\\)")
			}
			i++
			e := p[i]
			switch {
			case e >= '1' && e <= '9':
				return "", fmt.Errorf("back-references (\\%c) are not supported; rewrite the pattern without them", e)
			case e == '<' || e == '>':
				b.WriteString(`\b`)
			case strings.IndexByte("bBwWsS", e) >= 0:
				b.WriteByte('\\')
				b.WriteByte(e)
			case !extended && strings.IndexByte("(){}|+?", e) >= 0:
				if e == '{' {
					j, iv := interval(p, i+1, true)
					if j < 0 {
						return "", fmt.Errorf("unmatched \\{")
					}
					b.WriteString(iv)
					i = j
					continue
				}
				b.WriteByte(e)
				if e == '(' || e == '|' {
					atStart = true
				}
			case isAlnum(e):
				b.WriteByte(e) // \x for an ordinary letter is the letter
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		case '[':
			j, cls, err := bracket(p, i)
			if err != nil {
				return "", err
			}
			b.WriteString(cls)
			i = j
		case '*':
			if start {
				b.WriteString(`\*`)
			} else {
				b.WriteByte('*')
			}
		case '^':
			if start || extended {
				b.WriteByte('^')
				atStart = true
			} else {
				b.WriteString(`\^`)
			}
		case '$':
			end := i+1 == len(p) || (!extended && strings.HasPrefix(p[i+1:], `\)`)) || (!extended && strings.HasPrefix(p[i+1:], `\|`))
			if end || extended {
				b.WriteByte('$')
			} else {
				b.WriteString(`\$`)
			}
		case '(', ')', '|', '+', '?':
			if !extended {
				b.WriteByte('\\')
				b.WriteByte(ch)
				continue
			}
			if (ch == '+' || ch == '?') && start {
				b.WriteByte('\\')
				b.WriteByte(ch)
				continue
			}
			b.WriteByte(ch)
			if ch == '(' || ch == '|' {
				atStart = true
			}
		case '{':
			if !extended || start {
				b.WriteString(`\{`)
				continue
			}
			j, iv := interval(p, i+1, false)
			if j < 0 {
				b.WriteString(`\{`)
				continue
			}
			b.WriteString(iv)
			i = j
		case '}':
			b.WriteString(`\}`)
		case '.':
			b.WriteByte('.')
		default:
			b.WriteByte(ch)
		}
	}
	return b.String(), nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// interval parses "m,n}" (BRE: "m,n\}") starting at i and returns the
// index of its last byte and its Go form, or -1 if it is not an interval.
func interval(p string, i int, bre bool) (int, string) {
	j := i
	for j < len(p) && (p[j] >= '0' && p[j] <= '9' || p[j] == ',') {
		j++
	}
	body := p[i:j]
	if bre {
		if !strings.HasPrefix(p[j:], `\}`) {
			return -1, ""
		}
		j++
	} else if j >= len(p) || p[j] != '}' {
		return -1, ""
	}
	if body == "" || strings.Count(body, ",") > 1 {
		return -1, ""
	}
	if strings.HasPrefix(body, ",") {
		body = "0" + body
	}
	return j, "{" + body + "}"
}

// bracket copies the bracket expression starting at p[i] == '[' into Go
// syntax and returns the index of its closing ']'.
func bracket(p string, i int) (int, string, error) {
	var b strings.Builder
	b.WriteByte('[')
	j := i + 1
	if j < len(p) && p[j] == '^' {
		b.WriteByte('^')
		j++
	}
	first := true
	for ; j < len(p); j++ {
		ch := p[j]
		switch {
		case ch == ']' && !first:
			b.WriteByte(']')
			return j, b.String(), nil
		case ch == '[' && j+1 < len(p) && (p[j+1] == ':' || p[j+1] == '.' || p[j+1] == '='):
			end := strings.Index(p[j+2:], string(p[j+1])+"]")
			if end < 0 {
				return 0, "", fmt.Errorf("unmatched [, [^, [:, [., or [=")
			}
			inner := p[j : j+2+end+2]
			if p[j+1] == ':' {
				b.WriteString(inner)
			} else {
				// [.x.] and [=x=]: the character itself.
				lit := p[j+2 : j+2+end]
				b.WriteString(escapeClassChar(lit))
			}
			j += 2 + end + 1
		case ch == '\\' || ch == '[' || ch == ']':
			b.WriteByte('\\')
			b.WriteByte(ch)
		default:
			b.WriteByte(ch)
		}
		first = false
	}
	return 0, "", fmt.Errorf("unmatched [, [^, [:, [., or [=")
}

func escapeClassChar(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\[]^-`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
