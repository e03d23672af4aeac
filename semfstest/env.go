package semfstest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/semfs/semfs"
)

// env is what one case sees: the TB to report to, the configuration and a
// way to get a tree.
type env struct {
	TB
	cfg   *config
	ctx   context.Context
	newFS func() semfs.FS
	trees []semfs.FS // every tree the case made, checked when it ends
}

// empty returns a new, empty, writable tree.
func (e *env) empty() semfs.FS {
	e.Helper()
	fsys := e.newFS()
	if fsys == nil {
		e.Fatalf("newFS returned nil")
	}
	e.trees = append(e.trees, fsys)
	return fsys
}

// seeded returns a tree holding files (tree path → contents): built by the
// Seed option when there is one, else written with semfs.WriteFile.
func (e *env) seeded(files map[string]string) semfs.FS {
	e.Helper()
	if e.cfg.seed != nil {
		m := make(map[string][]byte, len(files))
		for k, v := range files {
			m[k] = []byte(v)
		}
		fsys := e.cfg.seed(e.TB, m)
		if fsys == nil {
			e.Fatalf("Seed returned nil")
		}
		e.trees = append(e.trees, fsys)
		return fsys
	}
	fsys := e.empty()
	for _, k := range slices.Sorted(maps.Keys(files)) {
		e.write(fsys, k, files[k])
	}
	return fsys
}

func (e *env) write(fsys semfs.FS, p, data string) {
	e.Helper()
	if err := semfs.WriteFile(e.ctx, fsys, p, []byte(data), 0o644); err != nil {
		e.Fatalf("WriteFile(%q, %d bytes): %v", p, len(data), err)
	}
}

func (e *env) mkdirAll(fsys semfs.FS, p string) {
	e.Helper()
	if err := semfs.MkdirAll(e.ctx, fsys, p, 0o755); err != nil {
		e.Fatalf("MkdirAll(%q): %v", p, err)
	}
}

// read reads p through semfs.ReadFile and through Open + Read and checks
// that both agree.
func (e *env) read(fsys semfs.FS, p string) string {
	e.Helper()
	data, err := semfs.ReadFile(e.ctx, fsys, p)
	if err != nil {
		e.Fatalf("ReadFile(%q): %v", p, err)
	}
	f, err := fsys.Open(e.ctx, p)
	if err != nil {
		e.Fatalf("Open(%q): %v", p, err)
	}
	defer f.Close()
	viaOpen, err := io.ReadAll(f)
	if err != nil {
		e.Fatalf("Open(%q) + Read: %v", p, err)
	}
	if !bytes.Equal(data, viaOpen) {
		e.Fatalf("%q: ReadFile gave %d bytes, Open+Read %d bytes, contents differ", p, len(data), len(viaOpen))
	}
	return string(data)
}

func (e *env) wantContent(fsys semfs.FS, p, want string) {
	e.Helper()
	if got := e.read(fsys, p); got != want {
		e.Errorf("%q holds %s; want %s", p, short(got), short(want))
	}
}

func (e *env) stat(fsys semfs.FS, p string) fs.FileInfo {
	e.Helper()
	info, err := semfs.Stat(e.ctx, fsys, p)
	if err != nil {
		e.Fatalf("Stat(%q): %v", p, err)
	}
	return info
}

func (e *env) wantDir(fsys semfs.FS, p string) {
	e.Helper()
	if info := e.stat(fsys, p); !info.IsDir() || !info.Mode().IsDir() {
		e.Errorf("Stat(%q): IsDir %v, mode %v; want a directory", p, info.IsDir(), info.Mode())
	}
}

func (e *env) wantAbsent(fsys semfs.FS, p string) {
	e.Helper()
	_, err := semfs.Stat(e.ctx, fsys, p)
	e.wantErr(err, semfs.ErrNotExist, "Stat of removed "+p, p)
}

func (e *env) names(fsys semfs.FS, dir string) []string {
	e.Helper()
	entries, err := semfs.ReadDir(e.ctx, fsys, dir)
	if err != nil {
		e.Fatalf("ReadDir(%q): %v", dir, err)
	}
	out := make([]string, len(entries))
	for i, d := range entries {
		out[i] = d.Name()
	}
	return out
}

func (e *env) files(fsys semfs.FS, root string) []string {
	e.Helper()
	out, err := semfs.FileList(e.ctx, fsys, root)
	if err != nil {
		e.Fatalf("Files(%q): %v", root, err)
	}
	return out
}

func (e *env) totalSize(fsys semfs.FS) int64 {
	e.Helper()
	n, err := semfs.TotalSize(e.ctx, fsys)
	if err != nil {
		e.Fatalf("TotalSize: %v", err)
	}
	return n
}

// hostMarkers are strings that betray a host path in an error.
var hostMarkers = func() []string {
	out := []string{"/tmp/"}
	if d := os.TempDir(); d != "" && d != "/" {
		out = append(out, strings.TrimSuffix(d, "/")+"/")
	}
	// The working directory of the test (the package directory), unless it
	// is so short that a tree path could contain it by chance.
	if wd, err := os.Getwd(); err == nil && strings.Count(wd, "/") >= 3 {
		out = append(out, wd)
	}
	return out
}()

