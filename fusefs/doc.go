// Package fusefs serves any semfs.FS as a Linux FUSE file system, through
// go-fuse's InodeEmbedder API.
//
// # Data and inodes
//
// The kernel's inode tree holds no data: every request is answered from the
// semfs.FS by path, so a FORGET that drops an inode loses nothing. Inode
// numbers are stable per path while the kernel holds the inode: the first
// lookup of a path allocates a number, rename moves it with the file,
// unlink or a rename over the path frees it, and so does the kernel
// forgetting the inode, a second later unless it looked the inode up
// again meanwhile (the next lookup allocates a new one). Numbers that
// READDIR handed out for entries never looked up are swept when the table
// has doubled, so the table follows what the kernel caches rather than
// every path ever listed. A node finds its path in that table by its
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
// # Passthrough
//
// A file whose open handle has a host descriptor ([semfs.Fder]: hostfs
// files, through the layers that forward it) is opened with
// FOPEN_PASSTHROUGH: the kernel reads and writes the host file itself and
// the server sees only open, close and the namespace operations. A layer
// that must know whether a file was written therefore treats a writable
// handle whose descriptor was taken as written (the metadata layer re-reads
// and indexes it at close). Writes through a shared mapping can outlive
// close(2), so a file written by passthrough stays watched with inotify
// after its last writable handle closed, and is re-read through the tree
// when a mapping of it goes away (mapped.go). Registering the descriptor
// needs CAP_SYS_ADMIN, Linux 6.9 or later and a host file system the
// kernel accepts under FUSE (overlayfs is, one stacking level deep); the
// mount checks once, with a file in [Options.StatfsDir], that it can
// ([Server.Passthrough]) and otherwise serves every read and write itself,
// as it does with [Options.NoPassthrough]. A daemon that drops its
// capabilities after mounting therefore serves through itself.
//
// A file of at most 1 MiB opened read-only while no handle of it is open
// by passthrough is read through the page cache instead, with its pages
// kept across opens while the host file's identity, size, mtime and ctime
// stay those they were loaded from (with [Options.KeepCache]): a
// passthrough open costs the kernel a backing file registered and
// dropped per open, and a passthrough read marks the inode's access time
// stale, so the program's next fstat(2) is a GETATTR round trip (grep -r
// paid one per file). A cold small file then costs one READ round trip.
// An open of such a file whose kept pages match the host file opens no
// host file: the tree is asked to Stat the path (which checks the
// caller's access as an open would, and yields the stamp), and the file
// is opened, as the opener, only if a read misses the pages (the kernel
// may evict them). If by then another file stands at the name (replaced
// behind the mount, or renamed over), that read fails with ESTALE rather
// than return another file's bytes; and a file hidden from the opener
// since, or removed, fails as its open would. fstat(2) of a handle never
// read answers from that Stat.
//
// The kernel requires all opens of one inode to be passthrough while one
// is, all to the backing file of the first: a handle without a descriptor
// opened then is refused with ETXTBSY, and one on another host file (the
// file was replaced behind the mount) with ESTALE, after which the kernel
// looks the name up again. hostfs in Overlay mode hands out no descriptors
// for that reason; trees that mix (the access layer's quota-checked
// writers) should be mounted with NoPassthrough.
//
// # Caching
//
// The kernel caches attributes and names for [Options.AttrTimeout] (1 s by
// default). Without [Options.KeepCache] every open drops the file's page
// cache, so that changes made behind the mount are seen on the next open.
// With it pages stay across opens (of files served through the page cache
// where passthrough is off; with passthrough on, a file's pages are the
// backing file's own), which is right when every change behind
// the mount is reported: [Server.Written], [Server.Replaced],
// [Server.Removed] and [Server.Renamed] update the inode table and tell the
// kernel to drop the file's pages and attributes or the name's entry, so
// the change is visible through the mount when the call returns. A file
// replaced whole gets a new number: handles open on the old one keep
// reading the old bytes, as on a local file system. Changes made through
// the mount need no report; [FromMount] tells a change's context apart.
// [Server.Created] reports a creation. Directories are listed with plain
// READDIR, so ls and find stat only what they need, and with KeepCache the
// kernel keeps the listings too (FOPEN_CACHE_DIR): a change through the
// mount drops them in the kernel, a reported change drops those of the
// directories above the changed names.
//
// # Open-free mode
//
// With [Options.OpenFree] OPEN answers ENOSYS, and the kernel then opens
// and closes every file of the mount without a request (no OPEN, RELEASE
// or FLUSH), keeping pages across opens: a warm grep -r costs the daemon
// nothing per file, a cold one a LOOKUP and a READ. Reads and writes
// arrive without a handle and are served from host files the mount opens
// through the tree as the calling principal on first use — so the tree
// checks that caller's access then — and closes when idle, at fsync(2),
// at unmount, or beyond a bound. A file written so, or created (CREATE
// gets no handle either: the kernel sends no RELEASE for any file in this
// mode), is reported to the tree as closed a short quiet period after its
// last write (the metadata layer indexes it then), not at close(2). A
// write the tree refuses a caller fails at write(2) or at the truncation
// of open(2) with O_TRUNC, since the open itself sent nothing to refuse.
// The kernel writes a shared mapping's pages back without a caller (pid
// 0): those writes are made as the last caller who read or wrote the
// file. Passthrough, and with it the mapping watch, is off; the mode
// needs KeepCache and excludes WriteBack. The host file opened first
// fixes the file's identity: a file replaced behind the mount and not yet
// reported answers ESTALE through the old descriptor (and the mount drops
// the kernel's name, so a new open reads the new file). A file removed or renamed over through the
// mount stays readable and fstat-able through descriptors opened before,
// from a host file the change kept open until the kernel forgets the
// inode. Where no listing differs by caller ([Options.Shared] is nil),
// OPENDIR answers ENOSYS too: directories are opened and closed without a
// request and the kernel keeps every listing it read until a change
// through the mount or a reported one drops it (Retagged among them);
// with Shared set, directories are opened as without the mode, so that a
// listing that may differ is read for each caller. See free.go.
//
// # Mounting
//
// [Mount] mounts with mount(2) directly when running as root and falls back
// to fusermount3 otherwise. A stale mount at the mount point (left by a
// daemon killed with SIGKILL, "transport endpoint is not connected") is
// detached first. [Server.Unmount] unmounts, lazily if the mount is busy.
package fusefs
