package cli

import (
	"github.com/spf13/cobra"

	"github.com/semfs/semfs"
)

func init() { Register("mv", newMv) }

func newMv(app *App) *cobra.Command {
	var noTargetDir bool
	cmd := &cobra.Command{
		Use:   "mv SRC DST",
		Short: "Move or rename a file or directory in the tree",
		Long: `Move SRC to DST. If DST is an existing directory, SRC moves into it (as
DST/name-of-SRC) unless -T is given. A file replaces a file; a directory
replaces only an empty directory.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := cleanArg("mv", args[0])
			if err != nil {
				return err
			}
			dst, err := cleanArg("mv", args[1])
			if err != nil {
				return err
			}
			fsys, err := app.openRootFS(false)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if !noTargetDir && src != "/" {
				if info, err := fsys.Stat(ctx, dst); err == nil && info.IsDir() && dst != src {
					dst = semfs.Join(dst, semfs.BaseName(src))
				}
			}
			return explain(semfs.Rename(ctx, fsys, src, dst))
		},
	}
	cmd.Flags().BoolVarP(&noTargetDir, "no-target-directory", "T", false, "treat DST as the new name even if it is a directory")
	return cmd
}
