package shell

import (
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/semfs/semfs"
)

// ls: -l -a -A -R -1 -h -t -S -r -d. Output is one name per line (GNU ls
// writing to a pipe). -l prints mode, links, owner, group, size, GNU's
// default date (month day time for the last six months, month day year
// otherwise) and name; sizes of directories and block counts are shown as
// a 4 KiB-block filesystem (ext4) reports them.

func init() { register("ls", cmdLs) }

type lsEntry struct {
	name string // as displayed
	p    string // tree path
	info fs.FileInfo
}

type lsFlags struct {
	long, all, almost, recursive, human, byTime, bySize, reverse, dirOnly bool
}

func cmdLs(c *call) int {
	o, ok := c.parse(optSpec{flags: "laARh1tSrd", long: map[string]bool{
		"all": false, "almost-all": false, "recursive": false, "human-readable": false, "reverse": false, "directory": false,
	}, alias: map[string]string{"all": "a", "almost-all": "A", "recursive": "R", "human-readable": "h", "reverse": "r", "directory": "d"}})
	if !ok {
		return 2
	}
	f := lsFlags{long: o.has("l"), all: o.has("a"), almost: o.has("A"), recursive: o.has("R"), human: o.has("h"),
		byTime: o.has("t"), bySize: o.has("S"), reverse: o.has("r"), dirOnly: o.has("d")}
	args := o.operands
	if len(args) == 0 {
		args = []string{"."}
	}
	status := 0
	var files, dirs []lsEntry
	for _, a := range args {
		p, info, err := c.stat(a)
		if err != nil {
			c.pathErr("cannot access '%s': ", a, err)
			status = 2
			continue
		}
		e := lsEntry{name: a, p: p, info: info}
		if info.IsDir() && !f.dirOnly {
			dirs = append(dirs, e)
		} else {
			files = append(files, e)
		}
	}
	f.sort(files)
	f.sort(dirs)
	if len(files) > 0 {
		// GNU ls sizes the columns of the file operands over every
		// operand, directories included.
		f.print(c, files, false, dirs...)
	}
	header := len(args) > 1 || f.recursive
	for i, d := range dirs {
		if i > 0 || len(files) > 0 {
			c.out.WriteString("\n")
		}
		if st := c.lsDir(f, d, header); st > status {
			status = st
		}
	}
	return status
}

func (c *call) lsDir(f lsFlags, d lsEntry, header bool) int {
	if header {
		fmt.Fprintf(c.out, "%s:\n", d.name)
	}
	infos, err := c.readDir(d.p)
	if err != nil {
		c.pathErr("cannot open directory '%s': ", d.name, err)
		return 2
	}
	var ents []lsEntry
	if f.all {
		parent := semfs.Dir(d.p)
		pinfo, perr := c.s.nav.stat(c.ctx, parent)
		if perr != nil {
			pinfo = d.info
		}
		ents = append(ents, lsEntry{name: ".", p: d.p, info: d.info}, lsEntry{name: "..", p: parent, info: pinfo})
	}
	for _, fi := range infos {
		if strings.HasPrefix(fi.Name(), ".") && !f.all && !f.almost {
			continue
		}
		ents = append(ents, lsEntry{name: fi.Name(), p: semfs.Join(d.p, fi.Name()), info: fi})
	}
	f.sort(ents)
	f.print(c, ents, true)
	status := 0
	if f.recursive {
		for _, e := range ents {
			if e.info.IsDir() && e.name != "." && e.name != ".." {
				c.out.WriteString("\n")
				sub := e
				sub.name = strings.TrimSuffix(d.name, "/") + "/" + e.name
				if d.name == "/" {
					sub.name = "/" + e.name
				}
				if st := c.lsDir(f, sub, true); st > status {
					status = st
				}
			}
		}
	}
	return status
}

func (f lsFlags) sort(ents []lsEntry) {
	sort.SliceStable(ents, func(i, j int) bool {
		a, b := ents[i], ents[j]
		var less, more bool
		switch {
		case f.bySize:
			less, more = diskSize(a.info) > diskSize(b.info), diskSize(a.info) < diskSize(b.info)
		case f.byTime:
			ta, tb := a.info.ModTime(), b.info.ModTime()
			less, more = ta.After(tb), ta.Before(tb)
		}
		if !less && !more {
			less = a.name < b.name
			more = a.name > b.name
		}
		if f.reverse {
			return more
		}
		return less
	})
}

