//go:build linux

package hostfs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFastPath checks that openat2 resolves deep paths inside the root and
// refuses every way out, so the os.Root fallback is only for errors.
func TestFastPath(t *testing.T) {
	dir := seedDir(t, map[string]string{"/a/b/c.txt": "deep", "/top": "t"})
	must(t, os.Symlink("../top", filepath.Join(dir, "a/up")))
	must(t, os.Symlink("/etc/passwd", filepath.Join(dir, "a/etc")))
	must(t, os.Symlink("../../..", filepath.Join(dir, "a/out")))
	must(t, os.Symlink(filepath.Join(dir, "top"), filepath.Join(dir, "a/abs")))
	f := open(t, dir, ReadOnly)
	if f.fast == nil || f.fast.off.Load() {
		t.Skip("this kernel has no openat2; every call takes the os.Root path")
	}
	if data, ok := f.fast.readFile("a/b/c.txt"); !ok || string(data) != "deep" {
		t.Errorf("fast readFile = %q, %v", data, ok)
	}
	if data, ok := f.fast.readFile("a/up"); !ok || string(data) != "t" {
		t.Errorf("fast readFile through an inside link = %q, %v", data, ok)
	}
	if info, ok := f.fast.stat("a/b/c.txt", "c.txt"); !ok || info.Size() != 4 || info.Name() != "c.txt" || !info.Mode().IsRegular() {
		t.Errorf("fast stat = %v, %v", info, ok)
	}
	if info, ok := f.fast.stat("a/b", "b"); !ok || !info.IsDir() || info.Mode().Perm() != 0o755 {
		t.Errorf("fast stat of a dir = %v, %v", info, ok)
	}
	for _, rel := range []string{"a/etc", "a/out", "a/abs", "../" + filepath.Base(dir) + "/top", "a/missing"} {
		if _, ok := f.fast.readFile(rel); ok {
			t.Errorf("fast readFile(%s) succeeded; it must leave the answer to os.Root", rel)
		}
		if _, ok := f.fast.stat(rel, "x"); ok {
			t.Errorf("fast stat(%s) succeeded", rel)
		}
	}
}

// noFastPath turns the openat2 fast path off for benchmarks of os.Root alone.
func noFastPath(f *FS, off bool) {
	if off && f.fast != nil {
		f.fast.off.Store(true)
	}
}
