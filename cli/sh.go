package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"mvdan.cc/sh/v3/syntax"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/shell"
)

func init() { Register("sh", newSh) }

// ShellExit is the error of a script that exited with a non-zero status;
// ExitStatus is the status the process should exit with.
type ShellExit struct{ Code int }

func (e ShellExit) Error() string   { return fmt.Sprintf("script exited with status %d", e.Code) }
func (e ShellExit) ExitStatus() int { return e.Code }

func newSh(app *App) *cobra.Command {
	var script, groups, dir, site string
	var readOnly, indexed bool
	var limits shell.Limits
	cmd := &cobra.Command{
		Use:   "sh [-c SCRIPT | SCRIPT-FILE]",
		Short: "Run a virtual shell over the tree (ls, cat, grep, find, ... as Go builtins)",
		Long: `Run bash-syntax scripts over the tree at --root: pipes, redirections, globs
(including **), cd, variables, loops, $(...), heredocs. Commands are Go
builtins (ls cat grep find head tail wc sort uniq cut tr xargs tree stat du
mkdir echo printf basename dirname test, plus search, query and tag); no host
program is ever started and no host path is reachable.

With -c, runs SCRIPT. With a file argument, runs the script in that host
file. Otherwise, if standard input is a terminal, starts an interactive
session with line editing and history; else reads the script from standard
input.

--groups g1,g2 opens the session as a principal in those groups: files whose
visibility groups it is not in do not exist for it. Without --groups the
session sees the whole tree. When the tree has an index (ROOT/.semfs/index.db,
or --index), search, query and tag use it and grep -r asks it for candidate
files; --indexed requires it.

The exit status is the script's.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if script != "" && len(args) > 0 {
				return Usagef("give either -c SCRIPT or a script file, not both")
			}
			var fsys semfs.FS
			var err error
			var siteTree *shell.Tree
			if site != "" {
				// A docs site: read-only, and the session is a principal
				// in --groups (none: public pages only), as seed 003's
				// sessions are.
				readOnly = true
				if fsys, siteTree, err = app.openSiteTree(ctx, site); err != nil {
					return err
				}
			} else if fsys, err = app.openShellTree(ctx, readOnly, indexed); err != nil {
				return err
			}
			start, err := semfs.Clean("sh", dir)
			if err != nil {
				return UsageError{err}
			}
			if info, err := semfs.Stat(ctx, fsys, start); err != nil || !info.IsDir() {
				return Usagef("--dir %s: not a directory of the tree", dir)
			}
			opts := shell.Options{ReadOnly: readOnly, Limits: limits, Dir: start, Principal: semfs.Principal{ID: "sh", Admin: true}}
			if siteTree != nil {
				opts.Principal = semfs.Principal{ID: "sh", Groups: splitGroups(groups)}
				opts.View = siteTree.View(opts.Principal)
			} else if groups != "" {
				var gs []string
				for _, g := range strings.Split(groups, ",") {
					if g = strings.TrimSpace(g); g != "" {
						gs = append(gs, g)
					}
				}
				opts.Principal = semfs.Principal{ID: "sh", Groups: gs}
				tree, err := shell.NewTree(semfs.WithPrincipal(ctx, semfs.Principal{ID: "sh-tree", Admin: true}), fsys)
				if err != nil {
					return err
				}
				opts.View = tree.View(opts.Principal)
			}
			sess := shell.New(fsys, opts)
			switch {
			case script != "":
				return shExit(sess.Run(ctx, script, app.Stdin, app.Stdout, app.Stderr))
			case len(args) == 1:
				data, err := os.ReadFile(args[0])
				if err != nil {
					return Usagef("cannot read the script file: %v", err)
				}
				return shExit(sess.Run(ctx, string(data), app.Stdin, app.Stdout, app.Stderr))
			}
			if f, ok := app.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				return interactive(ctx, sess, f, app.Stdout, app.Stderr)
			}
			data, err := io.ReadAll(app.Stdin)
			if err != nil {
				return err
			}
			return shExit(sess.Run(ctx, string(data), nil, app.Stdout, app.Stderr))
		},
	}
	f := cmd.Flags()
	f.StringVar(&site, "site", "", "open a read-only docs site (see 'semfs docs') instead of the tree at --root")
	f.StringVarP(&script, "command", "c", "", "run SCRIPT")
	f.StringVar(&dir, "dir", "/", "the session's starting directory in the tree")
	f.StringVar(&groups, "groups", "", "comma-separated groups of the session's principal; hidden files do not exist for it")
	f.BoolVar(&readOnly, "read-only", false, "refuse every write (redirections, mkdir, tag)")
	f.BoolVar(&indexed, "indexed", false, "require the tree's index (search, query, tag, indexed grep)")
	f.DurationVar(&limits.Timeout, "timeout", 0, "stop a script after this long (default 1m; negative: no limit)")
	f.Int64Var(&limits.MaxOutput, "max-output", 0, "stop a script after it printed this many bytes (default 64 MiB; negative: no limit)")
	f.Int64Var(&limits.MaxLoopIterations, "max-loop-iterations", 0, "stop a script after this many loop iterations (default 1,000,000; negative: no limit)")
	return cmd
}

// openShellTree opens the tree under the metadata layer when it has an
// index (or --indexed asks for one), and the plain host tree otherwise.
func (a *App) openShellTree(ctx context.Context, readOnly, indexed bool) (semfs.FS, error) {
	if !indexed {
		if p, err := a.indexPath(); err != nil || !fileExists(p) {
			return a.openRootFS(readOnly)
		}
	}
	m, _, err := a.openIndexedTree(ctx)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// siteTreeBlob names the persisted shell path tree of a docs site.
const siteTreeBlob = "shell-tree"

// openSiteTree opens a docs site and its path tree: loaded from the store
// when a session persisted it before, else built once and persisted, so a
// session opens without walking the site.
func (a *App) openSiteTree(ctx context.Context, site string) (semfs.FS, *shell.Tree, error) {
	store, err := a.openDocsStore(ctx)
	if err != nil {
		return nil, nil, err
	}
	fsys, err := a.openSearchableSite(ctx, site)
	if err != nil {
		return nil, nil, err
	}
	if data, ok, err := store.Blob(ctx, site, siteTreeBlob); err == nil && ok && len(data) > 0 {
		if t, err := shell.LoadTree(bytes.NewReader(data), fsys); err == nil {
			return fsys, t, nil
		}
	}
	t, err := shell.NewTree(semfs.WithPrincipal(ctx, semfs.Principal{ID: "sh-tree", Admin: true}), fsys)
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	if err := t.Encode(&buf); err == nil {
		// Best effort: a session works without the persisted tree.
		_ = store.PutBlob(ctx, site, siteTreeBlob, buf.Bytes())
	}
	return fsys, t, nil
}

func splitGroups(s string) []string {
	var gs []string
	for _, g := range strings.Split(s, ",") {
		if g = strings.TrimSpace(g); g != "" {
			gs = append(gs, g)
		}
	}
	return gs
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func shExit(code int, err error) error {
	switch {
	case err != nil && code == shell.ExitLimit:
		return ShellExit{code} // the shell already explained it on stderr
	case err != nil && !errors.Is(err, context.Canceled):
		return err
	case code != 0:
		return ShellExit{code}
	}
	return nil
}

// interactive runs a read-eval loop on a terminal with line editing and
// history (golang.org/x/term). Incomplete input (an open quote, a loop
// without done) continues on the next line. While a command runs the
// terminal is back in its normal mode and Ctrl-C stops the command.
func interactive(ctx context.Context, sess *shell.Session, tty *os.File, stdout, stderr io.Writer) error {
	fd := int(tty.Fd())
	old, err := term.MakeRaw(fd)
	if err != nil {
		return err
	}
	defer func() { term.Restore(fd, old) }()
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{tty, stdout}, "")
	if w, h, err := term.GetSize(fd); err == nil && w > 0 && h > 0 {
		t.SetSize(w, h)
	}
	fmt.Fprintf(t, "semfs sh: builtins only, no host programs. Type 'help' for the commands, 'exit' or Ctrl-D to leave.\n")
	var pending strings.Builder
	last := 0
	for !sess.Exited() {
		if pending.Len() == 0 {
			t.SetPrompt(fmt.Sprintf("semfs:%s$ ", sess.Dir()))
		} else {
			t.SetPrompt("> ")
		}
		line, err := t.ReadLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		pending.WriteString(line)
		pending.WriteString("\n")
		src := pending.String()
		if _, perr := syntax.NewParser().Parse(strings.NewReader(src), ""); perr != nil && syntax.IsIncomplete(perr) {
			continue
		}
		pending.Reset()
		// Ctrl-C stops this command, not the session: the run's context
		// is detached from the command's (which main cancels on SIGINT).
		term.Restore(fd, old)
		rctx, stop := signal.NotifyContext(context.WithoutCancel(ctx), os.Interrupt)
		last, _ = sess.Run(rctx, src, nil, stdout, stderr)
		if rctx.Err() != nil {
			fmt.Fprintln(stderr)
		}
		stop()
		if old, err = term.MakeRaw(fd); err != nil {
			return err
		}
	}
	if last != 0 {
		return ShellExit{last}
	}
	return nil
}
