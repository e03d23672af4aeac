package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/daemon"
	"github.com/semfs/semfs/wire"
)

func init() { Register("doctor", newDoctor) }

func newDoctor(app *App) *cobra.Command {
	var (
		sock  string
		wait  bool
		limit time.Duration
	)
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the models, the index, pending embeddings and the mount",
		Long: `doctor reports on the embedding models, the model-identity marker, pending
embeddings, index consistency and the mount. It asks the running daemon when
one answers on the control socket, and otherwise checks --index directly.
With --wait it first waits (up to --timeout) for the daemon to be ready, for
supervisors and scripts. The exit code is 0 when every check passes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var d wire.Doctor
			if wait {
				c := client.New(sock)
				defer c.Close()
				wctx, cancel := context.WithTimeout(ctx, limit)
				err := c.WaitReady(wctx)
				cancel()
				if err != nil {
					return UnavailableError{err}
				}
			}
			if c, ok := runningDaemon(ctx, sock); ok {
				defer c.Close()
				if err := registerToken(ctx, c); err != nil {
					return unavailable(err)
				}
				var err error
				if d, err = c.Doctor(ctx); err != nil {
					return unavailable(err)
				}
			} else {
				index, err := app.indexPath()
				if err != nil {
					return err
				}
				cfg := daemon.DefaultConfig()
				cfg.Index, cfg.Mode = absPath(index), daemon.ModeHeadless
				d = daemon.OfflineDoctor(ctx, cfg)
				d.Checks = append(d.Checks, wire.Check{Name: "daemon", OK: false, Detail: "no daemon answers at " + sock})
			}
			d.OK = len(d.Checks) > 0
			for _, c := range d.Checks {
				d.OK = d.OK && c.OK
			}
			if app.JSON {
				if err := app.PrintJSON(d); err != nil {
					return err
				}
			} else {
				for _, c := range d.Checks {
					mark := "ok  "
					if !c.OK {
						mark = "FAIL"
					}
					fmt.Fprintf(app.Stdout, "%s %-16s %s\n", mark, c.Name, c.Detail)
				}
			}
			if !d.OK {
				return errors.New("doctor found problems (see above)")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&sock, "socket", defaultSocket(), "control socket of the daemon (env SEMFS_SOCKET)")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the daemon is ready first")
	cmd.Flags().DurationVar(&limit, "timeout", 30*time.Second, "how long --wait waits")
	return cmd
}
