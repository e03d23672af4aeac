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
// Mounting needs CAP_SYS_ADMIN and /dev/fuse. Once the mount is up, a
// daemon running as root starts a small unmount helper (the same binary,
// re-executed) that keeps CAP_SYS_ADMIN only and waits on a pipe, then
// drops every capability from its own effective, permitted, inheritable,
// ambient and bounding sets, on every thread. The serving process thereby
// holds no privilege for the rest of its life. When the daemon stops — or
// dies, even by SIGKILL — the pipe closes and the helper detaches the
// mount, so no dead mount is left behind.
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
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/fusefs"
	"github.com/semfs/semfs/wire"
)

// Main is one daemon. Set Config (from ParseConfig), call Run.
type Main struct {
	Config Config
	// Logger receives the daemon's log; nil means slog.Default().
	Logger *slog.Logger

	log     *slog.Logger
	apps    *Apps
	stack   *stack
	fsys    semfs.FS
	mnt     *fusefs.Server
	helper  *unmountHelper
	sock    *socketServer
	started time.Time
	ready   atomic.Bool
	dropped bool

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
	st, err := openStack(ctx, cfg, m.log)
	if err != nil {
		return err
	}
	m.stack, m.fsys = st, st.fsys

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
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("daemon: cannot mount at %s: /dev/fuse is missing (%v).\n"+
			"To run without a mount set SEMFS_MODE=headless (control socket only), or SEMFS_MODE=off to turn semfs off", cfg.Mount, err)
	}
	mnt, err := fusefs.Mount(cfg.Mount, m.fsys, fusefs.Options{
		Principal:    m.apps.Principal,
		AllowOther:   cfg.AllowOther,
		StatfsDir:    cfg.Data,
		AttrTimeout:  cfg.AttrTimeout,
		EntryTimeout: cfg.AttrTimeout,
		Debug:        cfg.Debug,
		Logf:         func(format string, args ...any) { m.log.Warn(fmt.Sprintf(format, args...)) },
	})
	if err != nil {
		return fmt.Errorf("daemon: cannot mount at %s: %w.\n"+
			"To run without a mount set SEMFS_MODE=headless (control socket only), or SEMFS_MODE=off to turn semfs off", cfg.Mount, err)
	}
	m.mnt = mnt
	if cfg.DropCaps && os.Geteuid() == 0 {
		h, err := startUnmountHelper(mnt.Dir())
		if err != nil {
			return fmt.Errorf("daemon: starting the unmount helper before dropping capabilities: %w (set SEMFS_DROP_CAPS=0 to keep them)", err)
		}
		m.helper = h
		if err := DropCapabilities(); err != nil {
			return fmt.Errorf("daemon: dropping capabilities: %w (set SEMFS_DROP_CAPS=0 to keep them)", err)
		}
		m.dropped = true
	} else if os.Geteuid() == 0 {
		m.log.Warn("semfs daemon keeps its capabilities (SEMFS_DROP_CAPS=0): the serving process holds CAP_SYS_ADMIN for its whole life")
	}
	return nil
}

func (m *Main) mountDir() string {
	if m.mnt == nil {
		return ""
	}
	return m.mnt.Dir()
}

// Health is the readiness answer of the `health` op.
func (m *Main) Health() wire.Health {
	h := wire.Health{Version: wire.Version, Ready: m.ready.Load(), Mode: m.Config.Mode, Mount: m.mountDir(), Started: m.started}
	if m.stack != nil {
		h.Model = m.stack.modelName()
	}
	return h
}

// FS returns the tree the daemon serves (nil before Start).
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
		if m.mnt != nil {
			if m.dropped {
				// Without CAP_SYS_ADMIN only the helper can unmount.
				errs = append(errs, m.helper.unmount())
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
