package fusefs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/hostfs"
)

// mountServer mounts fsys for the test and returns the server.
func mountServer(t *testing.T, fsys semfs.FS, opts Options) *Server {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("skipping: /dev/fuse is missing, so no FUSE mount can be made here")
	}
	opts.Logf = t.Logf
	srv, err := Mount(t.TempDir(), fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
		srv.Wait()
	})
	return srv
}

// hostTree opens a fresh host directory as a read-write tree.
func hostTree(t *testing.T) *hostfs.FS {
	t.Helper()
	h, err := hostfs.Open(t.TempDir(), hostfs.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// needPassthrough skips unless the kernel accepts backing files from this
// process (Linux 6.9+, CAP_SYS_ADMIN).
func needPassthrough(t *testing.T, srv *Server) {
	t.Helper()
	if !srv.Passthrough() {
		if os.Geteuid() == 0 {
			t.Log("running as root, yet the kernel refused a backing file (kernel before 6.9?)")
		}
		t.Skip("skipping: FUSE passthrough is not available to this process")
	}
}

// countingFS counts the reads and writes the daemon serves, and the
// stats that reach the tree, forwarding host descriptors.
type countingFS struct {
	*hostfs.FS
	reads, writes, stats atomic.Int64
}

func (c *countingFS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	c.stats.Add(1)
	return c.FS.Stat(ctx, name)
}

type countingFile struct {
	semfs.RWFile
	c *countingFS
}

func (f *countingFile) ReadAt(b []byte, off int64) (int, error) {
	f.c.reads.Add(1)
	return f.RWFile.ReadAt(b, off)
}

func (f *countingFile) WriteAt(b []byte, off int64) (int, error) {
	f.c.writes.Add(1)
	return f.RWFile.WriteAt(b, off)
}

func (f *countingFile) HostFd() (int, bool) { return semfs.HostFd(f.RWFile) }

func (c *countingFS) Open(ctx context.Context, name string) (fs.File, error) {
	return c.OpenFile(ctx, name, os.O_RDONLY, 0)
}

func (c *countingFS) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	f, err := c.FS.OpenFile(ctx, name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &countingFile{RWFile: f, c: c}, nil
}

// TestPassthrough writes and reads a file through the mount of a host
// tree: with passthrough the daemon serves none of the reads and writes,
// and the bytes are the tree's; with Options.NoPassthrough (as after the
// daemon dropped its capabilities) the daemon serves them, with the same
// result.
func TestPassthrough(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	for _, off := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoPassthrough=%v", off), func(t *testing.T) {
			c := &countingFS{FS: hostTree(t)}
			srv := mountServer(t, c, Options{NoPassthrough: off, KeepCache: true})
			if off && srv.Passthrough() {
				t.Fatal("Passthrough() with NoPassthrough set")
			}
			if !off {
				needPassthrough(t, srv)
			}
			p := filepath.Join(srv.Dir(), "f")
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := semfs.ReadFile(context.Background(), c.FS, "/f")
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("tree holds %d bytes (%v); want the %d written", len(got), err, len(data))
			}
			// A second handle, opened while the first is open, and a
			// read-only one.
			rw, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rw.WriteAt([]byte("XY"), 10); err != nil {
				t.Fatal(err)
			}
			got, err = os.ReadFile(p)
			rw.Close()
			copy(data[10:], "XY")
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read back %d bytes (%v), equal=%v", len(got), err, bytes.Equal(got, data))
			}
			info, err := os.Stat(p)
			if err != nil || info.Size() != int64(len(data)) {
				t.Fatalf("stat = %v, %v", info, err)
			}
			r, w := c.reads.Load(), c.writes.Load()
			if off && (r == 0 || w == 0) {
				t.Errorf("without passthrough the daemon served %d reads and %d writes; want some of each", r, w)
			}
			if !off && (r != 0 || w != 0) {
				t.Errorf("with passthrough the daemon served %d reads and %d writes; want none", r, w)
			}
		})
	}
}

