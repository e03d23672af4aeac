package main

// The reference sides of -floor: FUSE servers that are not semfs, mounted
// in this process over the same kind of tree, so that a walk's ratio to
// native can be split into what the FUSE protocol costs on this kernel
// and what semfs adds to it.
//
//   - loopback: go-fuse's own loopback file system over a host directory,
//     with the kernel cache settings the semfs mount uses (entry and
//     attribute timeouts of a minute, no negative entries, FOPEN_KEEP_CACHE
//     on files, FOPEN_CACHE_DIR on directories, plain READDIR, 1 MiB
//     writes, passthrough where the kernel offers it).
//   - generous: the same loopback with the most caching the protocol
//     offers for reading: hour-long entry, attribute and negative
//     timeouts, no OPEN request (OPEN answers ENOSYS once; the kernel then
//     opens and closes files without asking), READDIRPLUS. Not the
//     kernel's write-back cache: with it the kernel asked for every
//     file's attributes again on the second warm grep -r as well as the
//     first (GETATTR 4101 against 2101 over three runs on 2000 files), and
//     it excludes passthrough for created files.
//   - no-open loopback: the generous one with plain READDIR: the requests
//     semfs's open-free mode is sent (a LOOKUP and a READ per file read).
//   - memory: a file system held in this process's memory (go-fuse's
//     MemRegularFile under directories of our own) with the generous
//     settings: the protocol's cost without any host file system below;
//     and the same with plain READDIR, whose listings carry no attributes
//     (the kernel makes no inode per entry listed), as semfs's do.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// A side is a place the workloads run: a directory and, for the reference
// servers, the requests they were sent.
type side struct {
	name string
	root string
	reqs *counter // nil where this process cannot count them
}

// mountFloor mounts the reference servers under dir and adds them to t
// as sides; the run's cleanups unmount them.
func mountFloor(t *table, dir string) {
	for _, r := range []struct {
		name    string
		kind    refKind
		backing bool
	}{
		{"go-fuse loopback", refLoopback, true},
		{"generous loopback", refGenerous, true},
		{"no-open loopback", refPlain, true},
		{"in-memory server", refGenerous, false},
		{"in-memory READDIR", refPlain, false},
	} {
		mnt := filepath.Join(dir, strings.Fields(r.name)[0]+"-"+strings.Fields(r.name)[1])
		backing := ""
		if r.backing {
			backing = mnt + "-data"
			must(os.MkdirAll(backing, 0o755))
		}
		reqs := &counter{}
		stop, err := mountRef(mnt, backing, r.kind, reqs)
		if err != nil {
			fatalf("%v", err)
		}
		atExit(stop)
		t.sides = append(t.sides, side{name: r.name, root: mnt, reqs: reqs})
	}
}

// refKind selects a reference server's settings.
type refKind int

const (
	refLoopback  refKind = iota // semfs's kernel cache settings
	refGenerous                 // the most caching the protocol offers
	refPlain                    // generous, but plain READDIR (no attributes in listings)
	refRoundTrip                // generous, but attributes are not cached
)

