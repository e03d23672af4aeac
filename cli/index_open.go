package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/embedding/models"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/meta"
)

// indexPath is where the tree's index lives: --index, or ROOT/.semfs/index.db.
func (a *App) indexPath() (string, error) {
	if strings.HasPrefix(a.Index, "postgres://") || strings.HasPrefix(a.Index, "postgresql://") {
		return "", Usagef("--index %s: the PostgreSQL store is not built yet; use a SQLite file path", a.Index)
	}
	if a.Index != "" {
		return a.Index, nil
	}
	return filepath.Join(a.Root, ".semfs", "index.db"), nil
}

func (a *App) logger() *slog.Logger {
	var w io.Writer = io.Discard
	if a.Verbose {
		w = a.Stderr
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// spaces returns the embedding models of the tree (the compiled-in default).
func (a *App) spaces() (embedding.Spaces, error) {
	s, err := models.Default()
	if err != nil {
		return s, fmt.Errorf("loading the embedding model: %w", err)
	}
	return s, nil
}

// openIndexedTree opens the tree at --root (hostfs, read-write) under the
// metadata layer, with the index at --index. Every index command goes
// through here. The returned function closes the layer, the index and the
// host tree; it is also registered with OnClose (closing twice is safe).
func (a *App) openIndexedTree(ctx context.Context) (*meta.FS, func() error, error) {
	host, err := hostfs.Open(a.Root, hostfs.ReadWrite)
	if err != nil {
		return nil, nil, hinted{err, "check --root (or SEMFS_DATA): it must name an existing host directory"}
	}
	dbPath, err := a.indexPath()
	if err != nil {
		host.Close()
		return nil, nil, err
	}
	if dir := filepath.Dir(dbPath); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			host.Close()
			return nil, nil, UnavailableError{fmt.Errorf("creating the index directory: %w", err)}
		}
	}
	ix, err := sqlite.Open(ctx, dbPath)
	if err != nil {
		host.Close()
		return nil, nil, UnavailableError{fmt.Errorf("%w\n  check --index (or SEMFS_INDEX); run 'semfs reindex' if the index is damaged", err)}
	}
	log := a.logger()
	if len(ix.Repaired) > 0 {
		log.Warn("index: derived data was inconsistent and is rebuilt from the files", "problems", ix.Repaired)
	}
	spaces, err := a.spaces()
	if err != nil {
		ix.Close()
		host.Close()
		return nil, nil, err
	}
	rep, err := embedding.EnsureModel(ctx, filepath.Dir(dbPath), ix, map[string]embedding.Embedder{
		embedding.SpaceTags: spaces.Tags, embedding.SpaceContent: spaces.Content})
	if err != nil {
		ix.Close()
		host.Close()
		return nil, nil, err
	}
	rep.Log(log)
	m, err := meta.New(host, ix, meta.Options{Spaces: spaces, Logger: log})
	if err != nil {
		ix.Close()
		host.Close()
		return nil, nil, err
	}
	closed := false
	closeAll := func() error {
		if closed {
			return nil
		}
		closed = true
		m.Close()
		err := ix.Close()
		if herr := host.Close(); err == nil {
			err = herr
		}
		return err
	}
	a.OnClose(closeAll)
	return m, closeAll, nil
}

// drainEmbeddings fills every missing vector of both spaces now (the CLI has
// no background worker), reporting progress when show is set.
func (a *App) drainEmbeddings(ctx context.Context, m *meta.FS, show bool) (int, error) {
	spaces, err := a.spaces()
	if err != nil {
		return 0, err
	}
	total := 0
	for _, s := range []struct {
		name string
		e    embedding.Embedder
	}{{embedding.SpaceTags, spaces.Tags}, {embedding.SpaceContent, spaces.Content}} {
		if s.e == nil {
			continue
		}
		n, err := m.Store().CountNeedingEmbedding(ctx, s.name)
		if err != nil || n == 0 {
			if err != nil {
				return total, err
			}
			continue
		}
		bar := a.progress(n, "embedding "+s.name)
		w := &embedding.Worker{Store: m.Store(), Space: s.name, Embedder: s.e, Batch: 256, Logger: a.logger()}
		st, err := w.Drain(ctx)
		bar.done(n)
		total += st.Embedded
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
