package fusefs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/semfs/semfs"
)

// Options configure a mount. The zero value is usable.
type Options struct {
	// Principal resolves the caller of a request (pid, uid, gid from the
	// kernel) to the principal the request runs as. Nil means
	// Principal{ID: "uid:N"}.
	Principal func(pid, uid, gid uint32) semfs.Principal
	// UID and GID own every file in stat results. Zero means the mounting
	// process's own ids.
	UID, GID uint32
	// AttrTimeout and EntryTimeout are how long the kernel caches
	// attributes and names; 0 means one second, a negative value disables
	// caching (for trees that other surfaces change often).
	AttrTimeout, EntryTimeout time.Duration
	// StatfsDir, if set, is a host directory whose statfs(2) numbers the
	// mount reports (the backing directory of a host tree). Passthrough is
	// probed with a file there, as the kernel may refuse backing files on
	// some host file systems.
	StatfsDir string
	// WriteBack says the tree holds written bytes until a file's Sync or
	// Close (an object store uploads then). The kernel then sends FLUSH on
	// every close(2) and a writable handle is synced there, so that close
	// reports a failed upload: the error of RELEASE never reaches the
	// program. Without it FLUSH is declined (ENOSYS) and the kernel stops
	// sending it, saving a round trip per close: writes reach such a tree
	// when they are made.
	WriteBack bool
	// AllowOther lets users other than the mounting one use the mount.
	AllowOther bool
	// NoPassthrough turns kernel FUSE passthrough off. By default a file
	// whose handle has a host descriptor (semfs.Fder: hostfs files, through
	// the layers that forward it) is read and written by the kernel
	// directly, as far as the kernel allows it (Linux 6.9 or later, and the
	// serving process holds CAP_SYS_ADMIN; otherwise every file is served
	// through the daemon, as with this option).
	NoPassthrough bool
	// KeepCache keeps a file's pages in the kernel's cache across opens
	// (FOPEN_KEEP_CACHE). Set it only when every change to the tree is made
	// through this mount or reported to the Server (Server.Written and its
	// siblings): a change made behind the mount and not reported would be
	// read stale until the pages are evicted.
	KeepCache bool
	// Shared, if set, reports whether every caller of the mount sees the
	// same at path p: its name and attributes (listing false), or, for a
	// directory, its listing (listing true). The kernel's caches serve
	// every caller alike, so what is not shared is not cached: such a
	// name and its attributes get no timeout, and such a listing is not
	// kept (no FOPEN_CACHE_DIR), so that every caller's lookup, stat and
	// readdir reaches the tree and is answered for that caller. For a
	// name, ctx carries the principal of the caller just answered for p
	// (a caller who sees no more than anyone settles the question); for a
	// listing, asked at OPENDIR, it carries none. It must be cheap. Nil
	// means everything is shared.
	Shared func(ctx context.Context, p string, listing bool) bool
	// OpenFree opens and closes existing files without a request: OPEN
	// answers ENOSYS, after which the kernel sends no OPEN, RELEASE or
	// FLUSH for them and keeps their pages across opens, and reads and
	// writes arrive without a handle and are served from host files the
	// mount opens as the caller on first use and closes when idle (see
	// free.go). A file written so is reported to the tree as closed a
	// short quiet period after its last write, at fsync(2) and at
	// unmount — not at close(2). It needs KeepCache (the kernel keeps
	// pages regardless) and excludes WriteBack (close(2) sends nothing
	// to report a failed upload on); passthrough is off (every read and
	// write goes through the daemon), and with it the mapping watch.
	// CREATE still opens with a handle, as without the option.
	//
	// The caller must serve a tree where every caller who can see a file
	// may write it if any caller may (callers may differ in what they
	// see, not in what they may write of it). No OPEN checks an open for
	// writing, and the kernel writes a shared mapping's pages back
	// without naming the program that mapped them (pid 0), so such a
	// write is made as the file's last caller: where write access
	// differed, a caller who may only read could write through a mapping
	// as one who may write, and a writer's mapped stores could be refused
	// as a reader's and lost. Only created_by of a file first written
	// through a mapping may then name another caller.
	OpenFree bool
	// Logf receives diagnostics (unmapped errors); nil means log.Printf.
	Logf func(format string, args ...any)
	// Debug logs every FUSE request.
	Debug bool
}

