// Package access is the access layer: path rules (read, write or none, last
// match wins over a default) and per-file visibility (public, or a set of
// groups), enforced on the tree itself so that they hold on every surface —
// FUSE, shell, MCP, HTTP, CLI — at once.
//
//	fsys := access.New(tree, access.Policy{
//		Default: access.None,
//		Rules: []access.Rule{
//			{Path: "/corpus", Access: access.Read, Note: "curated upstream"},
//			{Path: "/work", Access: access.Write},
//			{Path: "/**/*.locked.md", Access: access.Read},
//		},
//		Quota: 1 << 30,
//	})
//
// # Path rules
//
// A rule covers the paths its pattern matches and everything below them
// (see [Rule] for the glob syntax). The last rule covering a path decides;
// [Policy.Default] (Write when unset) applies where none does.
//
//   - A listing filters: entries without access are left out, so an
//     allowlisted tree is navigable rather than a minefield.
//   - A named path refuses: reading, stat'ing or listing a path without
//     access fails with [semfs.ErrPermission] — whether or not it exists,
//     so guessing names is not a probe. Exists answers false.
//   - Traversal is not read access: a refused directory that holds (at any
//     depth) a path the rules grant stays listable, showing only the
//     entries that lead there, and stat'able, without granting its files.
//     Finding out reads only subtrees some rule could grant something in:
//     cheap for grants of literal paths, a walk (stopping at the first
//     grant) for a grant like "/**/*.locked.md" under a refusing default.
//   - Writing, creating, removing, tagging need Write; a rename needs Write
//     at the source and the destination, and a directory moves only if
//     every path below it may be written at both places. When the wrapped
//     tree rewrites links on a move and says who links where
//     ([BacklinksFS]), a rename is also refused whole if a file holding a
//     link to the moved path may not be written (or is hidden).
//   - A recursive remove that would reach a path without Write (or a hidden
//     file) is refused whole, before anything is removed.
//   - TotalSize reports the whole tree: hiding a subtree must not buy room
//     past a budget. With [Policy.Quota], WriteFile (old size replaced by
//     new) and writes through OpenFile (growth past the file's size, on
//     Write, WriteAt and Truncate) that would exceed it fail with
//     [semfs.ErrQuota], whose detail gives the numbers.
//
// # Visibility
//
// A file hidden from the principal does not exist for it: Stat, Open,
// Remove, Meta and SetTags fail with [semfs.ErrNotExist]; it is absent from
// listings, Files, query and search results and Meta links; a failing
// recursive remove does not name it; Exists answers false. A directory is
// hidden when it holds files and all of them are hidden (the tree pruned to
// the principal's groups). Writing over a hidden file cannot pretend it is
// absent; it fails with ErrPermission. A path below a hidden file gets what
// a path below an absent name gets (ErrNotExist, never "not a directory",
// which would tell that a file is there); a create below it, which below
// an absent name would make the missing parents and succeed, fails with
// ErrNotExist, as a create in a missing directory does.
//
// Who is asking comes from [semfs.PrincipalFrom]. A context without a
// principal is a host call (the daemon itself, a snapshot, maintenance):
// nothing is hidden from it. Every front end serving an agent or a user must
// therefore put the session's principal in the context ([semfs.WithPrincipal]);
// one that forgets gets the host's view. Admin principals see every file.
// Path rules apply to everyone, principal or not.
//
// Visibility is decided, in order of preference, by [Policy.Visible] when
// set; by the wrapped tree's [VisibilityFS] when it has one (the metadata
// layer should: it answers a whole directory at once); or by the wrapped
// tree's [semfs.MetaFS], one Meta per file (semfs.Tags.VisibleTo) and, for
// a directory, a scan of the files below it that stops at the first visible
// one (a listing that shows a visible file needs no scan of its own
// directory). A tree without metadata hides nothing.
//
// # Metadata and search
//
// Meta on a path without read access is refused like a read (a summary
// describes bytes not granted); SetTags follows the write rules; results of
// Query, Search, Related and GrepCandidates are filtered to paths with
// access that are visible, since a hit is an existence proof. A filtered search page may
// hold fewer hits than its limit.
//
// # Limits
//
// Checks and the operation they guard are not one transaction: a file
// created concurrently inside a subtree being removed can be removed
// unchecked. Snapshots are not forwarded: they are host operations taken
// below this layer ([FS.Unwrap]).
package access
