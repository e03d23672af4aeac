package daemon

import (
	"context"
	"log/slog"

	"github.com/semfs/semfs"
)

// newTree builds the served tree over the stack's host directory and index.
func newTree(ctx context.Context, s *stack, log *slog.Logger) (semfs.FS, error) {
	// TODO: the metadata layer (meta.New) over s.host and s.index once it lands.
	log.Warn("metadata layer not available in this build: serving the backing directory without tags")
	return s.host, nil
}
