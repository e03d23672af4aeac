// Package daemon is the semfs daemon (seed 000's semantic-fs-daemon): it
// serves one tree — a host backing directory under the metadata layer and
// its SQLite index — through a FUSE mount and a control socket.
//
// # Boot
//
// [Main.Run] boots in this order, and any failure stops the boot with a
// message saying what to do:
//
//  1. load and check the embedding models (embedding.Check): a missing or
//     broken model aborts, there is no degraded mode;
//  2. open the index and settle the model-identity marker
//     (embedding.EnsureModel), then the metadata layer over hostfs;
//  3. start the drain workers that fill vectors in the background;
//  4. mount FUSE at Config.Mount (mode "mount"); when the mount cannot be
//     made the daemon says why and names SEMFS_MODE=headless / off;
//  5. drop capabilities (Config.DropCaps, as root): see Privileges;
//  6. serve the control socket, then signal readiness: the `health` op
//     answers Ready, and the Config.Ready file is written.
//
// SIGINT and SIGTERM (cancelling Run's context) unmount and close cleanly.
//
// # Privileges
//
// Mounting needs CAP_SYS_ADMIN and /dev/fuse. A daemon started as root in
// mount mode with DropCaps (the default) mounts with mount(2) on a fresh
// /dev/fuse descriptor, starts a small unmount helper, and then re-executes
// itself with no capabilities at all: capabilities are per thread, so the
// sets are emptied on one locked thread which then execs, with
// SECBIT_NOROOT locked and an empty bounding set, so neither this image nor
// anything it runs can regain a privilege. The new image boots, serves the
// inherited descriptor and the socket, and holds no capability for its
// whole life (CapEff, CapPrm, CapBnd and CapAmb are 0 in /proc/PID/status).
// The helper — the same binary, re-executed with CAP_SYS_ADMIN alone as an
// ambient capability — does nothing but wait on a pipe from the daemon;
// when the daemon stops, or dies even by SIGKILL, the pipe closes and the
// helper detaches the mount, so no dead mount is left behind.
//
// With SEMFS_DROP_CAPS=0 (or when not root, mounting via fusermount3) the
// daemon mounts in-process and keeps whatever privileges it started with.
//
// # Passthrough and caching
//
// Kernel FUSE passthrough (reads and writes of backing files by the
// kernel itself, near native speed) needs CAP_SYS_ADMIN in the serving
// process: a daemon that dropped its capabilities serves every read and
// write itself, and logs "passthrough=false" when the mount is up. The
// metadata layer re-reads a file opened for writing at close, so files
// written by passthrough are indexed like any other; attribution happens
// at open. SEMFS_PASSTHROUGH=0 turns passthrough off.
//
// Changes made through the socket, HTTP or MCP go through the same tree,
// which reports them to the mount (meta.Options.Changed): the kernel drops
// the file's pages and attributes or the name's entry before the call
// returns. So over a backing directory the kernel keeps pages across opens
// and caches attributes and names for a minute (Config.AttrTimeout 0); over
// a bucket, which other daemons change, for a second. Files changed in the
// backing directory by anything other than the daemon are seen once the
// kernel's cache expires or is evicted.
//
// # Attribution
//
// `register {app}` over the socket records the caller's pid (SO_PEERCRED).
// FUSE requests and socket requests from that process or its descendants
// run as Principal{App: app}; others as Principal{ID: "uid:N"}, which the
// metadata layer records honestly as created_by.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/fusefs"
	"github.com/semfs/semfs/httpapi"
	"github.com/semfs/semfs/wire"
)

// Main is one daemon. Set Config (from ParseConfig), call Run.
type Main struct {
	Config Config
	// Logger receives the daemon's log; nil means slog.Default().
	Logger *slog.Logger
	// Tree, if set, is served instead of the tree built from Config (the
	// metadata layer over Config.Data with the index at Config.Index):
	// models, index and drain workers are then not started. For hosts
	// that assemble their own layer stack, and for tests of the socket.
	Tree semfs.FS

	log      *slog.Logger
	apps     *Apps
	stack    *stack
	fsys     semfs.FS     // the tree, below the access layer
	access   *accessLayer // the access layer of the mount and the socket
	served   semfs.FS     // fsys under the access layer
	tokens   httpapi.Config
	mnt      *fusefs.Server
	helper   *os.File // write end of the unmount helper's pipe
	sock     *socketServer
	http     *http.Server
	httpAddr string
	started  time.Time
	ready    atomic.Bool
	dropped  bool

	closeOnce sync.Once
	closeErr  error
}

