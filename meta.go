package semfs

import (
	"context"
	"slices"
	"time"
)

// Tags are what a caller may set on a file with SetTags. Setting tags
// replaces all previous tags (seed 000: "tagging again replaces").
type Tags struct {
	Task        string            `json:"task,omitempty"`
	RelatedApps []string          `json:"relatedApps,omitempty"`
	Summary     string            `json:"summary,omitempty"`
	Links       []string          `json:"links,omitempty"` // absolute tree paths
	Provenance  string            `json:"provenance,omitempty"`
	Extra       map[string]string `json:"extra,omitempty"` // free key=value tags

	// Visibility (seed 003). A file with no Groups, or with Public set, is
	// visible to every principal; otherwise only to principals in one of
	// Groups (and to admins).
	Groups []string `json:"groups,omitempty"`
	Public bool     `json:"public,omitempty"`
}

// Meta is everything semfs knows about a file besides its bytes.
type Meta struct {
	Path string `json:"path"`
	Tags
	// CreatedBy is recorded on the file's first write (the writing
	// principal's App, or its ID when it registered no app) and never
	// changes afterwards.
	CreatedBy string    `json:"createdBy,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	Size      int64     `json:"size"`
	Hash      string    `json:"hash,omitempty"` // hex SHA-256 of the contents, when known
}

// VisibleTo reports whether a principal may see a file with these tags.
func (t Tags) VisibleTo(p Principal) bool {
	return len(t.Groups) == 0 || t.Public || p.Admin || p.InGroup(t.Groups)
}

// Clone returns a deep copy of t.
func (t Tags) Clone() Tags {
	t.RelatedApps = slices.Clone(t.RelatedApps)
	t.Links = slices.Clone(t.Links)
	t.Groups = slices.Clone(t.Groups)
	if t.Extra != nil {
		m := make(map[string]string, len(t.Extra))
		for k, v := range t.Extra {
			m[k] = v
		}
		t.Extra = m
	}
	return t
}

// MetaFS is implemented by trees that keep metadata (the meta layer, docfs,
// the remote client). Meta fails like Stat for a missing or hidden path.
// SetTags replaces the file's tags and follows the write rules of the access
// layer; it fails with ErrNotExist if the file does not exist.
type MetaFS interface {
	FS
	Meta(ctx context.Context, name string) (Meta, error)
	SetTags(ctx context.Context, name string, tags Tags) error
}

// GetMeta returns the metadata of name, or a Meta holding only what Stat
// knows when fsys keeps no metadata.
func GetMeta(ctx context.Context, fsys FS, name string) (Meta, error) {
	p, err := Clean("meta", name)
	if err != nil {
		return Meta{}, err
	}
	if m, ok := fsys.(MetaFS); ok {
		return m.Meta(ctx, p)
	}
	info, err := fsys.Stat(ctx, p)
	if err != nil {
		return Meta{}, err
	}
	return Meta{Path: p, CreatedAt: info.ModTime(), UpdatedAt: info.ModTime(), Size: info.Size()}, nil
}

// SetTags sets the tags of name, or fails with ErrInvalid when fsys keeps no
// metadata.
func SetTags(ctx context.Context, fsys FS, name string, tags Tags) error {
	p, err := Clean("tag", name)
	if err != nil {
		return err
	}
	m, ok := fsys.(MetaFS)
	if !ok {
		return PathErr("tag", p, ErrInvalid, "this tree keeps no metadata; mount it under a metadata layer to tag files")
	}
	return m.SetTags(ctx, p, tags)
}
