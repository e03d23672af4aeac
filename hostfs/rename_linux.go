//go:build linux

package hostfs

import (
	"errors"
	"syscall"

	"github.com/semfs/semfs"
)

// renameHost renames o to n (canonical tree paths) with renameat(2)
// between their parent directories, each opened through the root. Unlike
// os.Root.Rename it lets a directory replace an empty directory, as the
// contract and rename(2) say. The names passed to renameat are single path
// elements, so nothing outside the root is reachable.
func (f *FS) renameHost(o, n string) error {
	od, err := f.root.Open(rel(semfs.Dir(o)))
	if err != nil {
		return err
	}
	defer od.Close()
	nd, err := f.root.Open(rel(semfs.Dir(n)))
	if err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return errDestParent
		}
		return err
	}
	defer nd.Close()
	oc, err := od.SyscallConn()
	if err != nil {
		return err
	}
	nc, err := nd.SyscallConn()
	if err != nil {
		return err
	}
	var rerr error
	cerr := oc.Control(func(ofd uintptr) {
		cerr := nc.Control(func(nfd uintptr) {
			rerr = syscall.Renameat(int(ofd), semfs.BaseName(o), int(nfd), semfs.BaseName(n))
		})
		if rerr == nil {
			rerr = cerr
		}
	})
	if rerr != nil {
		return rerr
	}
	return cerr
}