// Run boots the daemon, serves until ctx is done, then shuts down. It
// returns the boot error, or the shutdown error.
func (m *Main) Run(ctx context.Context) error {
	if err := m.Start(ctx); err != nil {
		m.Close()
		return err
	}
	<-ctx.Done()
	return m.Close()
}

// Start boots the daemon and returns once it is ready (or failed).
func (m *Main) Start(ctx context.Context) error {
	m.log = m.Logger
	if m.log == nil {
		m.log = slog.Default()
	}
	m.started = time.Now()
	m.apps = NewApps()
	cfg := m.Config
	if cfg.Mode == ModeOff {
		m.log.Info("semfs daemon is off (SEMFS_MODE=off): no mount, no socket")
		return nil
	}
	if cfg.Mode == ModeMount && cfg.OpenFree && cfg.Tokens != "" {
		// Checked before mounting (and again by the image that serves,
		// which boots through here too).
		tc, err := httpapi.LoadConfig(cfg.Tokens)
		if err == nil {
			err = checkOpenFreeTokens(tc.Tokens)
		}
		if err != nil {
			return fmt.Errorf("daemon: tokens file %s: %w", cfg.Tokens, err)
		}
	}
	if cfg.Mode == ModeMount && cfg.DropCaps && os.Geteuid() == 0 && os.Getenv(fuseFDEnv) == "" {
		return m.mountAndDropPrivileges()
	}
	if cfg.Tokens != "" {
		// Checked before the models load and the index opens: a bad
		// file fails the boot at once.
		tc, err := httpapi.LoadConfig(cfg.Tokens)
		if err == nil {
			err = checkTokens(tc.Tokens)
		}
		if err != nil {
			return fmt.Errorf("daemon: tokens file %s: %w", cfg.Tokens, err)
		}
		m.tokens = tc
	}
	if m.Tree != nil {
		m.fsys = m.Tree
	} else {
		st, err := openStack(ctx, cfg, m.log)
		if err != nil {
			return err
		}
		m.stack, m.fsys = st, st.fsys
	}
	al, err := newAccessLayer(m.fsys, m.tokens.Tokens)
	if err != nil {
		return fmt.Errorf("daemon: tokens file %s: %w", cfg.Tokens, err)
	}
	m.access, m.served = al, sessionFS{al}

	if cfg.Mode == ModeMount {
		if err := m.mount(); err != nil {
			return err
		}
	}
	ln, err := listenSocket(cfg.Socket, cfg.SocketGroup)
	if err != nil {
		return err
	}
	m.sock = &socketServer{ln: ln, path: cfg.Socket, handlers: m.handlers(), apps: m.apps, log: m.log, conns: map[net.Conn]struct{}{}}
	go m.sock.serve(context.WithoutCancel(ctx))
	if cfg.HTTP.Listen != "" {
		if err := m.serveHTTP(); err != nil {
			return err
		}
	}

	m.ready.Store(true)
	if cfg.Ready != "" {
		if err := os.WriteFile(cfg.Ready, []byte(fmt.Sprintf("%d\n", os.Getpid())), 0o644); err != nil {
			return fmt.Errorf("daemon: writing the ready file: %w", err)
		}
	}
	m.log.Info("semfs daemon ready", "mode", cfg.Mode, "mount", m.mountDir(), "socket", cfg.Socket, "data", cfg.Data, "index", cfg.Index, "capabilities_dropped", m.dropped)
	return nil
}

