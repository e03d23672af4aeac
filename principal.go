package semfs

import (
	"context"
	"slices"
)

// Principal is who is acting: the identity a front end established for a
// request (a FUSE caller's registered app, a socket peer, an HTTP token, a
// shell session). Layers read it from the context: the metadata layer records
// App as a new file's created_by, the access layer matches Groups against a
// file's visibility.
type Principal struct {
	// ID names the principal for logs and provenance ("uid:1000",
	// "token:ci", "app:notes").
	ID string
	// App is the registered application the writes are attributed to, if any.
	App string
	// Groups are the principal's groups for per-file visibility.
	Groups []string
	// Admin principals see every file regardless of groups (path rules still
	// apply). Hosts use it for maintenance; agents never get it.
	Admin bool
}

// InGroup reports whether p belongs to any of groups.
func (p Principal) InGroup(groups []string) bool {
	for _, g := range groups {
		if slices.Contains(p.Groups, g) {
			return true
		}
	}
	return false
}

type principalKey struct{}

// WithPrincipal returns a context carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal carried by ctx, and whether there was
// one.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
