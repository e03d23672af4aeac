package cli

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs"
)

func init() { Register("ls", newLs) }

func newLs(app *App) *cobra.Command {
	var long, all, recursive bool
	cmd := &cobra.Command{
		Use:   "ls [PATH...]",
		Short: "List directories of the tree",
		Long: `List the entries of each directory PATH (default "/"), sorted by name. A
file PATH is listed as itself. Names starting with "." are left out unless -a
is given. With --json, prints an array of {path, name, type, size, mode,
modTime}. Stops at the first path that fails.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fsys, err := app.openRootFS(true)
			if err != nil {
				return err
			}
			if len(args) == 0 {
				args = []string{"/"}
			}
			l := lister{ctx: cmd.Context(), fsys: fsys, w: app.Stdout, long: long, all: all, recursive: recursive, json: app.JSON}
			for _, arg := range args {
				p, info, err := statArg(l.ctx, fsys, "ls", arg)
				if err != nil {
					return err
				}
				if !info.IsDir() {
					l.emit(p, p, info)
					continue
				}
				if err := l.dir(p, len(args) > 1 || recursive); err != nil {
					return err
				}
			}
			if app.JSON {
				if l.out == nil {
					l.out = []entryJSON{}
				}
				return app.PrintJSON(l.out)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&long, "long", "l", false, "show type and permissions, size and modification time")
	f.BoolVarP(&all, "all", "a", false, `include names starting with "."`)
	f.BoolVarP(&recursive, "recursive", "R", false, "list subdirectories recursively")
	return cmd
}

type lister struct {
	ctx                  context.Context
	fsys                 semfs.FS
	w                    io.Writer
	long, all, recursive bool
	json                 bool
	out                  []entryJSON
	printedBlock         bool
}

// emit prints one entry: p is its tree path, name what the listing shows.
func (l *lister) emit(p, name string, info fs.FileInfo) {
	if l.json {
		l.out = append(l.out, toEntry(p, info))
		return
	}
	if l.long {
		size := fmt.Sprint(info.Size())
		if info.IsDir() {
			size = "-"
		}
		fmt.Fprintf(l.w, "%s %10s %s %s\n", info.Mode().String(), size, info.ModTime().Format("2006-01-02 15:04"), name)
		return
	}
	fmt.Fprintln(l.w, name)
}

func (l *lister) dir(p string, header bool) error {
	ents, err := l.fsys.ReadDir(l.ctx, p)
	if err != nil {
		return explain(err)
	}
	if !l.json && header {
		if l.printedBlock {
			fmt.Fprintln(l.w)
		}
		fmt.Fprintf(l.w, "%s:\n", p)
	}
	l.printedBlock = true
	var subdirs []string
	for _, e := range ents {
		if !l.all && strings.HasPrefix(e.Name(), ".") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return explain(semfs.RewritePath(err, "ls", semfs.Join(p, e.Name())))
		}
		l.emit(semfs.Join(p, e.Name()), e.Name(), info)
		if e.IsDir() {
			subdirs = append(subdirs, semfs.Join(p, e.Name()))
		}
	}
	if l.recursive {
		for _, d := range subdirs {
			if err := l.dir(d, true); err != nil {
				return err
			}
		}
	}
	return nil
}