func (m *Main) mount() error {
	cfg := m.Config
	advice := "To run without a mount set SEMFS_MODE=headless (control socket only), or SEMFS_MODE=off to turn semfs off"
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("daemon: cannot mount at %s: /dev/fuse is missing (%v).\n%s", cfg.Mount, err, advice)
	}
	// The daemon's own tree reports every change its other surfaces make
	// (see notifyMount), so over a backing directory nobody else changes
	// the kernel may cache long. A bucket is shared with other daemons,
	// and a tree given in code may change any way.
	notified := m.stack != nil && cfg.Store == ""
	if cfg.OpenFree && !notified {
		return fmt.Errorf("daemon: SEMFS_OPEN_FREE/-open-free needs the daemon's own tree over a backing directory, where every change reaches the mount (the kernel keeps pages across opens); this daemon serves a bucket or a tree given in code: set SEMFS_OPEN_FREE=0")
	}
	attr := cfg.AttrTimeout
	if attr == 0 {
		attr = time.Second
		if notified {
			attr = time.Minute
		}
	}
	shared := m.access.shared
	if cfg.OpenFree && len(m.tokens.Tokens) == 0 {
		// Without tokens every caller of the mount has no groups and the
		// default policy: no name or listing differs by caller, and the
		// open-free mode opens directories without a request too.
		shared = nil
	}
	opts := fusefs.Options{
		Principal:     m.apps.Principal,
		Shared:        shared,
		AllowOther:    cfg.AllowOther,
		StatfsDir:     cfg.Data,
		AttrTimeout:   attr,
		EntryTimeout:  attr,
		KeepCache:     notified,
		NoPassthrough: !cfg.Passthrough,
		Debug:         cfg.Debug,
		Logf:          func(format string, args ...any) { m.log.Warn(fmt.Sprintf(format, args...)) },
		// A bucket receives a file when it is synced or closed: close(2)
		// must see a failed upload.
		WriteBack: cfg.Store != "",
		OpenFree:  cfg.OpenFree,
	}
	if fdText := os.Getenv(fuseFDEnv); fdText != "" {
		// This image was exec'd without capabilities by one that mounted.
		fd, err1 := strconv.Atoi(fdText)
		hfd, err2 := strconv.Atoi(os.Getenv(helperFDEnv))
		if err1 != nil || err2 != nil {
			return fmt.Errorf("daemon: bad %s/%s", fuseFDEnv, helperFDEnv)
		}
		m.helper = os.NewFile(uintptr(hfd), "unmount-helper")
		os.Unsetenv(fuseFDEnv)
		os.Unsetenv(helperFDEnv)
		mnt, err := fusefs.ServeFD(fd, cfg.Mount, m.served, opts)
		if err != nil {
			return fmt.Errorf("daemon: serving the mount at %s: %w", cfg.Mount, err)
		}
		m.setMount(mnt)
		m.dropped = true
		return nil
	}
	mnt, err := fusefs.Mount(cfg.Mount, m.served, opts)
	if err != nil {
		return fmt.Errorf("daemon: cannot mount at %s: %w.\n%s", cfg.Mount, err, advice)
	}
	m.setMount(mnt)
	if os.Geteuid() == 0 && !cfg.DropCaps {
		m.log.Warn("semfs daemon keeps its capabilities (SEMFS_DROP_CAPS=0): the serving process holds CAP_SYS_ADMIN for its whole life")
	}
	return nil
}

// mountAndDropPrivileges is the privileged first image of a daemon started
// as root with DropCaps: it mounts, starts the unmount helper, and re-execs
// itself with no capabilities, handing over the /dev/fuse descriptor and the
// helper's pipe. It returns only on failure.
func (m *Main) mountAndDropPrivileges() error {
	cfg := m.Config
	advice := "To run without a mount set SEMFS_MODE=headless (control socket only), or SEMFS_MODE=off to turn semfs off; SEMFS_DROP_CAPS=0 keeps the capabilities"
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("daemon: cannot mount at %s: /dev/fuse is missing (%v).\n%s", cfg.Mount, err, advice)
	}
	fd, err := fusefs.PrepareMount(cfg.Mount, cfg.AllowOther)
	if err != nil {
		return fmt.Errorf("daemon: cannot mount at %s: %w.\n%s", cfg.Mount, err, advice)
	}
	pipe, err := startUnmountHelper(cfg.Mount)
	if err != nil {
		syscall.Unmount(cfg.Mount, syscall.MNT_DETACH)
		return fmt.Errorf("daemon: starting the unmount helper: %w.\n%s", err, advice)
	}
	exe, err := os.Executable()
	if err == nil {
		env := append(os.Environ(), fmt.Sprintf("%s=%d", fuseFDEnv, fd), fmt.Sprintf("%s=%d", helperFDEnv, pipe.Fd()))
		err = execWithCapabilities(nil, exe, os.Args, env)
	}
	pipe.Close() // the helper unmounts
	return fmt.Errorf("daemon: re-executing without capabilities: %w.\n%s", err, advice)
}

