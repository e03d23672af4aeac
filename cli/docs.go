package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/docfs"
	"github.com/semfs/semfs/docfs/sqlstore"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/meta"
)

func init() { Register("docs", newDocs) }

func newDocs(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "docs",
		Short: "Read-only document sites: ingest Markdown/MDX, list sites",
		Long: `A docs site is a read-only tree of pages kept in the index database as
section chunks (seed 003's ChromaFs): sessions open it instantly, 'cat'
reassembles a page, every write fails with "read-only file system", and each
page's groups decide who may see it.

  semfs docs ingest ./docs --site mintlify
  semfs sh --site mintlify --groups billing -c 'grep -rn webhook .'

Visibility comes from a page's front matter (groups: [billing], public: true)
or from a .access.json file at the root of the ingested directory:
  [{"path": "internal/**", "groups": ["admin", "billing"]}]`,
	}
	cmd.AddCommand(newDocsIngest(app), newDocsSites(app))
	return cmd
}

// openDocsStore opens the docs tables, kept in the index database file.
func (a *App) openDocsStore(ctx context.Context) (*sqlstore.Store, error) {
	p, err := a.indexPath()
	if err != nil {
		return nil, err
	}
	s, err := sqlstore.Open(ctx, p)
	if err != nil {
		return nil, UnavailableError{fmt.Errorf("%w\n  check --index (or SEMFS_INDEX)", err)}
	}
	a.OnClose(s.Close)
	return s, nil
}

func newDocsIngest(app *App) *cobra.Command {
	var site, exts string
	var lazyOver int64
	cmd := &cobra.Command{
		Use:   "ingest DIR --site NAME",
		Short: "Store a directory of Markdown/MDX pages as a docs site (replacing it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if site == "" {
				return Usagef("--site NAME is required: the name sessions open with 'semfs sh --site NAME'")
			}
			src, err := hostfs.Open(args[0], hostfs.ReadOnly)
			if err != nil {
				return hinted{err, "DIR must name an existing directory of Markdown/MDX files"}
			}
			defer src.Close()
			store, err := app.openDocsStore(ctx)
			if err != nil {
				return err
			}
			opts := docfs.IngestOptions{LazyOver: lazyOver}
			if exts != "" {
				opts.Extensions = strings.Split(exts, ",")
			}
			if lazyOver > 0 {
				blobs, err := hostfs.Open(app.Root, hostfs.ReadWrite)
				if err != nil {
					return hinted{err, "--lazy-over keeps large pages under --root; check --root"}
				}
				defer blobs.Close()
				opts.Blobs = blobs
			}
			var bar *bar
			opts.Progress = func(done, total int) {
				if bar == nil {
					bar = app.progress(total, "ingesting "+site)
				}
				bar.set(done)
			}
			rep, err := docfs.Ingest(ctx, store, site, src, opts)
			if bar != nil {
				bar.done(rep.Pages)
			}
			if err != nil {
				return err
			}
			// (Replacing the site dropped its persisted shell tree too.)
			if err := app.indexSite(ctx, site); err != nil {
				return fmt.Errorf("site %s is stored, but indexing it for search failed: %w", site, err)
			}
			if app.JSON {
				return app.PrintJSON(rep)
			}
			fmt.Fprintf(app.Stdout, "site %s: %d pages, %d chunks, %d bytes", site, rep.Pages, rep.Chunks, rep.Bytes)
			if rep.Lazy > 0 {
				fmt.Fprintf(app.Stdout, ", %d lazy", rep.Lazy)
			}
			fmt.Fprintln(app.Stdout)
			return nil
		},
	}
	cmd.Flags().StringVar(&site, "site", "", "name of the site to create or replace")
	cmd.Flags().StringVar(&exts, "ext", "", "comma-separated extensions to ingest (default md,mdx,markdown,txt)")
	cmd.Flags().Int64Var(&lazyOver, "lazy-over", 0, "store pages larger than this many bytes as lazy pointers under --root (0: never)")
	return cmd
}

