package shell

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// fnmatch matches name against a shell wildcard pattern as fnmatch(3)
// does without flags: * and ? match any character including "/" and a
// leading ".", [...] and [!...] are bracket expressions (with [:class:]),
// and a backslash quotes the next character. icase folds case.
func fnmatch(pattern, name string, icase bool) bool {
	if icase {
		pattern, name = strings.ToLower(pattern), strings.ToLower(name)
	}
	// "*.go": a suffix test.
	if len(pattern) > 1 && pattern[0] == '*' && !strings.ContainsAny(pattern[1:], "*?[\\") {
		return strings.HasSuffix(name, pattern[1:])
	}
	return match(pattern, name)
}

func match(p, s string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			if p == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if match(p, s[i:]) {
					return true
				}
				if i < len(s) {
					_, n := utf8.DecodeRuneInString(s[i:])
					i += n - 1
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			_, n := utf8.DecodeRuneInString(s)
			p, s = p[1:], s[n:]
		case '[':
			if s == "" {
				return false
			}
			r, n := utf8.DecodeRuneInString(s)
			ok, rest, valid := matchClass(p, r)
			if !valid {
				// An unclosed "[" is an ordinary character.
				if s[0] != '[' {
					return false
				}
				p, s = p[1:], s[1:]
				continue
			}
			if !ok {
				return false
			}
			p, s = rest, s[n:]
		case '\\':
			if len(p) > 1 {
				p = p[1:]
			}
			fallthrough
		default:
			if s == "" {
				return false
			}
			pr, pn := utf8.DecodeRuneInString(p)
			sr, sn := utf8.DecodeRuneInString(s)
			if pr != sr {
				return false
			}
			p, s = p[pn:], s[sn:]
		}
	}
	return s == ""
}

// matchClass matches r against the bracket expression at the start of p
// and returns the rest of the pattern.
func matchClass(p string, r rune) (matched bool, rest string, valid bool) {
	i := 1
	neg := false
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		neg = true
		i++
	}
	first := true
	for i < len(p) {
		if p[i] == ']' && !first {
			return matched != neg, p[i+1:], true
		}
		first = false
		if strings.HasPrefix(p[i:], "[:") {
			end := strings.Index(p[i+2:], ":]")
			if end >= 0 {
				if classMatch(p[i+2:i+2+end], r) {
					matched = true
				}
				i += 2 + end + 2
				continue
			}
		}
		lo, n := utf8.DecodeRuneInString(p[i:])
		if lo == '\\' && i+1 < len(p) {
			i++
			lo, n = utf8.DecodeRuneInString(p[i:])
		}
		i += n
		hi := lo
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			hi, n = utf8.DecodeRuneInString(p[i+1:])
			i += 1 + n
		}
		if lo <= r && r <= hi {
			matched = true
		}
	}
	return false, "", false
}

func classMatch(class string, r rune) bool {
	switch class {
	case "alpha":
		return unicode.IsLetter(r)
	case "digit":
		return r >= '0' && r <= '9'
	case "alnum":
		return unicode.IsLetter(r) || unicode.IsDigit(r)
	case "upper":
		return unicode.IsUpper(r)
	case "lower":
		return unicode.IsLower(r)
	case "space":
		return isSpace(r)
	case "blank":
		return r == ' ' || r == '\t'
	case "punct":
		return r < 128 && unicode.IsPunct(r) || r < 128 && unicode.IsSymbol(r)
	case "xdigit":
		return strings.ContainsRune("0123456789abcdefABCDEF", r)
	case "print":
		return unicode.IsPrint(r)
	case "cntrl":
		return unicode.IsControl(r)
	}
	return false
}