// wantErr checks the one error shape of the contract: err is a
// *fs.PathError, errors.Is finds sentinel, its Path is a tree path (one of
// paths or an ancestor of one; unchecked if paths is empty) and nothing in it
// looks like a host path.
func (e *env) wantErr(err, sentinel error, what string, paths ...string) {
	e.Helper()
	if err == nil {
		e.Errorf("%s: succeeded; want an error wrapping %q", what, sentinel)
		return
	}
	e.checkShape(err, what, paths...)
	if !errors.Is(err, sentinel) {
		e.Errorf("%s: error %q (sentinel %v) does not wrap %q", what, err, semfs.Sentinel(err), sentinel)
	}
}

// checkShape checks the shape of err only (see wantErr).
func (e *env) checkShape(err error, what string, paths ...string) {
	e.Helper()
	pe, ok := err.(*fs.PathError)
	if !ok {
		if errors.As(err, &pe) {
			e.Errorf("%s: outermost error is %T wrapping a *fs.PathError; want the *fs.PathError outermost", what, err)
		} else {
			e.Errorf("%s: error %q (%T) is not a *fs.PathError", what, err, err)
		}
		return
	}
	for _, m := range hostMarkers {
		if strings.Contains(pe.Path, m) || strings.Contains(err.Error(), m) {
			e.Errorf("%s: error %q reveals a host path (%q)", what, err, m)
			break
		}
	}
	if len(paths) == 0 {
		return
	}
	for _, p := range paths {
		if p == pe.Path || (strings.HasPrefix(pe.Path, "/") && semfs.ValidPath(pe.Path) && semfs.HasPrefix(p, pe.Path) && pe.Path != "/") {
			return
		}
	}
	e.Errorf("%s: error %q has Path %q; want the tree path %q (or an ancestor)", what, err, pe.Path, paths)
}

// entry is one path of a tree state.
type entry struct {
	dir  bool
	data string
}

// state reads the whole tree: every directory and every file's contents.
func (e *env) state(fsys semfs.FS) map[string]entry {
	e.Helper()
	out := map[string]entry{}
	err := semfs.WalkDir(e.ctx, fsys, "/", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[p] = entry{dir: true}
			return nil
		}
		data, err := semfs.ReadFile(e.ctx, fsys, p)
		if err != nil {
			return err
		}
		out[p] = entry{data: string(data)}
		return nil
	})
	if err != nil {
		e.Fatalf("walking the tree: %v", err)
	}
	return out
}

// sameState checks that the tree still is what before recorded.
func (e *env) sameState(fsys semfs.FS, before map[string]entry, after string) {
	e.Helper()
	now := e.state(fsys)
	if maps.Equal(before, now) {
		return
	}
	var diffs []string
	for p, b := range before {
		if n, ok := now[p]; !ok {
			diffs = append(diffs, "lost "+p)
		} else if n != b {
			diffs = append(diffs, "changed "+p)
		}
	}
	for p := range now {
		if _, ok := before[p]; !ok {
			diffs = append(diffs, "gained "+p)
		}
	}
	slices.Sort(diffs)
	e.Errorf("after %s the tree changed: %s", after, strings.Join(diffs, ", "))
}

// short describes data for a failure message.
func short(s string) string {
	if len(s) <= 40 {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:40], len(s))
}

// consistent checks the invariants that tie the views of a tree together,
// after every case: each listing is sorted and agrees with Stat, Files lists
// exactly the regular files a walk finds, and TotalSize is their sum.
func (e *env) consistent(fsys semfs.FS) {
	e.Helper()
	ctx := context.WithoutCancel(e.ctx)
	var walked []string
	var sum int64
	err := semfs.WalkDir(ctx, fsys, "/", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := fsys.Stat(ctx, p)
		if err != nil {
			return err
		}
		if info.IsDir() != d.IsDir() || info.Mode().Type() != d.Type() {
			e.Errorf("consistency: %s is a %v in its parent's listing but Stat says %v", p, d.Type(), info.Mode().Type())
		}
		if !d.IsDir() {
			walked = append(walked, p)
			sum += info.Size()
			return nil
		}
		entries, err := fsys.ReadDir(ctx, p)
		if err != nil {
			return err
		}
		for i := 1; i < len(entries); i++ {
			if entries[i-1].Name() >= entries[i].Name() {
				e.Errorf("consistency: ReadDir(%s) not sorted or has duplicates: %q before %q", p, entries[i-1].Name(), entries[i].Name())
			}
		}
		return nil
	})
	if err != nil {
		e.Errorf("consistency: walking the tree: %v", err)
		return
	}
	slices.Sort(walked)
	files, err := semfs.FileList(ctx, fsys, "/")
	if err != nil {
		e.Errorf("consistency: Files: %v", err)
	} else if !slices.Equal(files, walked) {
		e.Errorf("consistency: Files lists %d paths, a walk finds %d regular files", len(files), len(walked))
	}
	if n, err := semfs.TotalSize(ctx, fsys); err != nil || n != sum {
		e.Errorf("consistency: TotalSize = %d, %v; the files hold %d bytes", n, err, sum)
	}
}
