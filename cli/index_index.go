package cli

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/spf13/cobra"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/meta"
)

func init() { Register("index", newIndex) }

func newIndex(app *App) *cobra.Command {
	var watch bool
	cmd := &cobra.Command{
		Use:   "index DIR",
		Short: "Index a host directory (incrementally), optionally keeping it fresh",
		Long: `Index the host directory DIR as a semfs tree (DIR becomes the tree's root; the
index goes to DIR/.semfs/index.db unless --index says otherwise). A re-run reads
only files whose size or modification time changed, re-analyses only those whose
bytes changed, and never re-embeds a chunk whose text is unchanged. With --watch,
it keeps running and re-indexes what changes, from filesystem notifications,
until interrupted.`,
		Example: `  semfs index ~/notes
  semfs index ./docs --watch`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			info, err := os.Stat(args[0])
			if err != nil || !info.IsDir() {
				return Usagef("index %s: not a directory; pass an existing host directory", args[0])
			}
			app.Root = args[0]
			m, _, err := app.openIndexedTree(cmd.Context())
			if err != nil {
				return err
			}
			if !watch {
				return runIndex(cmd.Context(), app, m, false)
			}
			// Watch before the first pass: a change made while it runs,
			// or right after it, is then seen; one made before the
			// watch is in the pass.
			w, err := newTreeWatcher(args[0])
			if err != nil {
				return err
			}
			defer w.Close()
			if err := runIndex(cmd.Context(), app, m, false); err != nil {
				return err
			}
			return w.run(cmd.Context(), app, m)
		},
	}
	cmd.Flags().BoolVar(&watch, "watch", false, "keep running and re-index changes")
	return cmd
}

// treeWatcher watches every directory of a host tree (but .semfs).
type treeWatcher struct {
	w         *fsnotify.Watcher
	dir, root string
}

func newTreeWatcher(dir string) (*treeWatcher, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, UnavailableError{fmt.Errorf("watching %s: %w", dir, err)}
	}
	tw := &treeWatcher{w: w, dir: dir, root: root}
	tw.addTree(root)
	return tw, nil
}

func (tw *treeWatcher) Close() error { return tw.w.Close() }

// addTree watches d and the directories below it.
func (tw *treeWatcher) addTree(d string) {
	filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return nil
		}
		if e.Name() == ".semfs" {
			return filepath.SkipDir
		}
		tw.w.Add(p)
		return nil
	})
}

// run re-indexes the directories where files change, debounced, until
// ctx ends.
func (tw *treeWatcher) run(ctx context.Context, app *App, m *meta.FS) error {
	w, root, addTree := tw.w, tw.root, tw.addTree
	fmt.Fprintf(app.Stderr, "watching %s (Ctrl-C to stop)\n", tw.dir)
	dirty := map[string]bool{}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-w.Errors:
			app.logger().Warn("watch error", "err", err)
		case ev := <-w.Events:
			rel, err := filepath.Rel(root, ev.Name)
			if err != nil || strings.HasPrefix(rel, "..") || strings.HasPrefix(rel, ".semfs") {
				continue
			}
			if ev.Op&fsnotify.Create != 0 {
				if info, err := os.Stat(ev.Name); err == nil && info.IsDir() {
					addTree(ev.Name)
				}
			}
			tree := "/" + filepath.ToSlash(filepath.Dir(rel))
			if tree == "/." {
				tree = "/"
			}
			dirty[tree] = true
			timer.Reset(300 * time.Millisecond)
		case <-timer.C:
			for d := range dirty {
				delete(dirty, d)
				if !semfs.ValidPath(d) {
					continue
				}
				rep, err := m.Reconcile(ctx, meta.ReconcileOptions{Root: d})
				if err != nil {
					app.logger().Warn("re-index failed", "dir", d, "err", err)
					continue
				}
				if rep.Added+rep.Updated+rep.Removed > 0 {
					fmt.Fprintf(app.Stderr, "%s: %d added, %d updated, %d removed\n", d, rep.Added, rep.Updated, rep.Removed)
				}
			}
			if _, err := app.drainEmbeddings(ctx, m, false); err != nil {
				app.logger().Warn("embedding failed", "err", err)
			}
		}
	}
}