// mountRef mounts a reference server at mnt and returns a function that
// unmounts it. With backing set, it is go-fuse's loopback over backing;
// otherwise an in-memory tree (with the generous settings).
func mountRef(mnt, backing string, kind refKind, reqs *counter) (func(), error) {
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		return nil, err
	}
	minute, hour, zero := time.Minute, time.Hour, time.Duration(0)
	opts := &gofs.Options{
		MountOptions: fuse.MountOptions{
			FsName:        "benchref",
			Name:          "benchref",
			DirectMount:   os.Geteuid() == 0,
			MaxWrite:      1 << 20,
			MaxReadAhead:  1 << 20,
			DisableXAttrs: true,
			MaxStackDepth: 2,
		},
		EntryTimeout: &minute, AttrTimeout: &minute, NegativeTimeout: &zero,
		UID: uint32(os.Getuid()), GID: uint32(os.Getgid()),
	}
	if kind == refLoopback {
		opts.DisableReadDirPlus = true
	} else {
		opts.EntryTimeout, opts.AttrTimeout, opts.NegativeTimeout = &hour, &hour, &hour
		switch kind {
		case refRoundTrip:
			opts.AttrTimeout = &zero
		case refPlain:
			opts.DisableReadDirPlus = true
		}
	}
	var root gofs.InodeEmbedder
	if backing != "" {
		var st syscall.Stat_t
		if err := syscall.Stat(backing, &st); err != nil {
			return nil, err
		}
		// gofs.NewLoopbackRoot, but with its root node wrapped as well
		// as the nodes the root makes (keptNode.WrapChild).
		lr := &gofs.LoopbackRoot{Path: backing, Dev: uint64(st.Dev)}
		lr.RootNode = &keptNode{LoopbackNode: &gofs.LoopbackNode{RootData: lr}}
		root = lr.RootNode
	} else {
		root = &memDir{}
	}
	reqs.RawFileSystem = declining{gofs.NewNodeFS(root, opts), kind != refLoopback}
	srv, err := fuse.NewServer(reqs, mnt, &opts.MountOptions)
	if err != nil {
		return nil, fmt.Errorf("mounting the reference server at %s: %w", mnt, err)
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		unmount(srv, mnt)
		return nil, fmt.Errorf("mounting the reference server at %s: %w", mnt, err)
	}
	return func() { unmount(srv, mnt) }, nil
}

// roundTrip measures what one FUSE request costs here: the p50 of
// stat(2) of a file whose attributes the kernel does not cache (one
// GETATTR each) on an in-memory server mounted at mnt, against stat of a
// file in the native directory; and the requests each stat sent.
func roundTrip(mnt, native string) (fuseP50, nativeP50 time.Duration, perStat float64, err error) {
	reqs := &counter{}
	stop, err := mountRef(mnt, "", refRoundTrip, reqs)
	if err != nil {
		return 0, 0, 0, err
	}
	defer stop()
	const n = 20000
	p50 := func(p string) (time.Duration, error) {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			return 0, err
		}
		ds := make([]time.Duration, 0, n)
		for range 2 { // the first round warms the caches
			ds = ds[:0]
			for range n {
				t0 := time.Now()
				_, err := os.Stat(p)
				ds = append(ds, time.Since(t0))
				if err != nil {
					return 0, err
				}
			}
		}
		slices.Sort(ds)
		return ds[n/2], nil
	}
	if nativeP50, err = p50(filepath.Join(native, "roundtrip")); err != nil {
		return 0, 0, 0, err
	}
	c0 := reqs.snapshot()
	if fuseP50, err = p50(filepath.Join(mnt, "roundtrip")); err != nil {
		return 0, 0, 0, err
	}
	return fuseP50, nativeP50, float64(reqs.snapshot().sub(c0).total()) / (2 * n), nil
}

// unmount unmounts a reference server, lazily if a walk that failed still
// holds it.
func unmount(srv *fuse.Server, mnt string) {
	if err := srv.Unmount(); err != nil {
		syscall.Unmount(mnt, syscall.MNT_DETACH)
	}
}

// keptNode is go-fuse's loopback node with the kernel keeping file pages
// and directory listings across opens, as the semfs mount has it do, and
// reads without an open handle (the generous settings open no handle).
type keptNode struct{ *gofs.LoopbackNode }

var (
	_ gofs.NodeWrapChilder    = (*keptNode)(nil)
	_ gofs.NodeOpener         = (*keptNode)(nil)
	_ gofs.NodeCreater        = (*keptNode)(nil)
	_ gofs.NodeOpendirHandler = (*keptNode)(nil)
	_ gofs.NodeReader         = (*keptNode)(nil)
)

func (n *keptNode) WrapChild(ctx context.Context, ops gofs.InodeEmbedder) gofs.InodeEmbedder {
	return &keptNode{LoopbackNode: ops.(*gofs.LoopbackNode)}
}

func (n *keptNode) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	fh, fl, errno := n.LoopbackNode.Open(ctx, flags)
	return fh, fl | fuse.FOPEN_KEEP_CACHE, errno
}

