// Package semfs is the core contract of the semfs semantic filesystem: one
// small interface every backend (memory, host directory, object store,
// document store) and every layer (mount table, access rules, metadata and
// search) implements, and that every front end (FUSE mount, virtual shell,
// MCP tools, HTTP and socket API, CLI, Go client) calls.
//
// # The contract
//
// [FS] is small: open a file for reading, stat a path, list a directory. All
// methods take a [context.Context] first. Everything else is an optional
// capability, an interface of its own ([WriteFileFS], [OpenFileFS],
// [MkdirFS], [RemoveFS], [RenameFS], [FilesFS], [SizeFS], ...), detected by a
// same-named helper function that type-asserts and falls back where a
// fallback exists, in the manner of io/fs's [fs.ReadDir] and [fs.Stat]. A
// read-only backend simply does not implement the writers; the helpers then
// fail with [ErrReadOnly].
//
// # Paths
//
// Paths are slash-separated and rooted at the tree: "/", "/notes/a.md".
// A relative form ("notes/a.md", ".") is accepted and means the same thing.
// [Clean] validates and canonicalises a path once, at the boundary; it rejects
// empty paths, "..", "." or empty elements ("a//b", "a/./b"), trailing
// slashes, NUL and other control characters, backslashes, invalid UTF-8,
// elements longer than [MaxNameLen] bytes and paths longer than [MaxPathLen]
// bytes. Backends receive canonical paths only. Host paths never appear in an
// error or a listing.
//
// # Errors
//
// The outermost error of every failing method is a *[fs.PathError] whose Op
// is the operation, whose Path is the tree path (never a host path), and
// whose Err wraps one sentinel: [ErrNotExist], [ErrExist], [ErrPermission],
// [ErrInvalid], [ErrNotDir], [ErrIsDir], [ErrNotEmpty], [ErrReadOnly] or
// [ErrQuota]. Match with [errors.Is], never with ==. Each front end maps
// these sentinels in exactly one table (errno for FUSE, status for HTTP, exit
// code for the CLI).
//
// # Files and directories
//
// Open opens regular files only; opening a directory fails with [ErrIsDir]
// (list it with ReadDir). ReadDir returns entries sorted by name. A directory
// exists if it was created or if anything exists below it. Writing through a
// path whose parent is a file fails with [ErrNotDir].
//
// # Layers
//
// A layer wraps an FS and forwards or masks every capability; it declares
// what it implements at compile time (var _ semfs.RenameFS = (*X)(nil)) and
// exposes what it wraps through [Unwrapper], so that snapshots can be taken
// below every layer.
//
// Use [IOFS] to see any FS as an [io/fs.FS] (for testing/fstest, fs.WalkDir,
// http.FS).
package semfs
