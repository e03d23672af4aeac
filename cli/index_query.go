package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs"
)

func init() { Register("query", newQuery) }

func newQuery(app *App) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "query TEXT...",
		Short: "Find files by their tags and paths (seed 000's tag query)",
		Long: `Find files by tags and paths, never contents: one point per word of TEXT found
(case-insensitive) in a file's path, created_by, task or related apps, plus the
similarity of TEXT with the file's tag text. Files with a keyword hit or enough
similarity are printed best first. Use 'semfs search' to search contents.`,
		Example: `  semfs query auth bug --limit 5
  semfs query "notes about login" --json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, _, err := app.openIndexedTree(cmd.Context())
			if err != nil {
				return err
			}
			res, err := m.Query(cmd.Context(), strings.Join(args, " "), limit)
			if err != nil {
				return explain(err)
			}
			if res == nil {
				res = []semfs.QueryResult{}
			}
			if app.JSON {
				return app.PrintJSON(res)
			}
			for _, r := range res {
				fmt.Fprintf(app.Stdout, "%.3f  %s", r.Score, r.Path)
				if r.Task != "" {
					fmt.Fprintf(app.Stdout, "  task=%q", r.Task)
				}
				if r.CreatedBy != "" {
					fmt.Fprintf(app.Stdout, "  by=%s", r.CreatedBy)
				}
				if len(r.RelatedApps) > 0 {
					fmt.Fprintf(app.Stdout, "  apps=%s", strings.Join(r.RelatedApps, ","))
				}
				fmt.Fprintln(app.Stdout)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "most results to print (0: all matches)")
	return cmd
}
