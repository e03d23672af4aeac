package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs"
)

func init() { Register("tree", newTree) }

// treeNode is how --json shows a tree.
type treeNode struct {
	Path     string      `json:"path"`
	Name     string      `json:"name"`
	Type     string      `json:"type"` // "file" or "dir"
	Size     int64       `json:"size"` // 0 for directories
	Children []*treeNode `json:"children,omitempty"`
}

func newTree(app *App) *cobra.Command {
	var all bool
	var depth int
	cmd := &cobra.Command{
		Use:   "tree [PATH]",
		Short: "Show a directory of the tree and everything below it",
		Long: `Draw PATH (default "/") and everything below it, then count directories and
files. Names starting with "." are left out unless -a is given. With --json,
prints nested {path, name, type, size, children}.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fsys, err := app.openRootFS(true)
			if err != nil {
				return err
			}
			arg := "/"
			if len(args) == 1 {
				arg = args[0]
			}
			p, info, err := statArg(cmd.Context(), fsys, "tree", arg)
			if err != nil {
				return err
			}
			root := &treeNode{Path: p, Name: semfs.BaseName(p), Type: "file", Size: info.Size()}
			if info.IsDir() {
				root.Type, root.Size = "dir", 0
				if err := buildTree(cmd.Context(), fsys, root, all, depth, 1); err != nil {
					return err
				}
			}
			if app.JSON {
				return app.PrintJSON(root)
			}
			var dirs, files int
			fmt.Fprintln(app.Stdout, p)
			drawTree(app.Stdout, root, "", &dirs, &files)
			fmt.Fprintf(app.Stdout, "\n%d %s, %d %s\n", dirs, plural(dirs, "directory", "directories"), files, plural(files, "file", "files"))
			return nil
		},
	}
	cmd.Flags().BoolVarP(&all, "all", "a", false, `include names starting with "."`)
	cmd.Flags().IntVarP(&depth, "level", "L", 0, "descend at most this many levels (0: no limit)")
	return cmd
}

func buildTree(ctx context.Context, fsys semfs.FS, n *treeNode, all bool, maxDepth, level int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ents, err := fsys.ReadDir(ctx, n.Path)
	if err != nil {
		return explain(err)
	}
	for _, e := range ents {
		if !all && strings.HasPrefix(e.Name(), ".") {
			continue
		}
		c := &treeNode{Path: semfs.Join(n.Path, e.Name()), Name: e.Name(), Type: "file"}
		if e.IsDir() {
			c.Type = "dir"
			if maxDepth == 0 || level < maxDepth {
				if err := buildTree(ctx, fsys, c, all, maxDepth, level+1); err != nil {
					return err
				}
			}
		} else if info, err := e.Info(); err == nil {
			c.Size = info.Size()
		}
		n.Children = append(n.Children, c)
	}
	return nil
}

func drawTree(w io.Writer, n *treeNode, prefix string, dirs, files *int) {
	for i, c := range n.Children {
		branch, next := "├── ", "│   "
		if i == len(n.Children)-1 {
			branch, next = "└── ", "    "
		}
		fmt.Fprintf(w, "%s%s%s\n", prefix, branch, c.Name)
		if c.Type == "dir" {
			*dirs++
			drawTree(w, c, prefix+next, dirs, files)
		} else {
			*files++
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
