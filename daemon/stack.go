package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/embedding/models"
	"github.com/semfs/semfs/fusefs"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/postgres"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/meta"
	"github.com/semfs/semfs/objfs"
)

// stack is the tree the daemon serves and what keeps it: the host backing
// directory, the index, the models and the drain workers.
type stack struct {
	fsys      semfs.FS
	host      semfs.FS // the backing tree: hostfs over Data, or objfs over Store
	closeHost func() error
	index     index.Store
	meta      *meta.FS
	spaces    embedding.Spaces
	marker    embedding.Report

	workers []*embedding.Worker
	kickMu  sync.Mutex
	kicks   map[string]*time.Timer // per space: wakes its worker once saves pause
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mounted atomic.Pointer[fusefs.Server] // told of changes behind the mount
	quiet   quietWatch                    // when the mount last served a request, for yield
}

// checkModels loads the compiled-in models and checks each one. A failure
// is fatal: the daemon has no degraded mode.
func checkModels(ctx context.Context) (embedding.Spaces, error) {
	spaces, err := models.Default()
	if err != nil {
		return spaces, fmt.Errorf("daemon: loading the embedding models failed, refusing to start: %w", err)
	}
	for _, e := range []embedding.Embedder{spaces.Tags, spaces.Content} {
		if err := embedding.Check(ctx, e); err != nil {
			return spaces, fmt.Errorf("daemon: embedding model check failed, refusing to start: %w", err)
		}
	}
	return spaces, nil
}

func openStack(ctx context.Context, cfg Config, log *slog.Logger) (_ *stack, err error) {
	s := &stack{}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if s.spaces, err = checkModels(ctx); err != nil {
		return nil, err
	}
	var repaired []string
	if s.index, repaired, err = openIndex(ctx, cfg, log); err != nil {
		return nil, err
	}
	if len(repaired) > 0 {
		log.Warn("index derived data was inconsistent and was rebuilt; files will be re-indexed", "problems", repaired)
	}
	s.marker, err = embedding.EnsureModel(ctx, markerDir(cfg), s.index, map[string]embedding.Embedder{
		embedding.SpaceTags:    s.spaces.Tags,
		embedding.SpaceContent: s.spaces.Content,
	})
	if err != nil {
		return nil, err
	}
	for _, sp := range s.marker.Spaces {
		switch sp.Action {
		case embedding.ActionReset:
			log.Info("embedding model changed: vectors wiped, the drain worker re-embeds them", "space", sp.Space, "model", sp.Model.Name)
		case embedding.ActionOwed:
			log.Warn("embedding reset owed; dense results are unreliable until a later boot settles it", "space", sp.Space, "err", sp.Err)
		}
	}
	if s.host, s.closeHost, err = openBacking(ctx, cfg); err != nil {
		return nil, err
	}
	for _, sp := range []struct {
		name string
		e    embedding.Embedder
	}{{embedding.SpaceTags, s.spaces.Tags}, {embedding.SpaceContent, s.spaces.Content}} {
		s.workers = append(s.workers, &embedding.Worker{Store: s.index, Space: sp.name, Embedder: sp.e, Logger: log, Yield: s.yield})
	}
	if s.fsys, err = newTree(ctx, s, log, cfg.CloseDelay, closesJournal(cfg)); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	for _, w := range s.workers {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			w.Run(wctx)
		}()
	}
	return s, nil
}

// kickQuiet is how long saves must pause before the drain workers are
// woken for the vectors the saves left them.
const kickQuiet = 300 * time.Millisecond

// kick wakes the drain worker of space once saves have paused for
// kickQuiet, after the metadata layer left it vectors to embed. Waking it
// on every save made it run a pass per few files during a stream of
// writes, and each pass that empties the queue also measures the space's
// neighbour distribution (~0.25 s of CPU here): a third of the daemon's
// CPU while 2000 files were written. During a stream that does not pause,
// the worker's own interval still drains.
func (s *stack) kick(space string) {
	s.kickMu.Lock()
	defer s.kickMu.Unlock()
	if t, ok := s.kicks[space]; ok {
		t.Reset(kickQuiet)
		return
	}
	for _, w := range s.workers {
		if w.Space == space {
			if s.kicks == nil {
				s.kicks = map[string]*time.Timer{}
			}
			s.kicks[space] = time.AfterFunc(kickQuiet, w.Kick)
		}
	}
}

// Drain batches yield to programs using the mount: a batch waits until
// the mount has served no request for yieldQuiet, or for yieldMax at
// most, so that a stream that never pauses is still drained (a batch a
// second at least). Embedding a batch of contents takes every core for
// a tenth of a second or more, and each file a program creates meanwhile
// waits for a core at every request.
const (
	yieldQuiet = 100 * time.Millisecond
	yieldMax   = time.Second
)

