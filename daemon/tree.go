package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/fusefs"
	"github.com/semfs/semfs/meta"
)

// newTree builds the served tree: the metadata layer over the host
// directory, keeping its rows in the index. It reconciles the index with the
// directory first, so writes a crashed daemon acknowledged but did not index
// are indexed now and rows of vanished files are dropped.
//
// Closes are deferred by closeDelay (meta.Options.CloseDelay): a stream of
// them is stored in batches, and a RELEASE no longer holds one of the
// mount's two request readers while its row is committed. The journal
// keeps the writers of pending closes across a crash.
func newTree(ctx context.Context, s *stack, log *slog.Logger, closeDelay time.Duration, journal string) (semfs.FS, error) {
	m, err := meta.New(s.host, s.index, meta.Options{Spaces: s.spaces, Logger: log, Deferred: s.kick, Changed: s.notifyMount,
		CloseDelay: closeDelay, CloseJournal: journal, PeerRetagged: s.peerRetagged})
	if err != nil {
		return nil, fmt.Errorf("daemon: metadata layer: %w", err)
	}
	start := time.Now()
	rep, err := m.Reconcile(ctx, meta.ReconcileOptions{})
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("daemon: reconciling the index with the backing directory: %w", err)
	}
	log.Info("index reconciled with the backing directory", "files", rep.Files, "added", rep.Added,
		"updated", rep.Updated, "removed", rep.Removed, "took", time.Since(start).Round(time.Millisecond))
	s.meta = m
	return reporting{FS: m, s: s}, nil
}

// peerRetagged tells the mount, if any, that another process (the CLI's
// semfs tag, a second daemon on a shared index) changed who may see the
// paths, so that the kernel drops the names and listings it cached for
// them. In the background: the poller that calls it must not wait for
// the kernel.
func (s *stack) peerRetagged(paths []string) {
	mnt := s.mounted.Load()
	if mnt == nil {
		return
	}
	go func() {
		for _, p := range paths {
			mnt.Retagged(p)
		}
	}()
}

// notifyMount tells the mount, if any, of a change made through the
// socket, HTTP or MCP, so that the kernel drops what it cached for the
// paths involved before the call that made the change returns. Changes
// made through the mount itself need no word: the kernel made them.
func (s *stack) notifyMount(ctx context.Context, c meta.Change) {
	mnt := s.mounted.Load()
	if mnt == nil || fusefs.FromMount(ctx) {
		return
	}
	switch c.Op {
	case meta.ChangeWrite:
		mnt.Written(c.Path)
	case meta.ChangeReplace:
		mnt.Replaced(c.Path)
	case meta.ChangeRemove:
		mnt.Removed(c.Path)
	case meta.ChangeRename:
		mnt.Renamed(c.Path, c.To)
	case meta.ChangeCreate:
		mnt.Created(c.Path)
	}
}