// check refuses combinations of options that cannot hold.
func (o Options) check() error {
	if o.OpenFree && !o.KeepCache {
		return errors.New("fusefs: OpenFree needs KeepCache: the kernel keeps a file's pages across opens that send no request, which is right only when every change to the tree goes through the mount or is reported (set KeepCache, or turn OpenFree off)")
	}
	if o.OpenFree && o.WriteBack {
		return errors.New("fusefs: OpenFree excludes WriteBack: a close(2) without a request cannot report a failed upload (turn OpenFree off for a write-back tree)")
	}
	return nil
}

func (o Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
		return
	}
	log.Printf(format, args...)
}

// Server is a mounted tree.
type Server struct {
	dir   string
	srv   *fuse.Server
	t     *tree
	magic bool // served on an inherited descriptor (ServeFD)
}

// Passthrough reports whether the kernel reads and writes files with a host
// descriptor directly (see Options.NoPassthrough).
func (s *Server) Passthrough() bool { return s.t.passthrough.Load() }

// Served returns how many requests acting on the tree — lookups, opens,
// creates, listings, attribute reads and changes — the mount served so
// far. Sampled twice, it tells whether programs were using the mount in
// between (the daemon holds background work back while they are).
func (s *Server) Served() uint64 { return s.t.served.Load() }

// Dir is the mount point.
func (s *Server) Dir() string { return s.dir }

// Wait blocks until the file system is unmounted (by Unmount or by anyone
// else), then reports the files written without a handle in the
// open-free mode (Options.OpenFree) to the tree, as Unmount does.
func (s *Server) Wait() {
	s.srv.Wait()
	s.t.free.close()
}

func timeout(d time.Duration) *time.Duration {
	switch {
	case d == 0:
		d = time.Second
	case d < 0:
		d = 0
	}
	return &d
}

// Mount serves fsys at dir (created if missing) until Unmount. As root it
// calls mount(2) directly, otherwise it uses fusermount3. A stale mount at
// dir is detached first; a live one is refused.
func Mount(dir string, fsys semfs.FS, opts Options) (*Server, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := ClearStale(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fusefs: creating mount point: %w", err)
	}
	return serve(dir, dir, fsys, opts)
}

// maxWrite is the largest READ/WRITE request: 1 MiB, the kernel's limit.
const maxWrite = 1 << 20

// PrepareMount mounts an empty FUSE connection at dir with mount(2) and
// returns its /dev/fuse descriptor, without close-on-exec, for [ServeFD] —
// typically in the same process after it exec'd itself without
// privileges. It needs CAP_SYS_ADMIN. A stale mount is cleared first.
func PrepareMount(dir string, allowOther bool) (fd int, err error) {
	if err := ClearStale(dir); err != nil {
		return -1, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return -1, fmt.Errorf("fusefs: creating mount point: %w", err)
	}
	fd, err = syscall.Open("/dev/fuse", syscall.O_RDWR, 0)
	if err != nil {
		return -1, fmt.Errorf("fusefs: opening /dev/fuse: %w", err)
	}
	data := fmt.Sprintf("fd=%d,rootmode=40000,user_id=%d,group_id=%d,max_read=%d", fd, os.Geteuid(), os.Getegid(), maxWrite)
	if allowOther {
		data += ",allow_other"
	}
	if err := syscall.Mount("semfs", dir, "fuse.semfs", syscall.MS_NOSUID|syscall.MS_NODEV, data); err != nil {
		syscall.Close(fd)
		return -1, fmt.Errorf("fusefs: mount(2) at %s: %w (mounting needs CAP_SYS_ADMIN and /dev/fuse)", dir, err)
	}
	return fd, nil
}

// ServeFD serves fsys on fd, a FUSE connection already mounted at dir (see
// [PrepareMount]). Unmounting such a mount needs CAP_SYS_ADMIN, which the
// serving process may have dropped: [Server.Unmount] then fails, and
// whoever kept the privilege detaches it.
func ServeFD(fd int, dir string, fsys semfs.FS, opts Options) (*Server, error) {
	return serve(fmt.Sprintf("/dev/fd/%d", fd), dir, fsys, opts)
}

