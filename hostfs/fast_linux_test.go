//go:build linux

package hostfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/semfs/semfs"
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
	if data, ok, _ := f.fast.readFile("a/b/c.txt"); !ok || string(data) != "deep" {
		t.Errorf("fast readFile = %q, %v", data, ok)
	}
	if data, ok, _ := f.fast.readFile("a/up"); !ok || string(data) != "t" {
		t.Errorf("fast readFile through an inside link = %q, %v", data, ok)
	}
	if info, _ := f.fast.stat("a/b/c.txt", "c.txt"); info == nil || info.Size() != 4 || info.Name() != "c.txt" || !info.Mode().IsRegular() {
		t.Errorf("fast stat = %v", info)
	}
	if info, _ := f.fast.stat("a/b", "b"); info == nil || !info.IsDir() || info.Mode().Perm() != 0o755 {
		t.Errorf("fast stat of a dir = %v", info)
	}
	for _, rel := range []string{"a/etc", "a/out", "a/abs", "../" + filepath.Base(dir) + "/top"} {
		if _, ok, errno := f.fast.readFile(rel); ok || missing(errno, 0) {
			t.Errorf("fast readFile(%s) = %v, %v; it must leave the answer to os.Root", rel, ok, errno)
		}
		if info, errno := f.fast.stat(rel, "x"); info != nil || missing(errno, 0) {
			t.Errorf("fast stat(%s) = %v, %v; it must leave the answer to os.Root", rel, info, errno)
		}
	}
	// Opens that create or write: the kernel refuses every way out, so
	// nothing is created or opened for writing outside the root.
	outside := t.TempDir()
	must(t, os.Symlink(filepath.Join(outside, "new"), filepath.Join(dir, "a/dangling")))
	for _, rel := range []string{"a/etc", "a/out/x", "a/abs", "a/dangling", "../" + filepath.Base(dir) + "/new"} {
		for _, flag := range []int{syscall.O_WRONLY | syscall.O_CREAT, syscall.O_RDWR | syscall.O_CREAT | syscall.O_EXCL, syscall.O_WRONLY} {
			if fd, errno := f.fast.open(rel, flag, 0o644); fd >= 0 || missing(errno, flag) {
				syscall.Close(fd)
				t.Errorf("fast open(%s, %#x) = %d, %v; it must fail and leave the answer to os.Root", rel, flag, fd, errno)
			}
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("a fast create left the root: %v", ents)
	}
	fd, _ := f.fast.open("a/b/new", syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL, 0o600)
	if fd < 0 {
		t.Fatal("fast create inside the root failed")
	}
	syscall.Close(fd)
	if info, err := os.Stat(filepath.Join(dir, "a/b/new")); err != nil || info.Mode().Perm()&^0o600 != 0 {
		t.Fatalf("fast create made %v, %v", info, err)
	}
}

// TestFastPathMissing: a path the kernel finds no file at is answered by
// the fast path itself, with the error os.Root gives for it (a negative
// lookup through the mount no longer repeats the walk through os.Root);
// every other failure is still left to os.Root.
func TestFastPathMissing(t *testing.T) {
	dir := seedDir(t, map[string]string{"/a/b/c.txt": "deep", "/top": "t"})
	must(t, os.Symlink("nowhere", filepath.Join(dir, "a/dangling")))
	must(t, os.Symlink("../gone/x", filepath.Join(dir, "a/upgone")))
	must(t, os.Symlink("../../../../../gone", filepath.Join(dir, "a/outgone")))
	fast := open(t, dir, ReadWrite)
	if fast.fast == nil || fast.fast.off.Load() {
		t.Skip("this kernel has no openat2; every call takes the os.Root path")
	}
	slow := open(t, dir, ReadWrite)
	noFastPath(slow, true)
	ctx := context.Background()
	missingPaths := []string{"/a/b/none", "/a/none/c.txt", "/none/b/c", "/a/dangling", "/a/upgone"}
	for _, p := range missingPaths {
		if info, errno := fast.fast.stat(rel(p), "x"); info != nil || !missing(errno, 0) {
			t.Errorf("fast stat(%s) = %v, %v; want ENOENT answered", p, info, errno)
		}
	}
	// Final-element creates, "not a directory" and a way out stay with
	// os.Root; all of them must read the same on both sides.
	for _, p := range append(missingPaths, "/a/b/c.txt/x", "/a/outgone", "/a/b/c.txt") {
		fi, ferr := fast.Stat(ctx, p)
		si, serr := slow.Stat(ctx, p)
		if fmt.Sprint(ferr) != fmt.Sprint(serr) || (fi == nil) != (si == nil) {
			t.Errorf("Stat(%s): fast path %v, %v; os.Root %v, %v", p, fi, ferr, si, serr)
		}
		if ferr != nil && p != "/a/outgone" && !errors.Is(ferr, semfs.ErrNotExist) && !errors.Is(ferr, semfs.ErrNotDir) {
			t.Errorf("Stat(%s) = %v; want not-exist or not-a-directory", p, ferr)
		}
		fd, ferr := fast.ReadFile(ctx, p)
		sd, serr := slow.ReadFile(ctx, p)
		if fmt.Sprint(ferr) != fmt.Sprint(serr) || string(fd) != string(sd) {
			t.Errorf("ReadFile(%s): fast path %q, %v; os.Root %q, %v", p, fd, ferr, sd, serr)
		}
		ff, ferr := fast.Open(ctx, p)
		sf, serr := slow.Open(ctx, p)
		if fmt.Sprint(ferr) != fmt.Sprint(serr) {
			t.Errorf("Open(%s): fast path %v; os.Root %v", p, ferr, serr)
		}
		if ferr == nil {
			ff.Close()
		}
		if serr == nil {
			sf.Close()
		}
	}
	// A create in a missing directory fails the same way, and creates
	// nothing.
	_, ferr := fast.OpenFile(ctx, "/a/none/new", os.O_WRONLY|os.O_CREATE, 0o644)
	_, serr := slow.OpenFile(ctx, "/a/none/new", os.O_WRONLY|os.O_CREATE, 0o644)
	if ferr == nil || fmt.Sprint(ferr) != fmt.Sprint(serr) || !errors.Is(ferr, semfs.ErrNotExist) {
		t.Errorf("create in a missing directory: fast path %v; os.Root %v", ferr, serr)
	}
}

// noFastPath turns the openat2 fast path off for benchmarks of os.Root alone.
func noFastPath(f *FS, off bool) {
	if off && f.fast != nil {
		f.fast.off.Store(true)
	}
}
