// Package hostfs serves a real host directory as a [semfs.FS].
//
// Every access goes through an [os.Root], so no ".." and no symbolic link can
// reach outside the directory: links that stay inside the tree are followed,
// links that leave it (absolute links included) fail with ErrPermission and
// the detail "symlink points outside the tree", and a link loop fails with
// ErrInvalid. Host paths never appear in errors or listings: every error is a
// *fs.PathError carrying the tree path and one semfs sentinel.
//
// # Modes
//
// [Open] takes a [Mode]:
//
//   - [ReadOnly]: writes are refused with ErrReadOnly. [FS.Tree] returns a
//     view without the writer methods, so capability checks see a read-only
//     tree.
//   - [ReadWrite]: writes go to disk. WriteFile is atomic per file: the
//     bytes go to a temporary file in the same directory, which is fsynced
//     and renamed over the target, and the directory is fsynced, so a crash
//     leaves the old file or the new one, never half of either.
//   - [Overlay]: copy-on-write. Reads fall through to disk; writes, removals
//     and renames land in an in-memory overlay (with whiteouts for what was
//     removed) and nothing on the host changes until [FS.Commit] applies the
//     overlay (removals, then directory creations, then one atomic write per
//     file). [FS.Discard] drops it, [FS.Changes] lists it.
//
// In Overlay mode a rename copies the moved subtree into memory (host files
// included) and removes the source; a renamed symbolic link becomes a copy
// of what it points to. Overlay files have no durability before Commit, so
// their Sync does nothing.
//
// # Speed
//
// On Linux, reads, deep Stats and the directory walks of Files resolve the
// whole path in one openat2(2)
// call with RESOLVE_BENEATH, where the kernel itself refuses any way out of
// the root; os.Root, which walks one element at a time, answers every
// failure and every write. docs/bench/hostfs.md has the numbers.
//
// # Host descriptors
//
// Open files implement [semfs.Fder]: HostFd returns the host file's
// descriptor, which the FUSE front end hands to the kernel (passthrough)
// so that reads and writes bypass the daemon. In Overlay mode files have
// none, since a path's bytes may move into memory while a descriptor of the
// host file is in use.
//
// # Hidden paths
//
// Paths listed with the [Hide] option ("/.semfs" by default, where the index
// keeps its database) are left out of listings, Files and TotalSize, and
// every attempt to open, stat or change them fails with ErrPermission.
// Temporary files of atomic writes (names starting ".semfs-tmp-") are hidden
// the same way; a process killed mid-write leaves one behind, which
// [FS.SweepTemp] removes. A directory holding a hidden path cannot be
// removed, moved or replaced. Hiding is bookkeeping, not access control: a
// symbolic link inside the tree that points into a hidden directory still
// reaches it when named (listings leave such links out). Use the access
// layer for policy.
//
// # Host entries semfs does not model
//
// The tree holds regular files and directories. Symbolic links appear as
// what they point to; links that escape, dangle or loop, links to a directory
// above themselves (which would make the tree infinite), devices, sockets and
// pipes are left out of listings, and naming one fails with a clear error.
// Names that are not valid semfs path elements (control characters,
// backslashes, invalid UTF-8, longer than 255 bytes) are left out of listings.
// A device node inside the tree is opened (non-blocking, without becoming a
// controlling terminal) before it is refused, which some devices notice:
// keep them out of data directories.
package hostfs