// yield is the drain workers' Yield.
func (s *stack) yield(ctx context.Context) {
	if mnt := s.mounted.Load(); mnt != nil {
		s.quiet.wait(ctx, mnt.Served, yieldQuiet, yieldMax)
	}
}

// quietWatch tells how long a request counter has stood still: it keeps
// the count it last saw and when it first saw it.
type quietWatch struct {
	mu    sync.Mutex
	count uint64
	since time.Time
}

// wait returns once served has not changed for quiet, after max, or when
// ctx is done. A counter that stood still since the last call for quiet
// or longer returns at once, so an idle mount costs the drain nothing.
func (q *quietWatch) wait(ctx context.Context, served func() uint64, quiet, max time.Duration) {
	deadline := time.Now().Add(max)
	for {
		now := time.Now()
		n := served()
		q.mu.Lock()
		if n != q.count || q.since.IsZero() {
			q.count, q.since = n, now
		}
		still := now.Sub(q.since)
		q.mu.Unlock()
		if still >= quiet || !now.Before(deadline) {
			return
		}
		t := time.NewTimer(min(quiet-still, deadline.Sub(now)))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func (s *stack) modelName() string {
	if s.spaces.Tags == nil {
		return ""
	}
	return s.spaces.Tags.Info().Name
}

func (s *stack) close() error {
	s.kickMu.Lock()
	for _, t := range s.kicks {
		t.Stop()
	}
	s.kickMu.Unlock()
	if s.cancel != nil {
		s.cancel()
		s.wg.Wait()
	}
	var errs []error
	if s.meta != nil {
		errs = append(errs, s.meta.Close())
	}
	if s.closeHost != nil {
		errs = append(errs, s.closeHost())
	}
	if s.index != nil {
		errs = append(errs, s.index.Close())
	}
	return errors.Join(errs...)
}

// markerDir is where the model-identity marker lives: beside a SQLite
// index, or in the state directory when the index is PostgreSQL.
// closesJournalSuffix names, after a SQLite index file's name, the journal
// of closes whose rows are not stored yet (meta.Options.CloseJournal).
const closesJournalSuffix = "-closes"

// closesJournal is the journal of deferred closes: beside a SQLite index
// (one per index file), or in the state directory of a daemon sharing a
// PostgreSQL index (one per daemon).
func closesJournal(cfg Config) string {
	if cfg.IndexIsPostgres() {
		return filepath.Join(cfg.State, "closes.journal")
	}
	return cfg.Index + closesJournalSuffix
}

func markerDir(cfg Config) string {
	if cfg.IndexIsPostgres() {
		return cfg.State
	}
	return filepath.Dir(cfg.Index)
}

// openIndex opens the configured index store: a SQLite file (the embedded
// default) or PostgreSQL, shared by several daemons. It returns what was
// repaired at open.
func openIndex(ctx context.Context, cfg Config, log *slog.Logger) (index.Store, []string, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.IndexIsPostgres() {
		ix, err := postgres.Open(ctx, cfg.Index, postgres.Options{Logger: log})
		if err != nil {
			return nil, nil, fmt.Errorf("daemon: opening the index: %w", err)
		}
		if err := os.MkdirAll(cfg.State, 0o755); err != nil {
			ix.Close()
			return nil, nil, fmt.Errorf("daemon: creating the state directory: %w", err)
		}
		return ix, ix.Repaired, nil
	}
	ix, err := sqlite.Open(ctx, cfg.Index)
	if err != nil {
		return nil, nil, fmt.Errorf("daemon: opening the index %s: %w", cfg.Index, err)
	}
	return ix, ix.Repaired, nil
}

// openBacking opens the tree that holds the files: the backing directory
// through hostfs, or an S3-compatible bucket through objfs.
func openBacking(ctx context.Context, cfg Config) (semfs.FS, func() error, error) {
	if cfg.Store != "" {
		oc := objfs.Config{Endpoint: cfg.S3.Endpoint, AccessKey: cfg.S3.AccessKey, SecretKey: cfg.S3.SecretKey,
			Secure: cfg.S3.Secure, CreateBucket: true, RefreshInterval: 2 * time.Second}
		if err := oc.ParseURL(cfg.Store); err != nil {
			return nil, nil, fmt.Errorf("daemon: %w", err)
		}
		f, err := objfs.Open(ctx, oc)
		if err != nil {
			return nil, nil, fmt.Errorf("daemon: opening the object store: %w", err)
		}
		return f, f.Close, nil
	}
	if err := os.MkdirAll(cfg.Data, 0o755); err != nil {
		return nil, nil, fmt.Errorf("daemon: creating the backing directory: %w", err)
	}
	h, err := hostfs.Open(cfg.Data, hostfs.ReadWrite)
	if err != nil {
		return nil, nil, fmt.Errorf("daemon: opening the backing directory %s: %w", cfg.Data, err)
	}
	return h, h.Close, nil
}
