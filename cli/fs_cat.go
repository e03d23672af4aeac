package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs"
)

func init() { Register("cat", newCat) }

func newCat(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "cat PATH...",
		Short: "Print files of the tree",
		Long:  `Write the contents of each file PATH to standard output, in order. Stops at the first path that fails.`,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fsys, err := app.openRootFS(true)
			if err != nil {
				return err
			}
			for _, arg := range args {
				p, err := cleanArg("cat", arg)
				if err != nil {
					return err
				}
				f, err := fsys.Open(cmd.Context(), p)
				if err != nil {
					return explain(err)
				}
				_, err = io.Copy(app.Stdout, f)
				f.Close()
				if err != nil {
					return explain(semfs.RewritePath(err, "cat", p))
				}
			}
			return nil
		},
	}
}