// checkOpenFreeTokens refuses the open-free mode (Config.OpenFree) with
// tokens that let a principal read a path without writing it. Every
// caller without a token may write everywhere it sees, so those are what
// make write access differ between callers who can see a file; a "none"
// rule and groups only hide files, and a caller who cannot see a file
// cannot look it up. The mode needs that access not to differ
// (fusefs.Options.OpenFree): without OPEN the kernel writes a shared
// mapping's pages back naming no caller, and the mount makes the write as
// the file's last caller.
func checkOpenFreeTokens(tokens map[string]httpapi.Token) error {
	for _, secret := range slices.Sorted(maps.Keys(tokens)) {
		t := tokens[secret]
		pol := t.Policy()
		reads := pol.Default == access.Read
		for _, r := range pol.Rules {
			reads = reads || r.Access == access.Read
		}
		if reads {
			return fmt.Errorf("token %q may read paths it may not write (read_only, default \"read\" or a \"read\" rule), and SEMFS_OPEN_FREE/-open-free needs every caller who can see a file to be allowed to write it if any caller may: in that mode the kernel writes a shared mapping's pages back without naming who mapped them, so a reader's stores could be written as another caller's. Set SEMFS_OPEN_FREE=0, or give the token write or none where it has read", t.ID)
		}
	}
	return nil
}

// setMount records the mount, which from now on hears of the changes made
// through the daemon's other surfaces.
func (m *Main) setMount(mnt *fusefs.Server) {
	m.mnt = mnt
	if m.stack != nil {
		m.stack.mounted.Store(mnt)
	} else {
		m.access.mounted.Store(mnt) // a tree given in code: no reporting layer
	}
	m.log.Info("mount serving", "dir", mnt.Dir(), "passthrough", mnt.Passthrough(), "open_free", m.Config.OpenFree)
}

func (m *Main) mountDir() string {
	if m.mnt == nil {
		return ""
	}
	return m.mnt.Dir()
}

func isMounted(dir string) bool {
	_, mounted := fusefs.MountType(dir)
	return mounted
}

// Health is the readiness answer of the `health` op.
func (m *Main) Health() wire.Health {
	h := wire.Health{Version: wire.Version, Ready: m.ready.Load(), Mode: m.Config.Mode, Mount: m.mountDir(), Started: m.started}
	if m.stack != nil {
		h.Model = m.stack.modelName()
	}
	return h
}

// Backlog is the indexing work the daemon still owes its tree.
type Backlog struct {
	PendingFiles int            // files whose content is not indexed yet (counted up to 1000)
	Unembedded   map[string]int // rows still needing a vector, per embedding space
}

// Idle reports whether nothing is owed.
func (b Backlog) Idle() bool {
	for _, n := range b.Unembedded {
		if n > 0 {
			return false
		}
	}
	return b.PendingFiles == 0
}

// Backlog reports the indexing work still owed: what a benchmark waits
// for to know the index has caught up with the writes. A daemon serving
// its own Tree owes nothing.
func (m *Main) Backlog(ctx context.Context) (Backlog, error) {
	b := Backlog{Unembedded: map[string]int{}}
	if m.stack == nil {
		return b, nil
	}
	pending, err := m.stack.index.PendingFiles(ctx, 1000)
	if err != nil {
		return b, err
	}
	b.PendingFiles = len(pending)
	if m.stack.meta != nil {
		b.PendingFiles += m.stack.meta.Unflushed() // closed, row not stored yet
	}
	for _, w := range m.stack.workers {
		n, err := m.stack.index.CountNeedingEmbedding(ctx, w.Space)
		if err != nil {
			return b, err
		}
		b.Unembedded[w.Space] = n
	}
	return b, nil
}

// FS returns the tree the daemon serves, below its access layer (nil
// before Start): calls see what the host sees.
func (m *Main) FS() semfs.FS { return m.fsys }

// Close unmounts, stops the socket and closes the index. It is safe to call
// more than once.
func (m *Main) Close() error {
	m.closeOnce.Do(func() {
		m.ready.Store(false)
		if m.Config.Ready != "" {
			os.Remove(m.Config.Ready)
		}
		var errs []error
		if m.sock != nil {
			m.sock.close()
		}
		if m.http != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			if err := m.http.Shutdown(sctx); err != nil {
				m.http.Close()
			}
			cancel()
		}
		if m.mnt != nil {
			if m.helper != nil {
				// Without CAP_SYS_ADMIN only the helper can unmount.
				errs = append(errs, stopHelper(m.helper, m.mnt.Dir(), isMounted))
				m.mnt.Wait()
			} else if err := m.mnt.Unmount(); err != nil {
				errs = append(errs, err)
			}
		}
		if m.stack != nil {
			errs = append(errs, m.stack.close())
		}
		m.closeErr = errors.Join(errs...)
	})
	return m.closeErr
}