// TestMixedIOModes opens one file by passthrough and then through a handle
// without a host descriptor. The kernel requires every open of an inode
// open by passthrough to be by passthrough, so the second open is refused
// with ETXTBSY (not EIO) while the first is open, and works once it is
// closed, reading what the first wrote.
func TestMixedIOModes(t *testing.T) {
	h := hostTree(t)
	tree := &noFdFor{FS: h, path: "/f"}
	srv := mountServer(t, tree, Options{KeepCache: true})
	needPassthrough(t, srv)
	p := filepath.Join(srv.Dir(), "f")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	tree.on.Store(false) // first handle: passthrough
	a, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.WriteAt([]byte("HE"), 0); err != nil {
		t.Fatal(err)
	}
	tree.on.Store(true) // second handle: no descriptor
	if _, err := os.ReadFile(p); !errors.Is(err, syscall.ETXTBSY) {
		t.Fatalf("open without a descriptor beside a passthrough one: %v; want ETXTBSY", err)
	}
	a.Close()
	got, err := os.ReadFile(p)
	if err != nil || string(got) != "HEllo" {
		t.Fatalf("open after the passthrough handle closed read %q, %v; want HEllo", got, err)
	}
	// And the other way round: a cached handle open, a descriptor-capable
	// open is served cached too.
	b, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	tree.on.Store(false)
	if got, err := os.ReadFile(p); err != nil || string(got) != "HEllo" {
		t.Fatalf("open beside a cached handle read %q, %v", got, err)
	}
}

// noFdFor hides the host descriptor of path's handles while on is set.
type noFdFor struct {
	*hostfs.FS
	path string
	on   atomic.Bool
}

type plainFile struct{ semfs.RWFile }

func (n *noFdFor) Open(ctx context.Context, name string) (fs.File, error) {
	return n.OpenFile(ctx, name, os.O_RDONLY, 0)
}

func (n *noFdFor) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	f, err := n.FS.OpenFile(ctx, name, flag, perm)
	if err != nil || name != n.path || !n.on.Load() {
		return f, err
	}
	return plainFile{f}, nil
}

// TestChangesBehindTheMount changes files through the tree the mount
// serves, reports each change to the server, and checks that the mount
// shows it at once although the kernel caches attributes and names for a
// minute and keeps pages across opens.
func TestChangesBehindTheMount(t *testing.T) {
	for _, noPT := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoPassthrough=%v", noPT), func(t *testing.T) {
			ctx := context.Background()
			h := hostTree(t)
			srv := mountServer(t, h, Options{NoPassthrough: noPT, KeepCache: true, AttrTimeout: time.Minute, EntryTimeout: time.Minute})
			dir := srv.Dir()
			write := func(p, data string) {
				t.Helper()
				if err := semfs.WriteFile(ctx, h, p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want := func(name, data string) {
				t.Helper()
				info, err := os.Stat(filepath.Join(dir, name))
				if err != nil || info.Size() != int64(len(data)) {
					t.Fatalf("stat %s = %v, %v; want size %d", name, info, err, len(data))
				}
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || string(got) != data {
					t.Fatalf("read %s = %q, %v; want %q", name, got, err, data)
				}
			}
			names := func() string {
				t.Helper()
				ents, err := os.ReadDir(dir)
				if err != nil {
					t.Fatal(err)
				}
				var s []string
				for _, e := range ents {
					s = append(s, e.Name())
				}
				return strings.Join(s, " ")
			}
			write("/f", "first version")
			want("f", "first version")
			want("f", "first version") // pages and attributes now cached
			names()
			if got := names(); got != "f" { // the listing now cached
				t.Fatalf("listing = %q", got)
			}
			write("/new", "n")
			srv.Replaced("/new")
			if err := semfs.Mkdir(ctx, h, "/sub", 0o755); err != nil {
				t.Fatal(err)
			}
			srv.Created("/sub")
			if got := names(); got != "f new sub" {
				t.Fatalf("listing after a file and a directory were created behind the mount = %q", got)
			}
			if err := semfs.Remove(ctx, h, "/new"); err != nil {
				t.Fatal(err)
			}
			srv.Removed("/new")
			if got := names(); got != "f sub" {
				t.Fatalf("listing after a removal behind the mount = %q", got)
			}

			// Replaced whole (hostfs: temporary file renamed over f).
			write("/f", "second, longer version")
			srv.Replaced("/f")
			want("f", "second, longer version")

			// Written in place while open through the mount.
			open, err := os.Open(filepath.Join(dir, "f"))
			if err != nil {
				t.Fatal(err)
			}
			defer open.Close()
			io.ReadAll(open)
			w, err := h.OpenFile(ctx, "/f", os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			w.WriteAt([]byte("THIRD!"), 0)
			w.WriteAt([]byte(" and more"), 22)
			w.Close()
			srv.Written("/f")
			want("f", "THIRD!, longer version and more")
			if got, err := io.ReadAll(io.NewSectionReader(open, 0, 100)); err != nil || string(got) != "THIRD!, longer version and more" {
				t.Fatalf("the handle open during the write reads %q, %v", got, err)
			}

			// Renamed: the old name is gone, the new one holds the file.
			if err := semfs.Rename(ctx, h, "/f", "/g"); err != nil {
				t.Fatal(err)
			}
			srv.Renamed("/f", "/g")
			if _, err := os.Stat(filepath.Join(dir, "f")); !os.IsNotExist(err) {
				t.Fatalf("stat of the renamed file's old name: %v; want ENOENT", err)
			}
			want("g", "THIRD!, longer version and more")

			// A directory renamed over, and removed.
			write("/d/x", "x")
			want("d/x", "x")
			if err := semfs.Rename(ctx, h, "/d", "/e"); err != nil {
				t.Fatal(err)
			}
			srv.Renamed("/d", "/e")
			want("e/x", "x")
			if _, err := os.Stat(filepath.Join(dir, "d", "x")); !os.IsNotExist(err) {
				t.Fatalf("stat below the renamed directory's old name: %v; want ENOENT", err)
			}
			if err := semfs.RemoveAll(ctx, h, "/e"); err != nil {
				t.Fatal(err)
			}
			srv.Removed("/e")
			if _, err := os.Stat(filepath.Join(dir, "e")); !os.IsNotExist(err) {
				t.Fatalf("stat of a removed directory: %v; want ENOENT", err)
			}
			if err := semfs.Remove(ctx, h, "/g"); err != nil {
				t.Fatal(err)
			}
			srv.Removed("/g")
			if _, err := os.Stat(filepath.Join(dir, "g")); !os.IsNotExist(err) {
				t.Fatalf("stat of a removed file: %v; want ENOENT", err)
			}
		})
	}
}

