package hostfs

import (
	"context"
	"strings"
	"time"

	"github.com/semfs/semfs"
)

// SweepTemp removes the temporary files that atomic writes leave behind
// when a process dies mid-write (names starting ".semfs-tmp-"), anywhere in
// the tree outside hidden paths, if they were last modified more than
// olderThan ago — younger ones may belong to a write in flight in another
// process. It reports how many it removed. A daemon calls it at start. It
// needs a ReadWrite tree.
// Symbolic links are not followed.
func (f *FS) SweepTemp(ctx context.Context, olderThan time.Duration) (int, error) {
	if err := f.writable("sweep", "/"); err != nil {
		return 0, err
	}
	if f.ov != nil {
		return 0, semfs.PathErr("sweep", "/", semfs.ErrInvalid, "an Overlay tree changes the host only in Commit; sweep through a ReadWrite tree")
	}
	cutoff := time.Now().Add(-olderThan)
	removed := 0
	var walk func(dir string) error
	walk = func(dir string) error {
		if err := ctx.Err(); err != nil {
			return semfs.PathErr("sweep", dir, err, "")
		}
		d, err := f.root.Open(rel(dir))
		if err != nil {
			return mapErr("sweep", dir, err)
		}
		ents, err := d.ReadDir(-1)
		d.Close()
		if err != nil {
			return mapErr("sweep", dir, err)
		}
		for _, e := range ents {
			child := semfs.Join(dir, e.Name())
			switch {
			case strings.HasPrefix(e.Name(), tmpPrefix) && e.Type().IsRegular():
				info, err := f.root.Lstat(rel(child))
				if err == nil && info.ModTime().Before(cutoff) {
					if err := f.root.Remove(rel(child)); err == nil {
						removed++
					}
				}
			case e.IsDir() && !f.hidden(child) && semfs.ValidPath(child):
				if err := walk(child); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err := walk("/")
	return removed, err
}
