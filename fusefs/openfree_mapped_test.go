package fusefs

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semfs/semfs"
)

// TestOpenFreeMappedWritebackOfRemovedFile: a program that maps a file it
// writes, removes it through the mount and goes on storing into the
// mapping has its stores written back to the removed file, even when
// another principal was the file's last caller: the kernel's writeback
// carries no pid and runs as the last caller (freeFiles.caller), whose
// own writer is not among the removed file's kept ones.
func TestOpenFreeMappedWritebackOfRemovedFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a second principal")
	}
	srv, tree, host, _ := mountOpenFree(t)
	const size = 4 << 20
	if err := semfs.WriteFile(context.Background(), tree.FS, "/m", bytes.Repeat([]byte{'.'}, size), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(host, "m"), 0o666); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(srv.Dir(), "m")
	hostf, err := os.Open(filepath.Join(host, "m")) // reads the file once removed
	if err != nil {
		t.Fatal(err)
	}
	defer hostf.Close()

	// Each script prints a line at each step and waits for a line on
	// stdin before the next. Mappings of the mount are made in a
	// subprocess: a fault in the serving process could wait on itself.
	step := func(in *bufio.Writer, out *bufio.Reader, want string) {
		t.Helper()
		if in != nil {
			in.WriteString("go\n")
			in.Flush()
		}
		line, _ := out.ReadString('\n')
		if strings.TrimSpace(line) != want {
			t.Fatalf("step %q: got %q", want, line)
		}
	}
	start := func(uid int, script string) (*bufio.Writer, *bufio.Reader) {
		t.Helper()
		cmd := pyAs(uid, script, p)
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { in.Close(); cmd.Wait() })
		return bufio.NewWriter(in), bufio.NewReader(out)
	}
	otherIn, otherOut := start(otherUID, `
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
print("open", flush=True)
sys.stdin.readline()
os.pread(fd, 4096, 3145728)
print("read", flush=True)
sys.stdin.readline()
os.pread(fd, 4096, 4190208)
print("read", flush=True)
sys.stdin.readline()
`)
	step(nil, otherOut, "open")
	mapIn, mapOut := start(0, `
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
os.pwrite(fd, b"root", 0)
os.fstat(fd)
m = mmap.mmap(fd, 8192)
m[4096]
print("mapped", flush=True)
sys.stdin.readline()
m[4096:4102] = b"MAPPED"
print("stored", flush=True)
sys.stdin.readline()
try:
    m.flush()
    print("synced", flush=True)
except OSError as e:
    print("errno", e.errno, flush=True)
sys.stdin.readline()
`)
	step(nil, mapOut, "mapped")
	step(otherIn, otherOut, "read") // the other principal is the last caller
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	step(mapIn, mapOut, "stored")
	step(otherIn, otherOut, "read") // an uncached tail: the last caller again
	step(mapIn, mapOut, "synced")
	got := make([]byte, 6)
	if _, err := hostf.ReadAt(got, 4096); err != nil {
		t.Fatal(err)
	}
	if string(got) != "MAPPED" {
		t.Errorf("the removed file holds %q at 4096 after its mapper's msync; want MAPPED (the writeback ran as the last caller, uid %d, without the mapper's kept writer)", got, otherUID)
	}
}
