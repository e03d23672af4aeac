package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs"
)

func init() { Register("search", newSearch) }

func newSearch(app *App) *cobra.Command {
	var (
		limit  int
		cursor string
	)
	cmd := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Search file contents by keyword and meaning",
		Long: `Search the contents of the tree: BM25 over chunks, the similarity of QUERY with
chunk embeddings, and the tag query are fused into one ranking. QUERY may hold
filters: tag:KEY=VALUE, task:NAME, created_by:APP, path:/DIR, type:EXT (quote a
value with spaces: task:"fix auth"). Each hit shows a snippet with line numbers
and per-signal scores. When more hits remain, the last line (or "next" in
--json) is the cursor of the next page: pass it back with --cursor.`,
		Example: `  semfs search how do I parse a url
  semfs search retry backoff type:go path:/src --limit 5
  semfs search retry --cursor CURSOR --json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, _, err := app.openIndexedTree(cmd.Context())
			if err != nil {
				return err
			}
			req := semfs.SearchRequest{Query: strings.Join(args, " "), Limit: limit, Cursor: cursor}
			hits := []semfs.SearchHit{}
			next, err := m.Search(cmd.Context(), req, func(h semfs.SearchHit) error {
				if app.JSON {
					hits = append(hits, h)
					return nil
				}
				fmt.Fprintf(app.Stdout, "%s:%d-%d  %.3f  %s\n", h.Path, h.Line, h.EndLine, h.Score, scoreLine(h.Scores))
				for i, l := range strings.Split(h.Snippet, "\n") {
					fmt.Fprintf(app.Stdout, "  %6d  %s\n", h.Line+i, l)
				}
				return nil
			})
			if err != nil {
				return explain(err)
			}
			if app.JSON {
				return app.PrintJSON(struct {
					Hits []semfs.SearchHit `json:"hits"`
					Next string            `json:"next,omitempty"`
				}{hits, next})
			}
			if next != "" {
				fmt.Fprintf(app.Stdout, "more: --cursor %s\n", next)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 10, "hits per page")
	cmd.Flags().StringVar(&cursor, "cursor", "", "continue after the page that printed this cursor")
	return cmd
}

func scoreLine(s map[string]float64) string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%.3f", k, s[k])
	}
	return strings.Join(parts, " ")
}
