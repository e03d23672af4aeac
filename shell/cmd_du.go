package shell

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/semfs/semfs"
)

// du: disk usage in 1 KiB blocks as a 4 KiB-block filesystem (ext4) would
// report it (a directory is one block plus its contents); -s (summary),
// -a (files too), -h (human), -c (grand total), --max-depth / -d. Order:
// the contents of a directory, by name, before the directory.

func init() { register("du", cmdDu) }

func cmdDu(c *call) int {
	o, ok := c.parse(optSpec{flags: "sahc", valued: "d", long: map[string]bool{"summarize": false, "all": false,
		"human-readable": false, "total": false, "max-depth": true},
		alias: map[string]string{"summarize": "s", "all": "a", "human-readable": "h", "total": "c", "max-depth": "d"}})
	if !ok {
		return 1
	}
	maxDepth := -1
	if v, ok := o.last("d"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			c.errf("invalid maximum depth '%s'", v)
			return 1
		}
		maxDepth = n
	}
	if o.has("s") {
		maxDepth = 0
	}
	all, human := o.has("a"), o.has("h")
	show := func(kb int64, name string) {
		v := strconv.FormatInt(kb, 10)
		if human {
			v = humanSize(kb * 1024)
		}
		fmt.Fprintf(c.out, "%s\t%s\n", v, name)
	}
	args := o.operands
	if len(args) == 0 {
		args = []string{"."}
	}
	status := 0
	var grand int64
	for _, a := range args {
		p, info, err := c.stat(a)
		if err != nil {
			c.pathErr("cannot access '%s': ", a, err)
			status = 1
			continue
		}
		var walk func(shown, p string, info fs.FileInfo, depth int) int64
		walk = func(shown, p string, info fs.FileInfo, depth int) int64 {
			total := diskBlocks(info)
			if info.IsDir() {
				infos, err := c.readDir(p)
				if err != nil {
					c.pathErr("cannot read directory '%s': ", shown, err)
					status = 1
				}
				prefix := shown + "/"
				if strings.HasSuffix(shown, "/") {
					prefix = shown
				}
				for _, fi := range infos {
					total += walk(prefix+fi.Name(), semfs.Join(p, fi.Name()), fi, depth+1)
				}
			}
			if (info.IsDir() || all || depth == 0) && (maxDepth < 0 || depth <= maxDepth) {
				show(total, shown)
			}
			return total
		}
		grand += walk(a, p, info, 0)
	}
	if o.has("c") {
		show(grand, "total")
	}
	return status
}
