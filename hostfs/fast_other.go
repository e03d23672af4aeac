//go:build !linux

package hostfs

import (
	"io/fs"
	"os"
	"syscall"
)

// fastRoot is the Linux openat2 fast path; elsewhere every call goes
// through os.Root.
type fastRoot struct{}

func newFastRoot(*os.Root) *fastRoot                                 { return nil }
func (*fastRoot) close()                                             {}
func (*fastRoot) open(string, int, uint32) (int, syscall.Errno)      { return -1, 0 }
func (*fastRoot) stat(rel, name string) (fs.FileInfo, syscall.Errno) { return nil, 0 }
func (*fastRoot) readFile(rel string) ([]byte, bool, syscall.Errno)  { return nil, false, 0 }
func missing(syscall.Errno, int) bool                                { return false }
