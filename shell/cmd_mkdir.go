package shell

import (
	"errors"

	"github.com/semfs/semfs"
)

// mkdir: create directories in the tree (-p: with their parents, no error
// if they exist). Refused on read-only trees and sessions.

func init() { register("mkdir", cmdMkdir) }

func cmdMkdir(c *call) int {
	o, ok := c.parse(optSpec{flags: "pv", long: map[string]bool{"parents": false, "verbose": false},
		alias: map[string]string{"parents": "p", "verbose": "v"}})
	if !ok {
		return 1
	}
	if len(o.operands) == 0 {
		c.errf("missing operand\nTry 'mkdir --help' for more information.")
		return 1
	}
	status := 0
	for _, a := range o.operands {
		p := c.abs(a)
		var err error
		switch {
		case c.s.opts.ReadOnly:
			err = semfs.ErrReadOnly
		case c.s.nav.hidden(p):
			err = semfs.ErrPermission
		case o.has("p"):
			if info, serr := c.s.nav.stat(c.ctx, p); serr == nil && info.IsDir() {
				continue
			}
			err = semfs.MkdirAll(c.ctx, c.s.fsys, p, 0o755)
		default:
			if _, serr := c.s.nav.stat(c.ctx, p); serr == nil {
				err = semfs.ErrExist
			} else if parent, perr := c.s.nav.stat(c.ctx, semfs.Dir(p)); perr != nil {
				err = perr
			} else if !parent.IsDir() {
				err = semfs.ErrNotDir
			} else {
				err = semfs.Mkdir(c.ctx, c.s.fsys, p, 0o755)
			}
		}
		if err != nil {
			if errors.Is(err, semfs.ErrNotExist) {
				c.errf("cannot create directory '%s': %s (use mkdir -p to create missing parents)", a, errText(err))
			} else {
				c.pathErr("cannot create directory '%s': ", a, err)
			}
			status = 1
			continue
		}
		c.s.nav.added(c.ctx, p)
		if o.has("v") {
			c.out.WriteString("mkdir: created directory '" + a + "'\n")
		}
	}
	return status
}
