// Package mount joins several semfs trees into one: a mount table in which
// the longest mount prefix wins, whatever the order the mounts were given in.
//
//	fsys, err := mount.New([]mount.Mount{
//		{At: "/", FS: memfs.New()},
//		{At: "/corpus", FS: docs, ReadOnly: true},
//		{At: "/memory", FS: store},
//	})
//
// # Paths seen by a backend
//
// By default paths are translated: a backend mounted at /memory is called
// with /notes/x.md for the tree path /memory/notes/x.md, so an existing tree
// can be grafted anywhere. Set [Mount.KeepAbsolute] when a backend's stored
// paths must stay absolute (links stored as tree paths inside it would
// otherwise break silently): it is then called with /memory/notes/x.md.
// Errors from a backend are rewritten to tree paths either way.
//
// # The directories above mounts
//
// Directories on the way down to a mount point (and the mount points
// themselves) always exist and are listable: their listing is the backend's
// own listing (of a mount covering them, such as one at "/") merged with the
// names leading to deeper mount points. They are not writable: a write,
// mkdir or rename to a path no mount covers is refused with
// [semfs.ErrPermission] and a detail naming the writable mounts ("/a/x is
// not inside a mount; writable mounts: /memory, /work"), because a write
// that silently went somewhere is the worst outcome available. A write into
// a ReadOnly mount fails with [semfs.ErrReadOnly] and the same list. A mount
// point, and any directory holding one, cannot be removed or renamed:
// unmounting is a host decision, not an agent's. A mount point behaves like
// the root of its backend: RemoveAll on it empties the mount and leaves the
// mount point, while RemoveAll of a directory holding other mount points is
// refused whole.
//
// # Renames across mounts
//
// Renaming from one mount into another is refused with an error wrapping
// both [semfs.ErrPermission] and [ErrCrossMount]; nothing is copied. A front
// end may map ErrCrossMount to EXDEV so that tools such as mv fall back to
// copy-then-delete themselves, where a failure stays visible to the caller.
//
// # Capabilities
//
// [FS] forwards every capability of the contract: reads, WriteFile,
// OpenFile, Mkdir, MkdirAll, Remove, RemoveAll, Rename, Files (merged in
// path order across mounts), TotalSize (the sum over distinct backends),
// Meta and SetTags, Query and Related and Search and GrepCandidates (fanned
// out and merged, with paths rewritten), and Exists. A backend lacking a capability gets the
// root package's fallback (or its ErrReadOnly).
//
// Search pages: a request whose path filter lies inside one mount goes to
// that mount alone. Otherwise it fans out to every searchable mount; a page
// then holds up to Limit hits from each mount, merged best first, and the
// returned cursor resumes every mount where it stopped.
//
// Related is answered by the mount holding the file, so relatives in other
// mounts are not found.
//
// Metadata links are passed through as the backend stores them; keep the
// metadata layer above the mount table (as the daemon does), or use
// KeepAbsolute for a metadata-keeping backend, so links are tree paths.
//
// # Snapshots
//
// FS does not implement [semfs.SnapshotFS]: a snapshot is taken below every
// layer, of each backend ([FS.Mounts] lists them). With exactly one mount,
// Unwrap returns its backend so that [semfs.Base] reaches it.
package mount
