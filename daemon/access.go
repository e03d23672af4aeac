package daemon

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/fusefs"
	"github.com/semfs/semfs/httpapi"
	"github.com/semfs/semfs/meta"
)

// grant is what one of the daemon's tokens grants a process registered
// with it, on the mount and the socket: a principal and a path policy.
type grant struct {
	id     string
	app    string // the app the token is for; "" allows any
	groups []string
	admin  bool
	fs     *access.FS // the tree under the token's path policy
}

// principal is the principal of a process registered as app with g.
func (g *grant) principal(app string) semfs.Principal {
	return semfs.Principal{ID: g.id, App: app, Groups: g.groups, Admin: g.admin}
}

// nobody is a principal without groups: what it sees, every principal
// sees (groups only ever add visibility).
var nobody = semfs.Principal{ID: "nobody"}

// accessLayer is the access layer of the mount and the socket: callers
// registered with a token act under that token's principal and path
// policy, every other caller under the default policy (read-write
// everywhere) with no groups, so that group-restricted files do not exist
// for it.
type accessLayer struct {
	def      *access.FS
	byID     map[string]*grant   // principal ID → grant
	bySecret map[[32]byte]*grant // SHA-256 of the token → grant
	// refusing holds the policies whose rules refuse some path: the names
	// and listings they may hide differ between callers.
	refusing []*access.FS
	// vis answers visibility in bulk when the tree keeps metadata; hides
	// says whether the tree can hide files by group at all.
	vis   access.VisibilityFS
	hides bool
	// mounted is the mount to tell of tag changes made through the
	// layer, for a tree given in code (Main.Tree); the daemon's own tree
	// tells it itself (reporting), for every surface.
	mounted atomic.Pointer[fusefs.Server]
}

// visible reports whether a principal without groups sees p.
func (a *accessLayer) visible(ctx context.Context, p string) bool {
	if a.vis != nil {
		ok, err := a.vis.VisibleTo(ctx, nobody, p)
		return err == nil && ok
	}
	ok, err := a.def.Exists(semfs.WithPrincipal(ctx, nobody), p)
	return err == nil && ok
}

// newAccessLayer builds the access layer over tree from the tokens of the
// daemon's tokens file (none without one). Each token needs its own id,
// which names its principal; "uid:" ids are the daemon's names for callers
// without a token.
func newAccessLayer(tree semfs.FS, tokens map[string]httpapi.Token) (*accessLayer, error) {
	a := &accessLayer{
		def:      access.New(tree, access.Policy{}),
		byID:     map[string]*grant{},
		bySecret: map[[32]byte]*grant{},
	}
	a.vis, _ = tree.(access.VisibilityFS)
	_, isMeta := tree.(semfs.MetaFS)
	a.hides = a.vis != nil || isMeta
	if err := checkTokens(tokens); err != nil {
		return nil, err
	}
	for secret, t := range tokens {
		g := &grant{id: t.ID, app: t.App, groups: t.Groups, admin: t.Admin, fs: access.New(tree, t.Policy())}
		a.byID[t.ID] = g
		a.bySecret[sha256.Sum256([]byte(secret))] = g
		if _, below := g.fs.Refuses("/"); below {
			a.refusing = append(a.refusing, g.fs)
		}
	}
	return a, nil
}

// checkTokens checks the tokens of the tokens file: each needs an id of
// its own, not one of the daemon's "uid:N" names, and a valid policy. They
// are checked in a fixed order, so that an error names the same token
// every time.
func checkTokens(tokens map[string]httpapi.Token) error {
	ids := map[string]bool{}
	for _, secret := range slices.Sorted(maps.Keys(tokens)) {
		t := tokens[secret]
		switch {
		case t.ID == "":
			return fmt.Errorf("a token has no id; give each token an id, which names its principal")
		case strings.HasPrefix(t.ID, "uid:"):
			return fmt.Errorf("token id %q: ids starting with \"uid:\" name callers without a token; choose another id", t.ID)
		case ids[t.ID]:
			return fmt.Errorf("two tokens have the id %q; give each token its own id", t.ID)
		}
		ids[t.ID] = true
		if err := t.Policy().Validate(); err != nil {
			return fmt.Errorf("token %q: %w", t.ID, err)
		}
	}
	return nil
}

// lookup returns the grant of token, or nil when it is not one of the
// daemon's.
func (a *accessLayer) lookup(token string) *grant {
	return a.bySecret[sha256.Sum256([]byte(token))]
}