func serve(mountPoint, dir string, fsys semfs.FS, opts Options) (*Server, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	if opts.OpenFree {
		// A file opened without a request is served through the page
		// cache: no passthrough to keep it consistent with.
		opts.NoPassthrough = true
	}
	if opts.UID == 0 && opts.GID == 0 {
		opts.UID, opts.GID = uint32(os.Getuid()), uint32(os.Getgid())
	}
	if opts.Logf == nil {
		opts.Logf = log.Printf
	}
	t := newTree(fsys, opts)
	neg := time.Duration(0)
	fopts := &gofs.Options{
		MountOptions: fuse.MountOptions{
			FsName:        "semfs",
			Name:          "semfs",
			DirectMount:   os.Geteuid() == 0,
			AllowOther:    opts.AllowOther,
			MaxWrite:      maxWrite,
			MaxReadAhead:  maxWrite,
			DisableXAttrs: true,
			// Plain READDIR: ls -R and find read d_type and stat only
			// what they need, instead of a LOOKUP per entry.
			DisableReadDirPlus: true,
			// Backing files may sit on a stacked file system (overlayfs,
			// a container's root): the kernel refuses them at the
			// default depth of 1. At 2 the mount itself cannot be
			// stacked on (an overlay over it).
			MaxStackDepth: 2,
			Debug:         opts.Debug,
		},
		// Entry and attribute timeouts are set on every reply (see
		// tree.entryTimeout): go-fuse would replace a zero one by its
		// default.
		NegativeTimeout: &neg,
		UID:             opts.UID,
		GID:             opts.GID,
		RootStableAttr:  &gofs.StableAttr{Ino: 1},
	}
	if opts.NoPassthrough {
		fopts.DisabledCapabilities |= fuse.CAP_PASSTHROUGH
	}
	root := &node{t: t}
	srv, err := mountNodes(mountPoint, root, fopts, t.noOpendir)
	if err != nil {
		return nil, fmt.Errorf("fusefs: mounting %s: %w (mounting needs /dev/fuse and either root (CAP_SYS_ADMIN) or fusermount3 from the fuse3 package)", dir, err)
	}
	t.mu.Lock()
	t.live[1] = root.EmbeddedInode()
	t.mu.Unlock()
	if !opts.NoPassthrough {
		t.passthrough.Store(canPassthrough(srv, opts.StatfsDir))
	}
	return &Server{dir: dir, srv: srv, t: t, magic: mountPoint != dir}, nil
}

// mountNodes mounts root as gofs.Mount does; with noOpendir, directories
// are opened without a request too (dirFree).
func mountNodes(mountPoint string, root gofs.InodeEmbedder, fopts *gofs.Options, noOpendir bool) (*fuse.Server, error) {
	if !noOpendir {
		return gofs.Mount(mountPoint, root, fopts)
	}
	srv, err := fuse.NewServer(dirFree{gofs.NewNodeFS(root, fopts)}, mountPoint, &fopts.MountOptions)
	if err != nil {
		return nil, err
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		return nil, err
	}
	return srv, nil
}

// dirFree serves directories without OPENDIR in the open-free mode, where
// no listing differs by caller (Options.Shared is nil): OPENDIR answers
// ENOSYS, after which the kernel opens and closes directories without a
// request (no OPENDIR, no RELEASEDIR) and keeps every listing it read
// (FOPEN_CACHE_DIR) until a change through the mount or a reported one
// drops it. go-fuse lists a directory only through an open handle, so a
// READDIR without one opens a handle for its own duration (the listing
// read for the first READDIR serves those that go on from it: see
// tree.keptList).
type dirFree struct{ fuse.RawFileSystem }

func (d dirFree) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	return fuse.ENOSYS
}

func (d dirFree) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	if in.Fh != 0 {
		return d.RawFileSystem.ReadDir(cancel, in, out)
	}
	var opened fuse.OpenOut
	if st := d.RawFileSystem.OpenDir(cancel, &fuse.OpenIn{InHeader: in.InHeader}, &opened); !st.Ok() {
		return st
	}
	rin := *in
	rin.Fh = opened.Fh
	st := d.RawFileSystem.ReadDir(cancel, &rin, out)
	d.RawFileSystem.ReleaseDir(&fuse.ReleaseIn{InHeader: in.InHeader, Fh: opened.Fh})
	return st
}

func (d dirFree) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return fuse.ENOSYS // disabled at INIT (DisableReadDirPlus)
}

