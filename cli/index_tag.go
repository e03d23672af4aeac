package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs"
)

func init() { Register("tag", newTag) }

func newTag(app *App) *cobra.Command {
	var (
		task, summary, provenance string
		apps, links, kvs, groups  []string
		public                    bool
		limit                     int
	)
	cmd := &cobra.Command{
		Use:   "tag PATH",
		Short: "Set the tags of a file (replacing its previous tags)",
		Long: `Set the tags of the file PATH: its task, related apps, summary, links (absolute
tree paths), provenance, free key=value tags, and visibility (groups, public).
Tagging again replaces every previous tag; created_by never changes.

After tagging, prints the file's likely duplicates and close relatives
(save-time candidates), as 'semfs related' does.`,
		Example: `  semfs tag /notes/auth.md --task "fix auth bug" --app editor --app notes
  semfs tag /data/x.csv --kv source=crm --groups finance,ops --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := cleanArg("tag", args[0])
			if err != nil {
				return err
			}
			tags := semfs.Tags{Task: task, RelatedApps: apps, Summary: summary, Links: links, Provenance: provenance, Public: public}
			for _, g := range groups {
				for _, s := range strings.Split(g, ",") {
					if s = strings.TrimSpace(s); s != "" {
						tags.Groups = append(tags.Groups, s)
					}
				}
			}
			for _, kv := range kvs {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return Usagef("--kv %q: write key=value, e.g. --kv source=crm", kv)
				}
				if tags.Extra == nil {
					tags.Extra = map[string]string{}
				}
				tags.Extra[k] = v
			}
			m, _, err := app.openIndexedTree(cmd.Context())
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if err := m.SetTags(ctx, p, tags); err != nil {
				return explain(err)
			}
			md, err := m.Meta(ctx, p)
			if err != nil {
				return explain(err)
			}
			cands, err := m.Related(ctx, p, limit)
			if err != nil {
				return explain(err)
			}
			if cands == nil {
				cands = []semfs.Candidate{}
			}
			if app.JSON {
				return app.PrintJSON(struct {
					semfs.Meta
					Candidates []semfs.Candidate `json:"candidates"`
				}{md, cands})
			}
			fmt.Fprintf(app.Stdout, "tagged %s\n", p)
			printCandidates(app, cands)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&task, "task", "", "the task the file belongs to")
	f.StringArrayVar(&apps, "app", nil, "a related app (repeat for several)")
	f.StringVar(&summary, "summary", "", "a one-line summary of the file")
	f.StringArrayVar(&links, "link", nil, "an absolute tree path the file links to (repeat)")
	f.StringVar(&provenance, "provenance", "", "where the file came from")
	f.StringArrayVar(&kvs, "kv", nil, "a free key=value tag (repeat)")
	f.StringArrayVar(&groups, "groups", nil, "groups that may see the file (comma-separated or repeated)")
	f.BoolVar(&public, "public", false, "visible to everyone, whatever the groups")
	f.IntVar(&limit, "limit", 5, "most candidates to print")
	return cmd
}

func printCandidates(app *App, cands []semfs.Candidate) {
	if len(cands) == 0 {
		return
	}
	fmt.Fprintln(app.Stdout, "likely duplicates and relatives:")
	for _, c := range cands {
		fmt.Fprintf(app.Stdout, "  %.3f  %-7s  %s\n", c.Similarity, c.Via, c.Path)
	}
}