func (n *keptNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	ch, fh, fl, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	return ch, fh, fl | fuse.FOPEN_KEEP_CACHE, errno
}

func (n *keptNode) OpendirHandle(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	fh, fl, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
	return fh, fl | fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE, errno
}

// Read reads through the handle the open returned, or, for a file the
// kernel opened without a request (fh nil), opens the host file for this
// read alone.
func (n *keptNode) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if r, ok := fh.(gofs.FileReader); ok {
		return r.Read(ctx, dest, off)
	}
	p := filepath.Join(n.RootData.Path, n.Path(nil))
	f, err := os.Open(p)
	if err != nil {
		return nil, gofs.ToErrno(err)
	}
	defer f.Close()
	k, err := f.ReadAt(dest, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, gofs.ToErrno(err)
	}
	return fuse.ReadResultData(dest[:k]), 0
}

// declining answers FLUSH with ENOSYS, as the semfs mount does (the kernel
// then sends none at close(2)), and with noOpen OPEN too, after which the
// kernel opens and closes files of the mount without a request.
type declining struct {
	fuse.RawFileSystem
	noOpen bool
}

func (d declining) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if d.noOpen {
		return fuse.ENOSYS
	}
	return d.RawFileSystem.Open(cancel, in, out)
}

func (declining) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	return fuse.ENOSYS
}

// memDir is a directory of the in-memory reference server; its files are
// go-fuse's MemRegularFile. Lookups and listings are served from go-fuse's
// inode tree, which holds every name (persistent inodes).
type memDir struct{ gofs.Inode }

var (
	_ gofs.NodeCreater        = (*memDir)(nil)
	_ gofs.NodeMkdirer        = (*memDir)(nil)
	_ gofs.NodeGetattrer      = (*memDir)(nil)
	_ gofs.NodeOpendirHandler = (*memDir)(nil)
)

// OpendirHandle lists the directory and lets the kernel keep the listing
// (FOPEN_CACHE_DIR), as the loopback sides do.
func (d *memDir) OpendirHandle(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	var es []fuse.DirEntry
	for name, ch := range d.Children() {
		es = append(es, fuse.DirEntry{Name: name, Mode: ch.Mode(), Ino: ch.StableAttr().Ino})
	}
	return gofs.NewListDirStream(es), fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE, 0
}

func (d *memDir) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = syscall.S_IFDIR | 0o755
	out.Nlink = 2
	return 0
}

func (d *memDir) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	out.Mode = syscall.S_IFDIR | 0o755
	return d.NewPersistentInode(ctx, &memDir{}, gofs.StableAttr{Mode: syscall.S_IFDIR}), 0
}

func (d *memDir) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	f := &gofs.MemRegularFile{Attr: fuse.Attr{Mode: mode & 0o7777, Nlink: 1}}
	out.Attr = f.Attr
	out.Mode |= syscall.S_IFREG
	return d.NewPersistentInode(ctx, f, gofs.StableAttr{Mode: syscall.S_IFREG}), nil, fuse.FOPEN_KEEP_CACHE, 0
}

// counter is a fuse.RawFileSystem that counts the requests it forwards,
// by kind, for the requests a walk or a file's creation sends; any other
// request is forwarded uncounted, and so is FORGET, which the kernel sends
// without waiting for a reply as it drops inodes (as the cold walks' cache
// drops make it do).
type counter struct {
	fuse.RawFileSystem
	n [numOps]atomic.Int64
}

// The request kinds counter counts, named as the kernel's opcodes are.
const (
	opLookup = iota
	opGetattr
	opSetattr
	opMkdir
	opCreate
	opOpen
	opRead
	opWrite
	opFlush
	opRelease
	opFsync
	opOpendir
	opReaddir
	opReaddirplus
	opReleasedir
	opStatfs
	opAccess
	opStatx
	numOps
)

var opNames = [numOps]string{"LOOKUP", "GETATTR", "SETATTR", "MKDIR", "CREATE", "OPEN", "READ", "WRITE", "FLUSH",
	"RELEASE", "FSYNC", "OPENDIR", "READDIR", "READDIRPLUS", "RELEASEDIR", "STATFS", "ACCESS", "STATX"}

