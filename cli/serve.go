package cli

import (
	"errors"
	"flag"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs/daemon"
)

func init() {
	Register("serve", func(app *App) *cobra.Command {
		return &cobra.Command{
			Use:   "serve [flags]",
			Short: "Run the semfs daemon: FUSE mount, control socket, index",
			Long: `serve runs the semfs daemon. It mounts the tree (default /context) over a
backing directory, keeps the index current, and serves the control socket
(register, tag, query, search, ...). Settings come from flags or the
environment: SEMFS_MOUNT, SEMFS_DATA, SEMFS_INDEX, SEMFS_SOCKET,
SEMFS_SOCKET_GROUP, SEMFS_MODE (mount|headless|off), SEMFS_READY,
SEMFS_DROP_CAPS, SEMFS_ALLOW_OTHER, SEMFS_PASSTHROUGH, SEMFS_TOKENS (the
tokens file: principals, groups and path rules for HTTP bearer tokens and for
processes that register with a token). Run 'semfs serve -h' for the flags and
see docs/daemon.md.`,
			DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, args []string) error {
				cfg, err := daemon.ParseConfig(args, nil, app.Stderr)
				if errors.Is(err, flag.ErrHelp) {
					return nil
				}
				if err != nil {
					return UsageError{err}
				}
				m := &daemon.Main{Config: cfg, Logger: slog.New(slog.NewTextHandler(app.Stderr, nil))}
				return m.Run(cmd.Context())
			},
		}
	})
}
