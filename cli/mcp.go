package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/mcpserver"
)

func init() { Register("mcp", newMCP) }

func newMCP(app *App) *cobra.Command {
	var groups, appName string
	var readOnly bool
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the tree to an agent as MCP tools over stdio",
		Long: `Serve the tree at --root to one agent as Model Context Protocol tools over
standard input and output: read_file, write_file, edit_file, list, glob, grep,
find, stat, tag, query, search, related, remove, move and shell.

Configure it in an MCP client as a command, for example:
  {"command": "semfs", "args": ["mcp", "--root", "/srv/context", "--app", "my-agent"]}

--app names the agent: files it creates record it as created_by.
--groups g1,g2 limits what the agent sees to public files and files of those
groups; hidden files do not exist through any tool. --read-only advertises no
mutating tool.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			m, _, err := app.openIndexedTree(ctx)
			if err != nil {
				return err
			}
			p := semfs.Principal{ID: "mcp", App: appName}
			if appName != "" {
				p.ID = "app:" + appName
			}
			if groups != "" {
				p.Groups = strings.Split(groups, ",")
			} else {
				p.Admin = true // no --groups: the whole tree, as the CLI sees it
			}
			policy := access.Policy{Default: access.Write}
			if readOnly {
				policy.Default = access.Read
			}
			srv := mcpserver.New(access.New(m, policy), mcpserver.Options{Principal: p, ReadOnly: readOnly, Version: version()})
			return srv.Run(ctx)
		},
	}
	cmd.Flags().StringVar(&appName, "app", "", "name of the agent, recorded as created_by of the files it creates")
	cmd.Flags().StringVar(&groups, "groups", "", "comma-separated groups of the agent (default: sees every file)")
	cmd.Flags().BoolVar(&readOnly, "read-only", false, "serve no mutating tools and refuse every write")
	return cmd
}