// TestForget checks that the inode table shrinks when the kernel forgets
// inodes, and that the mount still serves those paths afterwards.
func TestForget(t *testing.T) {
	h := hostTree(t)
	ctx := context.Background()
	const n = 500
	for i := range n {
		if err := semfs.WriteFile(ctx, h, fmt.Sprintf("/d/f%03d", i), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := mountServer(t, h, Options{})
	for i := range n {
		if _, err := os.Stat(filepath.Join(srv.Dir(), "d", fmt.Sprintf("f%03d", i))); err != nil {
			t.Fatal(err)
		}
	}
	size := func() (inos, live int) {
		srv.t.mu.Lock()
		defer srv.t.mu.Unlock()
		return len(srv.t.inos), len(srv.t.live)
	}
	if inos, _ := size(); inos < n {
		t.Fatalf("table holds %d numbers after %d lookups", inos, n)
	}
	// Ask the kernel to forget: shrink its dentry and inode caches.
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("2"), 0); err != nil {
		t.Skipf("skipping: cannot drop the kernel's caches: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		inos, live := size()
		if inos < n/2 {
			t.Logf("table: %d numbers, %d live inodes after the kernel forgot", inos, live)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("table still holds %d numbers (%d live) 10 s after the kernel dropped its caches", inos, live)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := range n {
		got, err := os.ReadFile(filepath.Join(srv.Dir(), "d", fmt.Sprintf("f%03d", i)))
		if err != nil || string(got) != "x" {
			t.Fatalf("read after forget: %q, %v", got, err)
		}
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(srv.Dir(), "d", "f000"), &st); err != nil {
		t.Fatal(err)
	}
	if p, ok := srv.t.pathOf(st.Ino); !ok || p != "/d/f000" {
		t.Fatalf("number %d names %q (%v) after a new lookup", st.Ino, p, ok)
	}
}

// TestSmallReadsCached: where passthrough is on, a small file opened
// read-only is read through the page cache, kept across opens while the
// host file is unchanged. An open, fstat, read and close of a file read
// before then reaches the tree with nothing but the open: no read, and no
// stat (a passthrough read marks the inode's access time stale, so every
// fstat after one was a GETATTR). A write through the mount by
// passthrough, and a change of the host file behind the mount, drop the
// pages, so the next open reads the new bytes.
func TestSmallReadsCached(t *testing.T) {
	dir := t.TempDir()
	h, err := hostfs.Open(dir, hostfs.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	c := &walkCountingFS{countingFS: &countingFS{FS: h}}
	srv := mountServer(t, c, Options{KeepCache: true, AttrTimeout: time.Minute, EntryTimeout: time.Minute})
	needPassthrough(t, srv)
	p := filepath.Join(srv.Dir(), "f")
	host := filepath.Join(dir, "f")
	// Written on the host: a file just written through the mount stays
	// watched for writes through mappings for a while (mapped.go), whose
	// events may drop its pages again.
	if err := os.WriteFile(host, []byte("first"), 0o644); err != nil {
		t.Fatal(err)
	}
	readAll := func() string {
		t.Helper()
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Stat(); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(f)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// The first open reads the file into the page cache; that READ marks
	// the access time stale, as any READ the daemon serves does, so the
	// second open's fstat is a GETATTR.
	for range 2 {
		if got := readAll(); got != "first" {
			t.Fatalf("read %q, want first", got)
		}
	}
	r0, s0, o0 := c.reads.Load(), c.stats.Load(), c.opens.Load()
	for range 3 {
		if got := readAll(); got != "first" {
			t.Fatalf("read %q, want first", got)
		}
	}
	// Each open stats the file to check that the kept pages are its
	// bytes, and opens no host file (tree.openKept).
	if r, s, o := c.reads.Load()-r0, c.stats.Load()-s0, c.opens.Load()-o0; r != 0 || s != 3 || o != 0 {
		t.Errorf("three more opens of an unchanged file served %d reads, %d stats and %d opens; want 0, 3, 0", r, s, o)
	}

	// Rewritten through the mount (a writable open is passthrough).
	if err := os.WriteFile(p, []byte("SECOND"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readAll(); got != "SECOND" {
		t.Errorf("after a write through the mount read %q, want SECOND", got)
	}

	// Rewritten in place behind the mount, same size, unreported.
	time.Sleep(10 * time.Millisecond) // a later mtime
	if err := os.WriteFile(host, []byte("THIRD!"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readAll(); got != "THIRD!" {
		t.Errorf("after a change behind the mount read %q, want THIRD!", got)
	}
}

// walkCountingFS counts the stats, listings and opens that reach the
// tree.
type walkCountingFS struct {
	*countingFS
	lists, opens atomic.Int64
}

func (c *walkCountingFS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	c.lists.Add(1)
	return c.countingFS.ReadDir(ctx, name)
}

func (c *walkCountingFS) Open(ctx context.Context, name string) (fs.File, error) {
	c.opens.Add(1)
	return c.countingFS.Open(ctx, name)
}

// TestWalkRequests runs ls -R, find and grep -r over a mounted host tree
// and counts what reaches the tree: a walk that reads only names costs a
// stat and a listing per directory, never one per file (plain READDIR; a
// READDIRPLUS would stat every entry), and a second grep -r opens each
// file and stats and reads none (kernel reclaim aside: see below).
func TestWalkRequests(t *testing.T) {
	for _, tool := range []string{"ls", "find", "grep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s is not installed", tool)
		}
	}
	dir := t.TempDir()
	const dirs, files = 4, 25
	for d := range dirs {
		sub := filepath.Join(dir, fmt.Sprintf("d%d", d))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range files {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%d", f)), []byte(fmt.Sprintf("file %d %d\n", d, f)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	h, err := hostfs.Open(dir, hostfs.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	c := &walkCountingFS{countingFS: &countingFS{FS: h}}
	srv := mountServer(t, c, Options{KeepCache: true, AttrTimeout: time.Minute, EntryTimeout: time.Minute})
	run := func(args ...string) {
		t.Helper()
		// The directory is an argument, not the working directory: the
		// child must not change into a mount this process serves
		// between fork and exec.
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil && args[0] != "grep" {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	for _, walk := range [][]string{{"ls", "-R", srv.Dir()}, {"find", srv.Dir(), "-type", "f"}} {
		s0, l0 := c.stats.Load(), c.lists.Load()
		run(walk...)
		if s := c.stats.Load() - s0; s > dirs+1 {
			t.Errorf("%s stated %d paths in the tree; want at most one per directory (%d)", walk[0], s, dirs+1)
		}
		if l := c.lists.Load() - l0; l > dirs+1 {
			t.Errorf("%s listed %d directories; want at most %d", walk[0], l, dirs+1)
		}
	}
	run("grep", "-r", "nothing-matches", srv.Dir()) // looks the files up, loads their pages
	run("grep", "-r", "nothing-matches", srv.Dir()) // the read marked atime stale once
	// The kernel may reclaim cached pages between runs under memory
	// pressure (CI ran every package at once): a directory whose cached
	// listing was dropped is read again, which marks its access time
	// stale, so the next run's fstat(2) of it is a GETATTR (one CI run
	// saw 102 stats; after drop_caches the run after next makes 205:
	// one per file read again and per directory listed again). The
	// claim is what a warm run costs, so a run that paid for reclaim is
	// followed by another, up to three.
	var got []string
	for range 3 {
		s0, o0, r0 := c.stats.Load(), c.opens.Load(), c.reads.Load()
		run("grep", "-r", "nothing-matches", srv.Dir())
		s, o, r := c.stats.Load()-s0, c.opens.Load()-o0, c.reads.Load()-r0
		if s == dirs*files && o == 0 && r == 0 {
			return
		}
		got = append(got, fmt.Sprintf("%d stats, %d opens, %d reads", s, o, r))
	}
	t.Errorf("three warm grep -r runs over %d files reached the tree with %s; want %d stats, 0 opens, 0 reads in one of them", dirs*files, strings.Join(got, "; "), dirs*files)
}

// TestKeptPagesOpenLazily checks the handles that open no host file
// because the kernel kept the file's pages (tree.openKept): a read that
// misses the pages opens the file then, and reads its bytes; if another
// file stands at the name by then, the read fails with ESTALE instead of
// reading that file's bytes; fstat(2) of such a handle answers; and an
// open of a file removed behind the mount still fails with ENOENT.
func TestKeptPagesOpenLazily(t *testing.T) {
	dir := t.TempDir()
	h, err := hostfs.Open(dir, hostfs.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	c := &walkCountingFS{countingFS: &countingFS{FS: h}}
	srv := mountServer(t, c, Options{KeepCache: true, AttrTimeout: time.Minute, EntryTimeout: time.Minute})
	needPassthrough(t, srv)
	p := filepath.Join(srv.Dir(), "f")
	host := filepath.Join(dir, "f")
	if err := os.WriteFile(host, []byte("first"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Loads the pages and the stamp (a second read: the first one's
	// READ marked the access time stale).
	for range 2 {
		if b, err := os.ReadFile(p); err != nil || string(b) != "first" {
			t.Fatalf("read %q, %v; want first", b, err)
		}
	}
	readAt := func(f *os.File) (string, error) {
		b := make([]byte, 16)
		n, err := f.ReadAt(b, 0)
		if errors.Is(err, io.EOF) {
			err = nil
		}
		return string(b[:n]), err
	}

	// The kernel drops the pages of an open, unopened handle: its read
	// opens the host file.
	o0 := c.opens.Load()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if o := c.opens.Load() - o0; o != 0 {
		t.Fatalf("an open of a file whose pages are kept opened it in the tree %d times; want 0", o)
	}
	srv.Written("/f")
	if got, err := readAt(f); err != nil || got != "first" {
		t.Errorf("read after the pages were dropped: %q, %v; want first", got, err)
	}
	if o := c.opens.Load() - o0; o != 1 {
		t.Errorf("a read that missed the pages opened the file %d times; want 1", o)
	}
	f.Close()
	for range 2 { // the read marked the access time stale
		if b, err := os.ReadFile(p); err != nil || string(b) != "first" {
			t.Fatalf("read %q, %v; want first", b, err)
		}
	}

	// Replaced behind the mount after the open, unreported: a read that
	// misses the pages must not read the new file.
	f, err = os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.WriteFile(host+".tmp", []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(host+".tmp", host); err != nil {
		t.Fatal(err)
	}
	srv.Written("/f")
	if got, err := readAt(f); !errors.Is(err, syscall.ESTALE) {
		t.Errorf("read of a handle whose file was replaced since: %q, %v; want ESTALE", got, err)
	}
	if info, err := f.Stat(); err != nil || info.Size() != int64(len("first")) {
		t.Errorf("fstat of the handle: %v, %v; want the size at open, 5", info, err)
	}

	// Removed behind the mount, unreported: the open fails as it did
	// before pages were kept.
	if b, err := os.ReadFile(p); err != nil || string(b) != "other" {
		t.Fatalf("read %q, %v; want other", b, err)
	}
	if err := os.Remove(host); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Open(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("open of a file removed behind the mount: %v; want ENOENT", err)
	}
}
