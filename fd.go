package semfs

// Fder is implemented by open files whose bytes live in one host file, so
// that a front end can hand the host descriptor to the kernel and let reads
// and writes bypass the process (FUSE passthrough).
//
// HostFd returns the descriptor, or false when the file has none (memory,
// object store) or when the file does something on every read or write that
// the descriptor would skip. The descriptor stays owned by the file: it is
// valid until Close, and the caller must not close it. Anything may be read
// or written through it at any time until Close, so a layer that must know
// whether a file was written (to index it, say) treats a writable file
// whose descriptor was taken as written.
//
// Layers forward HostFd only when they add nothing per read or write: the
// metadata layer forwards it (it re-reads a file at Close), the access
// layer's quota-checked files do not.
type Fder interface {
	HostFd() (fd int, ok bool)
}

// HostFd returns the host descriptor of the open file f, if it has one.
func HostFd(f any) (fd int, ok bool) {
	if d, is := f.(Fder); is {
		return d.HostFd()
	}
	return -1, false
}
