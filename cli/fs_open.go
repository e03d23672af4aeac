package cli

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/hostfs"
)

// openRootFS opens the tree the file commands (ls, cat, put, rm, mv, mkdir,
// tree, stat) work on. Every one of them goes through here, so replacing the
// plain host directory with a fuller stack (metadata, index) is a change to
// this function alone. readOnly commands get a tree without writers.
func (a *App) openRootFS(readOnly bool) (semfs.FS, error) {
	mode := hostfs.ReadWrite
	if readOnly {
		mode = hostfs.ReadOnly
	}
	f, err := hostfs.Open(a.Root, mode)
	if err != nil {
		return nil, hinted{err, "check --root (or SEMFS_DATA): it must name an existing host directory"}
	}
	a.OnClose(f.Close)
	return f.Tree(), nil
}

// hinted is an error followed by a line telling the person what to do next.
// errors.Is still finds the sentinel, so the exit code is unchanged.
type hinted struct {
	err  error
	hint string
}

func (h hinted) Error() string { return h.err.Error() + "\n  " + h.hint }
func (h hinted) Unwrap() error { return h.err }

// explain adds the usual next step for a failed file operation.
func explain(err error) error {
	if err == nil {
		return nil
	}
	var h hinted
	if errors.As(err, &h) {
		return err
	}
	var hint string
	switch semfs.Sentinel(err) {
	case semfs.ErrNotExist:
		hint = "check the path with 'semfs ls' on its parent directory"
	case semfs.ErrNotDir:
		hint = "a component of the path is a file, not a directory"
	case semfs.ErrIsDir:
		hint = "the path is a directory: list it with 'semfs ls', remove it with 'semfs rm -r'"
	case semfs.ErrNotEmpty:
		hint = "the directory is not empty: use 'semfs rm -r' to remove it with everything in it"
	case semfs.ErrExist:
		hint = "the path already exists: pick another name or remove it first"
	case semfs.ErrPermission:
		hint = "the path is outside what this tree lets you reach"
	case semfs.ErrReadOnly:
		hint = "this tree does not accept writes"
	case semfs.ErrQuota:
		hint = "free some space (semfs rm) and retry"
	default: // ErrInvalid's details already say what to write instead
		return err
	}
	return hinted{err, hint}
}

// cleanArg validates a path argument; relative paths are taken from the
// root.
func cleanArg(op, arg string) (string, error) {
	p, err := semfs.Clean(op, arg)
	return p, explain(err)
}

// entryJSON is how --json shows a file or directory.
type entryJSON struct {
	Path    string    `json:"path"`
	Name    string    `json:"name"`
	Type    string    `json:"type"` // "file" or "dir"
	Size    int64     `json:"size"` // 0 for directories
	Mode    string    `json:"mode"`
	ModTime time.Time `json:"modTime"`
}

func toEntry(p string, info fs.FileInfo) entryJSON {
	e := entryJSON{Path: p, Name: semfs.BaseName(p), Type: "file", Size: info.Size(), Mode: info.Mode().String(), ModTime: info.ModTime().UTC()}
	if info.IsDir() {
		e.Type, e.Size = "dir", 0
	}
	return e
}

// statArg cleans and stats one path argument.
func statArg(ctx context.Context, fsys semfs.FS, op, arg string) (string, fs.FileInfo, error) {
	p, err := cleanArg(op, arg)
	if err != nil {
		return "", nil, err
	}
	info, err := fsys.Stat(ctx, p)
	if err != nil {
		return "", nil, explain(err)
	}
	return p, info, nil
}