// print writes entries; total says whether a -l listing starts with the
// "total" line (directory listings do, file operands do not). widen are
// entries not printed whose fields still count for the column widths.
func (f lsFlags) print(c *call, ents []lsEntry, total bool, widen ...lsEntry) {
	if !f.long {
		for _, e := range ents {
			c.out.WriteString(e.name)
			c.out.WriteByte('\n')
		}
		return
	}
	if total {
		var blocks int64
		for _, e := range ents {
			blocks += diskBlocks(e.info)
		}
		if f.human {
			fmt.Fprintf(c.out, "total %s\n", humanSize(blocks*1024))
		} else {
			fmt.Fprintf(c.out, "total %d\n", blocks)
		}
	}
	all := append(append([]lsEntry{}, ents...), widen...)
	rows := make([][4]string, len(all)) // links, owner, group, size
	var w [4]int
	for i, e := range all {
		size := strconv.FormatInt(diskSize(e.info), 10)
		if f.human {
			size = humanSize(diskSize(e.info))
		}
		rows[i] = [4]string{strconv.Itoa(c.links(e.p, e.info)), c.s.opts.Owner, c.s.opts.Group, size}
		for k := range w {
			w[k] = max(w[k], len(rows[i][k]))
		}
	}
	now := time.Now()
	for i, e := range ents {
		r := rows[i]
		fmt.Fprintf(c.out, "%s %*s %-*s %-*s %*s %s %s\n", modeString(e.info.Mode()), w[0], r[0], w[1], r[1], w[2], r[2], w[3], r[3], lsTime(e.info.ModTime(), now), e.name)
	}
}

// links is the link count a POSIX filesystem would report: 1 for a file,
// 2 plus the number of subdirectories for a directory.
func (c *call) links(p string, info fs.FileInfo) int {
	if !info.IsDir() {
		return 1
	}
	n := 2
	infos, _ := c.readDir(p)
	for _, fi := range infos {
		if fi.IsDir() {
			n++
		}
	}
	return n
}

// diskSize is the size ls and stat show: directories as one 4 KiB block.
func diskSize(info fs.FileInfo) int64 {
	if info.IsDir() {
		return 4096
	}
	return info.Size()
}

// diskBlocks is the space used in 1 KiB units on a 4 KiB-block filesystem.
func diskBlocks(info fs.FileInfo) int64 {
	return (diskSize(info) + 4095) / 4096 * 4
}

// humanSize formats n bytes as GNU's -h does: powers of 1024, one decimal
// below 10, rounded up.
func humanSize(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10)
	}
	const units = "KMGTPE"
	v := float64(n)
	u := -1
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v < 10 {
		t := ceilTenth(v)
		if t >= 10 {
			return fmt.Sprintf("%d%c", 10, units[u])
		}
		return fmt.Sprintf("%.1f%c", t, units[u])
	}
	r := int64(v)
	if float64(r) < v {
		r++
	}
	if r >= 1024 && u < len(units)-1 {
		return fmt.Sprintf("1.0%c", units[u+1])
	}
	return fmt.Sprintf("%d%c", r, units[u])
}

func ceilTenth(v float64) float64 {
	t := float64(int64(v * 10))
	if t < v*10 {
		t++
	}
	return t / 10
}

// lsTime is GNU ls's default time: "Jan _2 15:04" for times within the
// last six months (and not in the future), "Jan _2  2006" otherwise.
func lsTime(t, now time.Time) string {
	t = t.Local()
	const halfYear = 31556952 / 2 * time.Second
	if t.After(now) || now.Sub(t) > halfYear {
		return t.Format("Jan _2  2006")
	}
	return t.Format("Jan _2 15:04")
}

// modeString is the ten-character mode of ls -l.
func modeString(m fs.FileMode) string {
	var b [10]byte
	switch {
	case m.IsDir():
		b[0] = 'd'
	case m&fs.ModeSymlink != 0:
		b[0] = 'l'
	default:
		b[0] = '-'
	}
	const rwx = "rwxrwxrwx"
	perm := m.Perm()
	for i := range 9 {
		if perm&(1<<(8-i)) != 0 {
			b[i+1] = rwx[i]
		} else {
			b[i+1] = '-'
		}
	}
	return string(b[:])
}
