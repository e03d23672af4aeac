package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func init() { Register("stat", newStat) }

func newStat(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "stat PATH...",
		Short: "Describe files and directories of the tree",
		Long: `Print the type, size, permissions and modification time of each PATH. With
--json, prints an array with one {path, name, type, size, mode, modTime} per
PATH. Stops at the first path that fails.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fsys, err := app.openRootFS(true)
			if err != nil {
				return err
			}
			out := make([]entryJSON, 0, len(args))
			for _, arg := range args {
				p, info, err := statArg(cmd.Context(), fsys, "stat", arg)
				if err != nil {
					return err
				}
				out = append(out, toEntry(p, info))
			}
			if app.JSON {
				return app.PrintJSON(out)
			}
			for i, e := range out {
				if i > 0 {
					fmt.Fprintln(app.Stdout)
				}
				fmt.Fprintf(app.Stdout, "    Path: %s\n    Type: %s\n    Size: %d\n    Mode: %s\nModified: %s\n",
					e.Path, e.Type, e.Size, e.Mode, e.ModTime.Format("2006-01-02 15:04:05.000000000 -0700"))
			}
			return nil
		},
	}
}
