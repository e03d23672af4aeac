package semfs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
)

func TestGetMetaFallback(t *testing.T) {
	ctx := context.Background()
	m := memfs.FromMap(map[string]string{"/notes/a.md": "hello"})
	meta, err := semfs.GetMeta(ctx, m, "notes/a.md")
	if err != nil {
		t.Fatal(err)
	}
	info, _ := m.Stat(ctx, "/notes/a.md")
	if meta.Path != "/notes/a.md" || meta.Size != 5 || !meta.UpdatedAt.Equal(info.ModTime()) || meta.CreatedBy != "" {
		t.Errorf("GetMeta fallback = %+v", meta)
	}
	_, err = semfs.GetMeta(ctx, m, "/notes/missing")
	if !errors.Is(err, semfs.ErrNotExist) {
		t.Errorf("GetMeta of a missing file = %v; want ErrNotExist", err)
	}
	err = semfs.SetTags(ctx, m, "/notes/a.md", semfs.Tags{Task: "t"})
	var pe *fs.PathError
	if !errors.As(err, &pe) || !errors.Is(err, semfs.ErrInvalid) || pe.Path != "/notes/a.md" {
		t.Errorf("SetTags on a tree without metadata = %v; want a PathError wrapping ErrInvalid", err)
	}
}

// hider answers Exists itself, hiding /secret.
type hider struct{ *memfs.FS }

func (h hider) Exists(ctx context.Context, name string) (bool, error) {
	if name == "/secret" {
		return false, nil
	}
	return semfs.Exists(ctx, h.FS, name)
}

func TestExists(t *testing.T) {
	ctx := context.Background()
	m := memfs.FromMap(map[string]string{"/secret": "s", "/open": "o"})
	for name, want := range map[string]bool{"/open": true, "/secret": true, "/": true, "/nope": false, "/open/below": false, "a//b": false} {
		if got, err := semfs.Exists(ctx, m, name); got != want || err != nil {
			t.Errorf("Exists(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	if got, _ := semfs.Exists(ctx, hider{m}, "/secret"); got {
		t.Error("Exists did not defer to ExistsFS")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := semfs.Exists(cancelled, m, "/open"); !errors.Is(err, context.Canceled) {
		t.Errorf("Exists under a cancelled context = %v; want the cancellation, not false", err)
	}
}

func TestWalkDir(t *testing.T) {
	ctx := context.Background()
	m := memfs.FromMap(map[string]string{"/a/x": "", "/a/y/z": "", "/a.txt": "", "/b/c": ""})
	var visited []string
	err := semfs.WalkDir(ctx, m, "/", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		visited = append(visited, p)
		if p == "/a/y" {
			return fs.SkipDir
		}
		if p == "/b" {
			return fs.SkipAll
		}
		return nil
	})
	want := []string{"/", "/a", "/a/x", "/a/y", "/a.txt", "/b"}
	if err != nil || !slices.Equal(visited, want) {
		t.Errorf("WalkDir visited %q, %v; want %q", visited, err, want)
	}
	var gotErr error
	semfs.WalkDir(ctx, m, "/missing", func(p string, d fs.DirEntry, err error) error {
		gotErr = err
		return err
	})
	if !errors.Is(gotErr, semfs.ErrNotExist) {
		t.Errorf("WalkDir of a missing root passed %v; want ErrNotExist", gotErr)
	}
	sentinel := errors.New("stop")
	if err := semfs.WalkDir(ctx, m, "/", func(string, fs.DirEntry, error) error { return sentinel }); err != sentinel {
		t.Errorf("WalkDir returned %v; want the callback's error", err)
	}
}

func TestErrorHelpers(t *testing.T) {
	if semfs.Sentinel(errors.New("plain")) != nil || semfs.Sentinel(nil) != nil {
		t.Error("Sentinel of an error wrapping none must be nil")
	}
	for _, s := range []error{semfs.ErrNotExist, semfs.ErrExist, semfs.ErrPermission, semfs.ErrInvalid,
		semfs.ErrNotDir, semfs.ErrIsDir, semfs.ErrNotEmpty, semfs.ErrReadOnly, semfs.ErrQuota} {
		err := fmt.Errorf("layer: %w", semfs.PathErr("op", "/p", s, "why"))
		if semfs.Sentinel(err) != s {
			t.Errorf("Sentinel(%v) = %v; want %v", err, semfs.Sentinel(err), s)
		}
	}
	plain := errors.New("disk on fire")
	err := semfs.RewritePath(plain, "read", "/x")
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != "/x" || pe.Op != "read" || !errors.Is(err, plain) {
		t.Errorf("RewritePath of a plain error = %#v", err)
	}
	if semfs.RewritePath(nil, "read", "/x") != nil {
		t.Error("RewritePath(nil) != nil")
	}
	if !semfs.IsAbsence(semfs.PathErr("stat", "/x", semfs.ErrNotDir, "")) || semfs.IsAbsence(plain) {
		t.Error("IsAbsence wrong")
	}
}
