package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/embedding/models"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/meta"
)

// stack is the tree the daemon serves and what keeps it: the host backing
// directory, the index, the models and the drain workers.
type stack struct {
	fsys   semfs.FS
	host   *hostfs.FS
	index  *sqlite.Index
	meta   *meta.FS
	spaces embedding.Spaces
	marker embedding.Report

	workers []*embedding.Worker
	cancel  context.CancelFunc
	wg      sync.WaitGroup
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
	if s.index, err = sqlite.Open(ctx, cfg.Index); err != nil {
		return nil, fmt.Errorf("daemon: opening the index %s: %w", cfg.Index, err)
	}
	if len(s.index.Repaired) > 0 {
		log.Warn("index derived data was inconsistent and was rebuilt; files will be re-indexed", "problems", s.index.Repaired)
	}
	s.marker, err = embedding.EnsureModel(ctx, filepath.Dir(cfg.Index), s.index, map[string]embedding.Embedder{
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
	if err := os.MkdirAll(cfg.Data, 0o755); err != nil {
		return nil, fmt.Errorf("daemon: creating the backing directory: %w", err)
	}
	if s.host, err = hostfs.Open(cfg.Data, hostfs.ReadWrite); err != nil {
		return nil, fmt.Errorf("daemon: opening the backing directory %s: %w", cfg.Data, err)
	}
	if s.fsys, err = newTree(ctx, s, log); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	for _, sp := range []struct {
		name string
		e    embedding.Embedder
	}{{embedding.SpaceTags, s.spaces.Tags}, {embedding.SpaceContent, s.spaces.Content}} {
		w := &embedding.Worker{Store: s.index, Space: sp.name, Embedder: sp.e, Logger: log}
		s.workers = append(s.workers, w)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			w.Run(wctx)
		}()
	}
	return s, nil
}

func (s *stack) modelName() string {
	if s.spaces.Tags == nil {
		return ""
	}
	return s.spaces.Tags.Info().Name
}

func (s *stack) close() error {
	if s.cancel != nil {
		s.cancel()
		s.wg.Wait()
	}
	var errs []error
	if s.meta != nil {
		errs = append(errs, s.meta.Close())
	}
	if s.host != nil {
		errs = append(errs, s.host.Close())
	}
	if s.index != nil {
		errs = append(errs, s.index.Close())
	}
	return errors.Join(errs...)
}