func newDocsSites(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "sites",
		Short: "List the docs sites in the index database",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := app.openDocsStore(cmd.Context())
			if err != nil {
				return err
			}
			sites, err := store.Sites(cmd.Context())
			if err != nil {
				return err
			}
			if app.JSON {
				if sites == nil {
					sites = []string{}
				}
				return app.PrintJSON(sites)
			}
			for _, s := range sites {
				fmt.Fprintln(app.Stdout, s)
			}
			return nil
		},
	}
}

// siteIndexDir is where a site's search index and model marker live: a
// directory of its own beside the tree's index, so that a model change
// re-embeds it like any index.
func (a *App) siteIndexDir(site string) (string, error) {
	p, err := a.indexPath()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(p), "docs-"+site), nil
}

// indexSite makes a stored site searchable: its pages are chunked, indexed
// and embedded into the site's own index, and each page's visibility and
// title become its tags there, so search results obey the same groups.
func (a *App) indexSite(ctx context.Context, site string) error {
	f, err := a.openDocsSite(ctx, site)
	if err != nil {
		return err
	}
	dir, err := a.siteIndexDir(site)
	if err != nil {
		return err
	}
	// A fresh index each time: the site was replaced whole.
	for _, name := range []string{"index.db", "index.db-wal", "index.db-shm"} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	m, closeAll, err := a.openSiteMeta(ctx, f, dir)
	if err != nil {
		return err
	}
	defer closeAll()
	admin := semfs.WithPrincipal(ctx, semfs.Principal{ID: "docs-ingest", Admin: true})
	if _, err := m.Reconcile(admin, meta.ReconcileOptions{}); err != nil {
		return err
	}
	for p, err := range semfs.Files(admin, f, "/") {
		if err != nil {
			return err
		}
		pm, err := f.Meta(admin, p)
		if err != nil {
			return err
		}
		if err := m.SetTags(admin, p, semfs.Tags{Summary: pm.Summary, Groups: pm.Groups, Public: pm.Public}); err != nil {
			return err
		}
	}
	_, err = a.drainEmbeddings(ctx, m, !a.JSON)
	return err
}

// openSiteMeta opens the metadata layer of a site over its index in dir.
func (a *App) openSiteMeta(ctx context.Context, f *docfs.FS, dir string) (*meta.FS, func() error, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	ix, err := sqlite.Open(ctx, filepath.Join(dir, "index.db"))
	if err != nil {
		return nil, nil, UnavailableError{err}
	}
	spaces, err := a.spaces()
	if err != nil {
		ix.Close()
		return nil, nil, err
	}
	if _, err := embedding.EnsureModel(ctx, dir, ix, spaces.Map()); err != nil {
		ix.Close()
		return nil, nil, err
	}
	m, err := meta.New(f, ix, meta.Options{Spaces: spaces, Logger: a.logger()})
	if err != nil {
		ix.Close()
		return nil, nil, err
	}
	closeAll := func() error {
		m.Close()
		return ix.Close()
	}
	return m, closeAll, nil
}

// openSearchableSite opens a site for sessions: its pages through the
// metadata layer of its index (search, query, indexed grep), read-only —
// no session may write or re-tag a page.
func (a *App) openSearchableSite(ctx context.Context, site string) (semfs.FS, error) {
	f, err := a.openDocsSite(ctx, site)
	if err != nil {
		return nil, err
	}
	dir, err := a.siteIndexDir(site)
	if err != nil {
		return nil, err
	}
	if !fileExists(filepath.Join(dir, "index.db")) {
		return f, nil // ingested by an older semfs: browsable, not searchable
	}
	m, closeAll, err := a.openSiteMeta(ctx, f, dir)
	if err != nil {
		return nil, err
	}
	a.OnClose(closeAll)
	return access.New(m, access.Policy{Default: access.Read}), nil
}

// openDocsSite opens a docs site read-only, for the shell.
func (a *App) openDocsSite(ctx context.Context, site string) (*docfs.FS, error) {
	store, err := a.openDocsStore(ctx)
	if err != nil {
		return nil, err
	}
	opts := docfs.Options{}
	if blobs, err := hostfs.Open(a.Root, hostfs.ReadOnly); err == nil {
		a.OnClose(blobs.Close)
		opts.Blobs = blobs
	}
	return docfs.Open(ctx, store, site, opts)
}
