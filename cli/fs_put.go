package cli

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs"
)

func init() { Register("put", newPut) }

func newPut(app *App) *cobra.Command {
	var from string
	cmd := &cobra.Command{
		Use:   "put PATH",
		Short: "Write a file into the tree",
		Long: `Write standard input (or the host file given by --from) to the file PATH,
creating missing parent directories. An existing file is replaced
atomically: readers see the old contents or the new, never a mix.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := cleanArg("put", args[0])
			if err != nil {
				return err
			}
			var data []byte
			if from != "" {
				data, err = os.ReadFile(from)
				if err != nil {
					// The message names the flag, not the host path.
					var pe *fs.PathError
					if errors.As(err, &pe) {
						err = pe.Err
					}
					return Usagef("cannot read the --from file: %v; check that it exists and is readable", err)
				}
			} else if app.Stdin != nil {
				data, err = io.ReadAll(app.Stdin)
				if err != nil {
					return Usagef("cannot read standard input: %v", err)
				}
			}
			fsys, err := app.openRootFS(false)
			if err != nil {
				return err
			}
			return explain(semfs.WriteFile(cmd.Context(), fsys, p, data, 0o644))
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "read the contents from this host file instead of standard input")
	return cmd
}
