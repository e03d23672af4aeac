package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs/daemon"
)

func init() { Register("restore", newRestore) }

func newRestore(app *App) *cobra.Command {
	var sock string
	cmd := &cobra.Command{
		Use:   "restore IN",
		Short: "Replace the tree's files and index with a snapshot archive",
		Long: `restore verifies the archive completely (format version and every SHA-256
checksum) in a fresh directory beside --root, and only then swaps it in for
--root and --index. A bad archive changes nothing. The daemon must be
stopped: restore refuses while one answers on the control socket.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if c, ok := runningDaemon(ctx, sock); ok {
				c.Close()
				return fmt.Errorf("a semfs daemon is serving at %s; stop it before restoring (restore replaces its backing directory and index)", sock)
			}
			index, err := app.indexPath()
			if err != nil {
				return err
			}
			man, err := daemon.RestoreSnapshot(ctx, args[0], app.Root, index)
			if err != nil {
				return err
			}
			if app.JSON {
				return app.PrintJSON(map[string]any{"root": app.Root, "index": index, "entries": len(man.Entries), "created": man.Created})
			}
			fmt.Fprintf(app.Stdout, "restored %d entries (snapshot of %s) into %s and %s\n", len(man.Entries), man.Created.Format("2006-01-02 15:04:05Z"), app.Root, index)
			return nil
		},
	}
	cmd.Flags().StringVar(&sock, "socket", defaultSocket(), "control socket a running daemon would answer on (env SEMFS_SOCKET)")
	return cmd
}
