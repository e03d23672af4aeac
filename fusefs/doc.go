// Package fusefs serves any semfs.FS as a Linux FUSE file system, through
// go-fuse's InodeEmbedder API.
//
// # Data and inodes
//
// The kernel's inode tree holds no data: every request is answered from the
// semfs.FS by path, so a FORGET that drops an inode loses nothing. Inode
// numbers are stable per path for the life of a Server: the first lookup of a
// path allocates a number, rename moves it with the file, and unlink or a
// rename over the path frees it. A node finds its path in that table by its
// number, and renames and removals change the FS and the table under one
// lock that every path-resolving request takes too, so a node never
// resolves to another file's path. A request on a node whose file was
// removed or renamed over after the kernel resolved the name answers
// ESTALE (the kernel then walks the path again, once) — or, for an open
// file, from its handle. Only regular files and directories exist;
// symlinks, hard links, device nodes and extended attributes answer
// ENOTSUP.
//
// # Errors
//
// Errors are mapped to errno in exactly one table ([Errno]): the semfs
// sentinels to ENOENT, EEXIST, EACCES, EINVAL, ENOTDIR, EISDIR, ENOTEMPTY,
// EROFS and EDQUOT; an error that carries a syscall.Errno keeps it; anything
// else is EIO and is logged.
//
// # Interrupts
//
// Requests ignore the kernel's INTERRUPT, as libfuse does by default: the
// kernel sends one whenever the calling thread takes a signal (Go programs
// take SIGURG all the time), and an operation cut short would answer EINTR,
// which rename(2) and close(2) callers do not retry.
//
// # Principals
//
// Every request runs with a context carrying a semfs.Principal resolved from
// the caller's pid, uid and gid by [Options.Principal] (by default
// "uid:N"). The metadata layer records the principal's App, else its ID, as
// a new file's created_by.
//
// # Attributes that are not stored
//
// semfs keeps no owners, permission bits or times other than the
// modification time. chmod and chown succeed without effect; utimes sets the
// modification time when the tree implements [ChtimesFS] and is otherwise
// ignored. Files are reported as owned by [Options.UID]/[Options.GID].
//
// # Caching
//
// The kernel caches attributes and names for [Options.AttrTimeout] (1 s by
// default). Every open drops the file's page cache (no FOPEN_KEEP_CACHE), so
// changes made behind the mount (through the control socket, say) are seen
// on the next open: keeping the cache when size and modification time were
// unchanged served stale pages under concurrent renames.
// Directories are listed with plain READDIR, so ls and find stat only what
// they need.
//
// # Mounting
//
// [Mount] mounts with mount(2) directly when running as root and falls back
// to fusermount3 otherwise. A stale mount at the mount point (left by a
// daemon killed with SIGKILL, "transport endpoint is not connected") is
// detached first. [Server.Unmount] unmounts, lazily if the mount is busy.
package fusefs
