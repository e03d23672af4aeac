//go:build !linux

package hostfs

import (
	"io/fs"
	"os"
)

// fastRoot is the Linux openat2 fast path; elsewhere every call goes
// through os.Root.
type fastRoot struct{}

func newFastRoot(*os.Root) *fastRoot                        { return nil }
func (*fastRoot) close()                                    {}
func (*fastRoot) open(string, int, uint32) (int, bool)      { return -1, false }
func (*fastRoot) stat(rel, name string) (fs.FileInfo, bool) { return nil, false }
func (*fastRoot) readFile(rel string) ([]byte, bool)        { return nil, false }
