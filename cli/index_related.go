package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs"
)

func init() { Register("related", newRelated) }

func newRelated(app *App) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "related PATH",
		Short: "List a file's likely duplicates and close relatives",
		Long: `List the files most like PATH (seed 001's save-time candidates): a vector pass
over chunk embeddings (similarity at or above the model's duplicate threshold)
and a lexical pass over the best BM25 matches of the file's own words (similarity
is the share of its words the candidate holds), one line per file, best first.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := cleanArg("related", args[0])
			if err != nil {
				return err
			}
			m, _, err := app.openIndexedTree(cmd.Context())
			if err != nil {
				return err
			}
			cands, err := m.Related(cmd.Context(), p, limit)
			if err != nil {
				return explain(err)
			}
			if cands == nil {
				cands = []semfs.Candidate{}
			}
			if app.JSON {
				return app.PrintJSON(cands)
			}
			if len(cands) == 0 {
				fmt.Fprintln(app.Stdout, "no likely duplicates or relatives")
			}
			printCandidates(app, cands)
			return nil
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 10, "most candidates to print")
	return cmd
}
