package semfs

import "context"

// RenameFS is implemented by file systems that move files and directories.
// Rename follows rename(2):
//   - oldname must exist (ErrNotExist);
//   - the parent of newname must exist and be a directory (ErrNotExist /
//     ErrNotDir);
//   - a file may replace a file; a directory may replace an empty directory;
//     otherwise ErrIsDir / ErrNotDir / ErrNotEmpty;
//   - a directory cannot move below itself (ErrInvalid);
//   - renaming a path onto itself is a no-op.
type RenameFS interface {
	FS
	Rename(ctx context.Context, oldname, newname string) error
}

// Rename moves oldname to newname, or fails with ErrReadOnly if fsys cannot.
func Rename(ctx context.Context, fsys FS, oldname, newname string) error {
	o, err := Clean("rename", oldname)
	if err != nil {
		return err
	}
	n, err := Clean("rename", newname)
	if err != nil {
		return err
	}
	r, ok := fsys.(RenameFS)
	if !ok {
		return PathErr("rename", o, ErrReadOnly, "this tree does not accept writes")
	}
	return r.Rename(ctx, o, n)
}
