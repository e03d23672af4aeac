package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs/meta"
)

func init() { Register("reindex", newReindex) }

func newReindex(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reindex",
		Short: "Rebuild the index's derived data from the files and their metadata",
		Long: `Drop every chunk, full-text and trigram entry and rebuild them from the bytes of
the tree at --root and the metadata of record (tags are kept). Vectors of chunks
whose text did not change are kept; missing vectors are then embedded. Use it
after a crash in the middle of indexing or when 'semfs' reports a damaged index.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, _, err := app.openIndexedTree(cmd.Context())
			if err != nil {
				return err
			}
			return runIndex(cmd.Context(), app, m, true)
		},
	}
	return cmd
}

// indexReport is what index and reindex print.
type indexReport struct {
	meta.ReconcileReport
	Embedded int     `json:"embedded"`
	Seconds  float64 `json:"seconds"`
}

// runIndex reconciles (or reindexes) the tree, then embeds what is missing.
func runIndex(ctx context.Context, app *App, m *meta.FS, full bool) error {
	start := time.Now()
	var b *bar
	opts := meta.ReconcileOptions{Progress: func(done, total int) {
		if b == nil {
			b = app.progress(total, "indexing")
		}
		b.set(done)
	}}
	var rep meta.ReconcileReport
	var err error
	if full {
		rep, err = m.Reindex(ctx, opts)
	} else {
		rep, err = m.Reconcile(ctx, opts)
	}
	if b != nil {
		b.done(rep.Files)
	}
	if err != nil {
		return explain(err)
	}
	n, err := app.drainEmbeddings(ctx, m, true)
	if err != nil {
		return err
	}
	out := indexReport{ReconcileReport: rep, Embedded: n, Seconds: time.Since(start).Seconds()}
	if app.JSON {
		return app.PrintJSON(out)
	}
	fmt.Fprintf(app.Stdout, "%d files: %d added, %d updated, %d touched, %d unchanged, %d removed; %.1f MB read; %d vectors embedded in %.2fs\n",
		rep.Files, rep.Added, rep.Updated, rep.Touched, rep.Unchanged, rep.Removed, float64(rep.Bytes)/1e6, n, out.Seconds)
	return nil
}
