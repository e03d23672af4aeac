package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs/daemon"
)

func init() { Register("snapshot", newSnapshot) }

func newSnapshot(app *App) *cobra.Command {
	var sock string
	cmd := &cobra.Command{
		Use:   "snapshot OUT",
		Short: "Write one archive of the tree's files, metadata and index",
		Long: `snapshot writes one archive (gzip-compressed tar with a manifest of SHA-256
checksums) holding the backing directory's files and a consistent copy of the
index. When a daemon answers on the control socket it writes the archive into
a file this command creates beside OUT and passes to it; the daemon answers
only an admin token's principal (SEMFS_TOKEN_FILE or SEMFS_TOKEN) or a caller
of uid 0 or the daemon's uid, and OUT may not be inside the mount. Otherwise
the archive is made directly from --root and --index. The archive appears
atomically.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := absPath(args[0])
			ctx := cmd.Context()
			if c, ok := runningDaemon(ctx, sock); ok {
				defer c.Close()
				if err := registerToken(ctx, c); err != nil {
					return unavailable(err)
				}
				res, err := c.Snapshot(ctx, out)
				if err != nil {
					return unavailable(err)
				}
				return reportSnapshot(app, res.Out, res.Files, res.Bytes, "daemon at "+sock)
			}
			index, err := app.indexPath()
			if err != nil {
				return err
			}
			res, err := daemon.WriteSnapshot(ctx, out, app.Root, index)
			if err != nil {
				return err
			}
			return reportSnapshot(app, res.Out, res.Files, res.Bytes, "directly from "+app.Root)
		},
	}
	cmd.Flags().StringVar(&sock, "socket", defaultSocket(), "control socket of a running daemon (env SEMFS_SOCKET)")
	return cmd
}

func reportSnapshot(app *App, out string, files int, bytes int64, via string) error {
	if app.JSON {
		return app.PrintJSON(map[string]any{"out": out, "files": files, "bytes": bytes})
	}
	fmt.Fprintf(app.Stdout, "wrote %s: %d files, %d bytes (%s)\n", out, files, bytes, via)
	return nil
}
