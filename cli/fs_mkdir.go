package cli

import (
	"github.com/spf13/cobra"

	"github.com/semfs/semfs"
)

func init() { Register("mkdir", newMkdir) }

func newMkdir(app *App) *cobra.Command {
	var parents bool
	cmd := &cobra.Command{
		Use:   "mkdir PATH...",
		Short: "Create directories in the tree",
		Long: `Create each directory PATH. Its parent must exist unless -p is given, which
creates missing parents and accepts an existing directory. Stops at the first
path that fails.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fsys, err := app.openRootFS(false)
			if err != nil {
				return err
			}
			for _, arg := range args {
				p, err := cleanArg("mkdir", arg)
				if err != nil {
					return err
				}
				if parents {
					err = semfs.MkdirAll(cmd.Context(), fsys, p, 0o755)
				} else {
					err = semfs.Mkdir(cmd.Context(), fsys, p, 0o755)
				}
				if err != nil {
					return explain(err)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&parents, "parents", "p", false, "create missing parent directories; an existing directory is not an error")
	return cmd
}