// pick returns the tree under the policy of the principal in ctx.
func (a *accessLayer) pick(ctx context.Context) *access.FS {
	if len(a.byID) > 0 {
		if p, ok := semfs.PrincipalFrom(ctx); ok {
			if g := a.byID[p.ID]; g != nil {
				return g.fs
			}
		}
	}
	return a.def
}

// shared reports whether every caller of the mount sees the same at p:
// its name and attributes, or (listing) its listing (fusefs.Options.Shared).
// The caller in ctx was just answered for p. Path rules make a name
// differ where some token's rules refuse it, and a listing where they may
// refuse something in it. Visibility makes them differ where a principal
// without groups, who sees no more than anyone, would not see p or some
// entry of the listing.
func (a *accessLayer) shared(ctx context.Context, p string, listing bool) bool {
	for _, f := range a.refusing {
		if at, below := f.Refuses(p); at || (listing && below) {
			return false
		}
	}
	if !a.hides {
		return true
	}
	if listing {
		if a.vis == nil {
			return false // finding out would cost a second listing
		}
		hidden, err := a.vis.HiddenIn(ctx, nobody, p)
		return err == nil && len(hidden) == 0
	}
	if p == "/" {
		return true
	}
	if pr, ok := semfs.PrincipalFrom(ctx); ok && !pr.Admin && len(pr.Groups) == 0 {
		return true // this caller sees p and sees no more than anyone
	}
	return a.visible(ctx, p)
}

// sessionFS is the daemon's tree as the mount and the socket serve it:
// every call runs under the access policy of the principal in its
// context (see accessLayer.pick).
type sessionFS struct{ a *accessLayer }

var (
	_ semfs.FS               = sessionFS{}
	_ semfs.ReadFileFS       = sessionFS{}
	_ semfs.WriteFileFS      = sessionFS{}
	_ semfs.OpenFileFS       = sessionFS{}
	_ semfs.MkdirFS          = sessionFS{}
	_ semfs.MkdirAllFS       = sessionFS{}
	_ semfs.RemoveFS         = sessionFS{}
	_ semfs.RemoveAllFS      = sessionFS{}
	_ semfs.RenameFS         = sessionFS{}
	_ semfs.FilesFS          = sessionFS{}
	_ semfs.SizeFS           = sessionFS{}
	_ semfs.ExistsFS         = sessionFS{}
	_ semfs.MetaFS           = sessionFS{}
	_ semfs.QueryFS          = sessionFS{}
	_ semfs.SearchFS         = sessionFS{}
	_ semfs.RelatedFS        = sessionFS{}
	_ semfs.GrepCandidatesFS = sessionFS{}
)

func (s sessionFS) Open(ctx context.Context, name string) (fs.File, error) {
	return s.a.pick(ctx).Open(ctx, name)
}

func (s sessionFS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	return s.a.pick(ctx).Stat(ctx, name)
}

func (s sessionFS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	return s.a.pick(ctx).ReadDir(ctx, name)
}

func (s sessionFS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	return s.a.pick(ctx).ReadFile(ctx, name)
}

func (s sessionFS) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	return s.a.pick(ctx).WriteFile(ctx, name, data, perm)
}

func (s sessionFS) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	return s.a.pick(ctx).OpenFile(ctx, name, flag, perm)
}

func (s sessionFS) Mkdir(ctx context.Context, name string, perm fs.FileMode) error {
	return s.a.pick(ctx).Mkdir(ctx, name, perm)
}

func (s sessionFS) MkdirAll(ctx context.Context, name string, perm fs.FileMode) error {
	return s.a.pick(ctx).MkdirAll(ctx, name, perm)
}

func (s sessionFS) Remove(ctx context.Context, name string) error {
	return s.a.pick(ctx).Remove(ctx, name)
}

func (s sessionFS) RemoveAll(ctx context.Context, name string) error {
	return s.a.pick(ctx).RemoveAll(ctx, name)
}

func (s sessionFS) Rename(ctx context.Context, oldname, newname string) error {
	return s.a.pick(ctx).Rename(ctx, oldname, newname)
}

func (s sessionFS) Files(ctx context.Context, root string) iter.Seq2[string, error] {
	return s.a.pick(ctx).Files(ctx, root)
}

func (s sessionFS) TotalSize(ctx context.Context) (int64, error) {
	return s.a.pick(ctx).TotalSize(ctx)
}

