//go:build !linux

package hostfs

import (
	"errors"
	"io/fs"

	"github.com/semfs/semfs"
)

// renameHost renames o to n through os.Root.Rename. Without renameat(2) in
// package syscall, a directory cannot replace an existing empty directory
// on these systems (os.Root refuses with EEXIST, reported as ErrNotEmpty).
func (f *FS) renameHost(o, n string) error {
	if _, err := f.root.Stat(rel(semfs.Dir(n))); errors.Is(err, fs.ErrNotExist) {
		return errDestParent
	}
	return f.root.Rename(rel(o), rel(n))
}
