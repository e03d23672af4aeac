package semfstest

import (
	"context"

	"github.com/semfs/semfs"
)

// Names lists directory dir of fsys in the order its ReadDir returns,
// with a "/" after each directory's name, for tests that compare a
// listing with a literal. It fails tb and returns nil when the listing
// fails.
func Names(tb TB, ctx context.Context, fsys semfs.FS, dir string) []string {
	tb.Helper()
	entries, err := fsys.ReadDir(ctx, dir)
	if err != nil {
		tb.Fatalf("ReadDir(%s): %v", dir, err)
		return nil
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		out = append(out, n)
	}
	return out
}

// ReadString returns the contents of file p of fsys. It fails tb and
// returns "" when the read fails.
func ReadString(tb TB, ctx context.Context, fsys semfs.FS, p string) string {
	tb.Helper()
	data, err := semfs.ReadFile(ctx, fsys, p)
	if err != nil {
		tb.Fatalf("ReadFile(%s): %v", p, err)
		return ""
	}
	return string(data)
}
