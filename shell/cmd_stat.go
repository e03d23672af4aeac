package shell

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"
)

// stat: GNU's default output, and -c/--format, --printf with %n %N %s %b
// %B %o %f %F %a %A %h %u %g %U %G %i %d %x %X %y %Y %z %Z %w %W %%.
// Differences: a virtual tree has no device or inode numbers (shown as 0),
// and access, change and birth times are the modification time.

func init() { register("stat", cmdStat) }

func cmdStat(c *call) int {
	o, ok := c.parse(optSpec{valued: "c", flags: "L", long: map[string]bool{"format": true, "printf": true, "dereference": false},
		alias: map[string]string{"format": "c", "dereference": "L"}})
	if !ok {
		return 1
	}
	if len(o.operands) == 0 {
		c.errf("missing operand\nTry 'stat --help' for more information.")
		return 1
	}
	format, hasFormat := o.last("c")
	printf, hasPrintf := o.last("printf")
	status := 0
	for _, a := range o.operands {
		p, info, err := c.stat(a)
		if err != nil {
			c.pathErr("cannot statx '%s': ", a, err)
			status = 1
			continue
		}
		switch {
		case hasPrintf:
			c.out.WriteString(c.statFormat(unescapeC(printf), a, p, info))
		case hasFormat:
			c.out.WriteString(c.statFormat(format, a, p, info) + "\n")
		default:
			c.out.WriteString(c.statFormat(statDefault, a, p, info))
		}
	}
	return status
}

const statDefault = "  File: %N\n  Size: %-10s\tBlocks: %-10b IO Block: %-6o %F\nDevice: 0,0\tInode: %-11i Links: %h\n" +
	"Access: (%04a/%10.10A)  Uid: (%5u/%8U)   Gid: (%5g/%8G)\nAccess: %x\nModify: %y\nChange: %z\n Birth: %w\n"

func (c *call) statFormat(f, name, p string, info fs.FileInfo) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		// Flags and width: %-10s, %04a, %10.10A.
		j := i + 1
		for j < len(f) && strings.IndexByte("-+ #0123456789.", f[j]) >= 0 {
			j++
		}
		if j >= len(f) {
			b.WriteString(f[i:])
			break
		}
		spec := f[i+1 : j]
		verb := f[j]
		i = j
		var v string
		num := false
		switch verb {
		case '%':
			b.WriteByte('%')
			continue
		case 'n':
			v = name
		case 'N':
			v = "'" + name + "'"
			if !strings.Contains(name, "'") && isPlainName(name) {
				v = name
			}
		case 's':
			v, num = strconv.FormatInt(diskSize(info), 10), true
		case 'b':
			v, num = strconv.FormatInt(diskBlocks(info)*2, 10), true
		case 'B':
			v, num = "512", true
		case 'o':
			v, num = "4096", true
		case 'f':
			v = strconv.FormatUint(uint64(rawMode(info.Mode())), 16)
		case 'F':
			switch {
			case info.IsDir():
				v = "directory"
			case info.Size() == 0:
				v = "regular empty file"
			default:
				v = "regular file"
			}
		case 'a':
			v, num = strconv.FormatUint(uint64(info.Mode().Perm()), 8), true
		case 'A':
			v = modeString(info.Mode())
		case 'h':
			v, num = strconv.Itoa(c.links(p, info)), true
		case 'u', 'g':
			v, num = "0", true
		case 'U':
			v = c.s.opts.Owner
		case 'G':
			v = c.s.opts.Group
		case 'i', 'd':
			v, num = "0", true
		case 'x', 'y', 'z', 'w':
			v = statTime(info.ModTime())
		case 'X', 'Y', 'Z', 'W':
			v, num = strconv.FormatInt(info.ModTime().Unix(), 10), true
		default:
			v = "?"
		}
		if spec == "" {
			b.WriteString(v)
			continue
		}
		if num {
			n, _ := strconv.ParseInt(v, 10, 64)
			if verb == 'a' {
				n, _ = strconv.ParseInt(v, 8, 64)
				fmt.Fprintf(&b, "%"+spec+"o", n)
				continue
			}
			fmt.Fprintf(&b, "%"+spec+"d", n)
			continue
		}
		fmt.Fprintf(&b, "%"+spec+"s", v)
	}
	return b.String()
}

func isPlainName(s string) bool {
	for _, r := range s {
		if r <= ' ' || strings.ContainsRune("'\"\\$`!*?[]{}()<>|&;~#", r) {
			return false
		}
	}
	return true
}

func rawMode(m fs.FileMode) uint32 {
	v := uint32(m.Perm())
	if m.IsDir() {
		return v | 0o040000
	}
	return v | 0o100000
}

func statTime(t time.Time) string {
	return t.Local().Format("2006-01-02 15:04:05.000000000 -0700")
}

// unescapeC interprets the backslash escapes of stat --printf.
func unescapeC(s string) string {
	r := strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`, `\"`, `"`, `\0`, "\x00")
	return r.Replace(s)
}
