package semfs

import (
	"context"
	"io"
)

// SnapshotFS is implemented by backends that serialise everything they store
// into one stream and restore it. Restore validates the whole stream before
// it replaces anything: a bad stream leaves the tree as it was. Snapshots are
// taken below every layer (see Base), so fenced paths and metadata are
// captured.
type SnapshotFS interface {
	FS
	Snapshot(ctx context.Context, w io.Writer) error
	Restore(ctx context.Context, r io.Reader) error
}