func (s sessionFS) Exists(ctx context.Context, name string) (bool, error) {
	return s.a.pick(ctx).Exists(ctx, name)
}

func (s sessionFS) Meta(ctx context.Context, name string) (semfs.Meta, error) {
	return s.a.pick(ctx).Meta(ctx, name)
}

func (s sessionFS) SetTags(ctx context.Context, name string, tags semfs.Tags) error {
	mnt := s.a.mounted.Load()
	if mnt == nil {
		return s.a.pick(ctx).SetTags(ctx, name, tags)
	}
	p, err := semfs.Clean("tag", name)
	if err != nil {
		return err
	}
	before := s.a.visible(ctx, p)
	if err := s.a.pick(ctx).SetTags(ctx, p, tags); err != nil {
		return err
	}
	if s.a.visible(ctx, p) != before {
		mnt.Retagged(p)
	}
	return nil
}

func (s sessionFS) Query(ctx context.Context, text string, limit int) ([]semfs.QueryResult, error) {
	return s.a.pick(ctx).Query(ctx, text, limit)
}

func (s sessionFS) Search(ctx context.Context, req semfs.SearchRequest, fn func(semfs.SearchHit) error) (string, error) {
	return s.a.pick(ctx).Search(ctx, req, fn)
}

func (s sessionFS) Related(ctx context.Context, name string, limit int) ([]semfs.Candidate, error) {
	return s.a.pick(ctx).Related(ctx, name, limit)
}

func (s sessionFS) GrepCandidates(ctx context.Context, root, pattern string, opts semfs.GrepOptions) ([]string, bool, error) {
	return s.a.pick(ctx).GrepCandidates(ctx, root, pattern, opts)
}

// reporting is the metadata layer as the daemon serves it, telling the
// mount of the changes of visibility the metadata layer does not report
// (it reports changes of files, not of who may see them), so that the
// kernel drops the names and listings it cached for every caller: a tag
// change that hides or shows a file, and a removal or a move that leaves a
// directory holding only hidden files (hidden itself, see access.FS).
// What counts is what a principal without groups sees: that is what the
// kernel may have cached (see accessLayer.shared).
type reporting struct {
	*meta.FS
	s *stack
}

// SetTags sets the tags of name and reports a change of its visibility.
func (r reporting) SetTags(ctx context.Context, name string, tags semfs.Tags) error {
	p, err := semfs.Clean("tag", name)
	if err != nil {
		return err
	}
	before, _ := r.FS.VisibleTo(ctx, nobody, p)
	if err := r.FS.SetTags(ctx, p, tags); err != nil {
		return err
	}
	if after, _ := r.FS.VisibleTo(ctx, nobody, p); after != before {
		if mnt := r.s.mounted.Load(); mnt != nil {
			mnt.Retagged(p)
		}
	}
	return nil
}

// Remove removes name and reports its directory if that is hidden now.
func (r reporting) Remove(ctx context.Context, name string) error {
	if err := r.FS.Remove(ctx, name); err != nil {
		return err
	}
	r.hiddenDirs(ctx, name)
	return nil
}

// RemoveAll removes name and reports its directory if that is hidden now.
func (r reporting) RemoveAll(ctx context.Context, name string) error {
	if err := r.FS.RemoveAll(ctx, name); err != nil {
		return err
	}
	r.hiddenDirs(ctx, name)
	return nil
}

// Rename moves oldname and reports the directories of both names that are
// hidden now.
func (r reporting) Rename(ctx context.Context, oldname, newname string) error {
	if err := r.FS.Rename(ctx, oldname, newname); err != nil {
		return err
	}
	r.hiddenDirs(ctx, oldname, newname)
	return nil
}

// hiddenDirs reports to the mount the directory of each name that a
// principal without groups no longer sees (a directory above a visible one
// is visible). A change made through the mount is reported once its
// request returned: the kernel may wait on the request before it takes
// the notification.
func (r reporting) hiddenDirs(ctx context.Context, names ...string) {
	mnt := r.s.mounted.Load()
	if mnt == nil {
		return
	}
	for _, name := range names {
		p, err := semfs.Clean("remove", name)
		if err != nil || p == "/" {
			continue
		}
		dir := semfs.Dir(p)
		if dir == "/" {
			continue
		}
		if ok, err := r.FS.VisibleTo(ctx, nobody, dir); err != nil || ok {
			continue
		}
		if fusefs.FromMount(ctx) {
			go mnt.Retagged(dir)
		} else {
			mnt.Retagged(dir)
		}
	}
}