// counts are the requests of each kind counted so far.
type counts [numOps]int64

func (c *counter) snapshot() counts {
	var s counts
	if c == nil {
		return s
	}
	for i := range c.n {
		s[i] = c.n[i].Load()
	}
	return s
}

// sub is the requests counted between two snapshots.
func (s counts) sub(earlier counts) counts {
	for i := range s {
		s[i] -= earlier[i]
	}
	return s
}

func (s counts) total() int64 {
	var t int64
	for _, n := range s {
		t += n
	}
	return t
}

// String lists the kinds sent, most first, as "LOOKUP 10000, READ 10000";
// "none" if there were none.
func (s counts) String() string {
	var kinds []int
	for i, n := range s {
		if n > 0 {
			kinds = append(kinds, i)
		}
	}
	if len(kinds) == 0 {
		return "none"
	}
	slices.SortStableFunc(kinds, func(a, b int) int { return int(s[b] - s[a]) })
	var b strings.Builder
	for i, k := range kinds {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", opNames[k], s[k])
	}
	return b.String()
}

func (c *counter) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	c.n[opLookup].Add(1)
	return c.RawFileSystem.Lookup(cancel, h, name, out)
}

func (c *counter) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	c.n[opGetattr].Add(1)
	return c.RawFileSystem.GetAttr(cancel, in, out)
}

func (c *counter) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	c.n[opSetattr].Add(1)
	return c.RawFileSystem.SetAttr(cancel, in, out)
}

func (c *counter) Mkdir(cancel <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	c.n[opMkdir].Add(1)
	return c.RawFileSystem.Mkdir(cancel, in, name, out)
}

func (c *counter) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	c.n[opCreate].Add(1)
	return c.RawFileSystem.Create(cancel, in, name, out)
}

func (c *counter) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	c.n[opOpen].Add(1)
	return c.RawFileSystem.Open(cancel, in, out)
}

func (c *counter) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	c.n[opRead].Add(1)
	return c.RawFileSystem.Read(cancel, in, buf)
}

func (c *counter) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	c.n[opWrite].Add(1)
	return c.RawFileSystem.Write(cancel, in, data)
}

// Writev serves WRITE (go-fuse asks Writev first, then Write if that
// answers ENOSYS).
func (c *counter) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	n, st := c.RawFileSystem.Writev(cancel, in, data)
	if st != fuse.ENOSYS {
		c.n[opWrite].Add(1)
	}
	return n, st
}

func (c *counter) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	c.n[opFlush].Add(1)
	return c.RawFileSystem.Flush(cancel, in)
}

func (c *counter) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {
	c.n[opRelease].Add(1)
	c.RawFileSystem.Release(cancel, in)
}

func (c *counter) Fsync(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	c.n[opFsync].Add(1)
	return c.RawFileSystem.Fsync(cancel, in)
}

func (c *counter) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	c.n[opOpendir].Add(1)
	return c.RawFileSystem.OpenDir(cancel, in, out)
}

func (c *counter) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	c.n[opReaddir].Add(1)
	return c.RawFileSystem.ReadDir(cancel, in, out)
}

func (c *counter) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	c.n[opReaddirplus].Add(1)
	return c.RawFileSystem.ReadDirPlus(cancel, in, out)
}

func (c *counter) ReleaseDir(in *fuse.ReleaseIn) {
	c.n[opReleasedir].Add(1)
	c.RawFileSystem.ReleaseDir(in)
}

func (c *counter) StatFs(cancel <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	c.n[opStatfs].Add(1)
	return c.RawFileSystem.StatFs(cancel, h, out)
}

func (c *counter) Access(cancel <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	c.n[opAccess].Add(1)
	return c.RawFileSystem.Access(cancel, in)
}

func (c *counter) Statx(cancel <-chan struct{}, in *fuse.StatxIn, out *fuse.StatxOut) fuse.Status {
	c.n[opStatx].Add(1)
	return c.RawFileSystem.Statx(cancel, in, out)
}
