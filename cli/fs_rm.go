package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs"
)

func init() { Register("rm", newRm) }

func newRm(app *App) *cobra.Command {
	var recursive, force bool
	cmd := &cobra.Command{
		Use:   "rm PATH...",
		Short: "Remove files and directories from the tree",
		Long: `Remove each PATH. A directory must be empty unless -r is given, which removes
it with everything below it. A missing PATH is an error unless -f is given.
Stops at the first path that fails.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fsys, err := app.openRootFS(false)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			for _, arg := range args {
				p, info, err := statArg(ctx, fsys, "rm", arg)
				if err != nil {
					if force && errors.Is(err, semfs.ErrNotExist) {
						continue
					}
					return err
				}
				if p == "/" {
					return explain(semfs.PathErr("rm", p, semfs.ErrInvalid, "refusing to remove the root of the tree; remove what is in it by name"))
				}
				switch {
				case recursive:
					err = semfs.RemoveAll(ctx, fsys, p)
				case info.IsDir():
					err = semfs.Remove(ctx, fsys, p)
					if errors.Is(err, semfs.ErrNotEmpty) {
						err = hinted{err, "the directory is not empty: use 'semfs rm -r' to remove it with everything in it"}
					}
				default:
					err = semfs.Remove(ctx, fsys, p)
				}
				if err != nil {
					return explain(err)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "remove directories and everything below them")
	cmd.Flags().BoolVarP(&force, "force", "f", false, "ignore paths that do not exist")
	return cmd
}
