//go:build linux

package hostfs

import (
	"os"
	"path/filepath"
	"syscall"
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
	// Opens that create or write: the kernel refuses every way out, so
	// nothing is created or opened for writing outside the root.
	outside := t.TempDir()
	must(t, os.Symlink(filepath.Join(outside, "new"), filepath.Join(dir, "a/dangling")))
	for _, rel := range []string{"a/etc", "a/out/x", "a/abs", "a/dangling", "../" + filepath.Base(dir) + "/new"} {
		for _, flag := range []int{syscall.O_WRONLY | syscall.O_CREAT, syscall.O_RDWR | syscall.O_CREAT | syscall.O_EXCL, syscall.O_WRONLY} {
			if fd, ok := f.fast.open(rel, flag, 0o644); ok {
				syscall.Close(fd)
				t.Errorf("fast open(%s, %#x) succeeded", rel, flag)
			}
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("a fast create left the root: %v", ents)
	}
	fd, ok := f.fast.open("a/b/new", syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL, 0o600)
	if !ok {
		t.Fatal("fast create inside the root failed")
	}
	syscall.Close(fd)
	if info, err := os.Stat(filepath.Join(dir, "a/b/new")); err != nil || info.Mode().Perm()&^0o600 != 0 {
		t.Fatalf("fast create made %v, %v", info, err)
	}
}

// noFastPath turns the openat2 fast path off for benchmarks of os.Root alone.
func noFastPath(f *FS, off bool) {
	if off && f.fast != nil {
		f.fast.off.Store(true)
	}
}
