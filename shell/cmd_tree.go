package shell

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/semfs/semfs"
)

// tree: the output of tree 2.x (entries by name, "├── " / "└── " / "│   "
// guides, a "N directories, M files" report counting the top directory):
// -a (hidden entries), -d (directories only), -L LEVEL, --noreport.

func init() { register("tree", cmdTree) }

func cmdTree(c *call) int {
	o, ok := c.parse(optSpec{flags: "ad", valued: "L", long: map[string]bool{"noreport": false}})
	if !ok {
		return 2
	}
	level := -1
	if v, ok := o.last("L"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			c.errf("Invalid level, must be greater than 0.")
			return 2
		}
		level = n
	}
	args := o.operands
	if len(args) == 0 {
		args = []string{"."}
	}
	dirs, files := 0, 0
	status := 0
	for _, a := range args {
		p, info, err := c.stat(a)
		if err != nil || !info.IsDir() {
			if err == nil {
				files++ // tree 2.x counts a file operand, and does not fail
			} else {
				status = 2
			}
			fmt.Fprintf(c.out, "%s  [error opening dir]\n", a)
			continue
		}
		c.out.WriteString(a + "\n")
		// tree 2.x counts the top directory only when it lists something.
		if c.treeHasEntries(p, o.has("a"), o.has("d")) {
			dirs++
		}
		c.treeDir(p, "", 1, level, o.has("a"), o.has("d"), &dirs, &files)
	}
	if !o.has("noreport") {
		c.out.WriteString("\n")
		d := "directories"
		if dirs == 1 {
			d = "directory"
		}
		if o.has("d") {
			fmt.Fprintf(c.out, "%d %s\n", dirs, d)
		} else {
			f := "files"
			if files == 1 {
				f = "file"
			}
			fmt.Fprintf(c.out, "%d %s, %d %s\n", dirs, d, files, f)
		}
	}
	return status
}

func (c *call) treeDir(p, indent string, depth, level int, all, dirsOnly bool, dirs, files *int) {
	infos, err := c.readDir(p)
	if err != nil {
		c.out.WriteString(indent + "[error opening dir]\n")
		return
	}
	var shown []fs.FileInfo
	for _, fi := range infos {
		if !all && strings.HasPrefix(fi.Name(), ".") {
			continue
		}
		if dirsOnly && !fi.IsDir() {
			continue
		}
		shown = append(shown, fi)
	}
	for i, fi := range shown {
		last := i == len(shown)-1
		branch, next := "├── ", "│\u00a0\u00a0 "
		if last {
			branch, next = "└── ", "    "
		}
		c.out.WriteString(indent + branch + fi.Name() + "\n")
		if fi.IsDir() {
			*dirs++
			if level < 0 || depth < level {
				c.treeDir(semfs.Join(p, fi.Name()), indent+next, depth+1, level, all, dirsOnly, dirs, files)
			}
		} else {
			*files++
		}
	}
}

func (c *call) treeHasEntries(p string, all, dirsOnly bool) bool {
	infos, _ := c.readDir(p)
	for _, fi := range infos {
		if (all || !strings.HasPrefix(fi.Name(), ".")) && (!dirsOnly || fi.IsDir()) {
			return true
		}
	}
	return false
}