// canPassthrough reports whether srv can register backing files with the
// kernel, which is what passthrough needs: the kernel agreed to it at INIT,
// this process holds CAP_SYS_ADMIN (a daemon that dropped its capabilities
// cannot), and the host file system is one the kernel accepts under FUSE
// (not stacked deeper than MaxStackDepth). It registers and unregisters an
// unnamed temporary file in dir, the tree's host directory (StatfsDir), or
// the executable's file when there is none. go-fuse falls back to serving
// reads and writes itself when a registration fails; knowing it here
// keeps the mount from mixing passthrough and cached opens of one file,
// which the kernel refuses, and Passthrough from saying what is not so.
func canPassthrough(srv *fuse.Server, dir string) bool {
	f, err := probeFile(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	id, errno := srv.RegisterBackingFd(&fuse.BackingMap{Fd: int32(f.Fd())})
	if errno != 0 {
		return false
	}
	srv.UnregisterBackingFd(id)
	return true
}

// probeFile opens a file of dir for canPassthrough: an O_TMPFILE file,
// which no one sees, or a named temporary file removed at once, or, in a
// directory this process cannot write, a file already there.
func probeFile(dir string) (*os.File, error) {
	if dir == "" {
		return os.Open("/proc/self/exe")
	}
	fd, err := syscall.Open(dir, unix.O_TMPFILE|syscall.O_RDWR|syscall.O_CLOEXEC, 0o600)
	if err == nil {
		return os.NewFile(uintptr(fd), dir), nil
	}
	if f, err := os.CreateTemp(dir, ".semfs-probe-*"); err == nil {
		os.Remove(f.Name())
		return f, nil
	}
	if d, err := os.Open(dir); err == nil {
		entries, _ := d.ReadDir(64)
		d.Close()
		for _, e := range entries {
			if e.Type().IsRegular() {
				if f, err := os.Open(filepath.Join(dir, e.Name())); err == nil {
					return f, nil
				}
			}
		}
	}
	return os.Open("/proc/self/exe")
}

// Unmount unmounts the tree, detaching it lazily if it stays busy.
func (s *Server) Unmount() error {
	defer s.t.mapped.close()
	defer s.t.free.close() // reports the files written without a handle
	if s.magic {
		if err := detach(s.dir); err != nil {
			return fmt.Errorf("fusefs: unmounting %s: %w", s.dir, err)
		}
		s.srv.Wait()
		return nil
	}
	var err error
	for range 5 {
		if err = s.srv.Unmount(); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	if derr := detach(s.dir); derr != nil {
		return fmt.Errorf("fusefs: unmounting %s: %v; lazy unmount: %w", s.dir, err, derr)
	}
	return nil
}

// ClearStale detaches a dead FUSE mount at dir (its server was killed, so
// any access fails with "transport endpoint is not connected"). It fails if
// a live FUSE file system is mounted there.
func ClearStale(dir string) error {
	_, err := os.Stat(dir)
	if errors.Is(err, syscall.ENOTCONN) || errors.Is(err, syscall.ECONNABORTED) {
		if derr := detach(dir); derr != nil {
			return fmt.Errorf("fusefs: %s holds a dead mount and detaching it failed: %w (run: umount -l %s)", dir, derr, dir)
		}
		return nil
	}
	if err == nil {
		if fstype, mounted := MountType(dir); mounted && strings.HasPrefix(fstype, "fuse") {
			return fmt.Errorf("fusefs: %s is already mounted (%s) by a live server; stop it or choose another mount point", dir, fstype)
		}
	}
	return nil
}

// detach lazily unmounts dir, with umount2(MNT_DETACH) when privileged and
// fusermount3 -uz otherwise.
func detach(dir string) error {
	if err := syscall.Unmount(dir, syscall.MNT_DETACH); err == nil {
		return nil
	}
	out, err := exec.Command("fusermount3", "-uz", dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// MountType reports the file system type mounted exactly at dir, read from
// /proc/self/mountinfo.
func MountType(dir string) (fstype string, mounted bool) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent maj:min root mountpoint opts... - fstype source superopts
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || unescapeMount(fields[4]) != dir {
			continue
		}
		for i, f := range fields {
			if f == "-" && i+1 < len(fields) {
				fstype = fields[i+1]
			}
		}
		mounted = true // keep the last (topmost) mount
	}
	return fstype, mounted
}

// unescapeMount undoes mountinfo's octal escapes (\040 for space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
