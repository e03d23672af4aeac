package access_test

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/semfstest"
)

var ctx = context.Background()

// tagged is a memfs with per-file tags, a tag query, a content search and
// relatives: the metadata surface the access layer filters.
type tagged struct {
	*memfs.FS
	mu        sync.Mutex
	tags      map[string]semfs.Tags
	metaCalls atomic.Int64
}

func newTagged(files map[string]string) *tagged {
	return &tagged{FS: memfs.FromMap(files), tags: map[string]semfs.Tags{}}
}

func (t *tagged) Meta(ctx context.Context, name string) (semfs.Meta, error) {
	t.metaCalls.Add(1)
	info, err := t.FS.Stat(ctx, name)
	if err != nil {
		return semfs.Meta{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return semfs.Meta{Path: name, Size: info.Size(), Tags: t.tags[name].Clone()}, nil
}

func (t *tagged) SetTags(ctx context.Context, name string, tags semfs.Tags) error {
	if _, err := t.FS.Stat(ctx, name); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tags[name] = tags.Clone()
	return nil
}

func (t *tagged) files() []string {
	files, err := semfs.FileList(context.Background(), t.FS, "/")
	if err != nil {
		panic(err)
	}
	return files
}

// Query matches every file whose path contains text.
func (t *tagged) Query(ctx context.Context, text string, limit int) ([]semfs.QueryResult, error) {
	var out []semfs.QueryResult
	for _, p := range t.files() {
		if strings.Contains(p, text) {
			out = append(out, semfs.QueryResult{Path: p, Score: 1})
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Search hits every file whose contents contain the query, in one page.
func (t *tagged) Search(ctx context.Context, req semfs.SearchRequest, fn func(semfs.SearchHit) error) (string, error) {
	for _, p := range t.files() {
		data, _ := t.FS.ReadFile(ctx, p)
		if strings.Contains(string(data), req.Query) {
			if err := fn(semfs.SearchHit{Path: p, Snippet: string(data)}); err != nil {
				return "", err
			}
		}
	}
	return "", nil
}

// Related returns every other file.
func (t *tagged) Related(ctx context.Context, name string, limit int) ([]semfs.Candidate, error) {
	var out []semfs.Candidate
	for _, p := range t.files() {
		if p != name {
			out = append(out, semfs.Candidate{Path: p, Similarity: 0.5, Via: "lexical"})
		}
	}
	return out, nil
}

func (t *tagged) hide(p string, groups ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tg := t.tags[p]
	tg.Groups = groups
	t.tags[p] = tg
}

func names(t *testing.T, fsys semfs.FS, ctx context.Context, dir string) []string {
	t.Helper()
	return semfstest.Names(t, ctx, fsys, dir)
}

func wantNames(t *testing.T, fsys semfs.FS, ctx context.Context, dir string, want ...string) {
	t.Helper()
	if got := names(t, fsys, ctx, dir); !slices.Equal(got, want) {
		t.Errorf("ls %s = %v, want %v", dir, got, want)
	}
}

// wantErr checks the error shape: outermost *fs.PathError at path wrapping
// sentinel.
func wantErr(t *testing.T, err, sentinel error, path string) *fs.PathError {
	t.Helper()
	pe, ok := err.(*fs.PathError)
	if !ok {
		t.Fatalf("error %v (%T) is not a *fs.PathError", err, err)
	}
	if !errors.Is(err, sentinel) {
		t.Fatalf("error %v does not wrap %v", err, sentinel)
	}
	if pe.Path != path {
		t.Fatalf("error %v has path %q, want %q", err, pe.Path, path)
	}
	return pe
}

func fileList(t *testing.T, fsys semfs.FS, ctx context.Context, root string) []string {
	t.Helper()
	var out []string
	for p, err := range semfs.Files(ctx, fsys, root) {
		if err != nil {
			t.Fatalf("Files(%s): %v", root, err)
		}
		out = append(out, p)
	}
	return out
}

// GrepCandidates: files whose contents hold pattern literally.
func (t *tagged) GrepCandidates(ctx context.Context, root, pattern string, opts semfs.GrepOptions) ([]string, bool, error) {
	files, err := semfs.FileList(ctx, t.FS, root)
	if err != nil {
		return nil, false, err
	}
	var out []string
	for _, p := range files {
		data, _ := t.FS.ReadFile(ctx, p)
		if strings.Contains(string(data), pattern) {
			out = append(out, p)
		}
	}
	return out, true, nil
}

// Backlinks returns the files whose links point at name or below it.
func (t *tagged) Backlinks(ctx context.Context, name string) ([]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for p, tags := range t.tags {
		for _, l := range tags.Links {
			if semfs.HasPrefix(l, name) {
				out = append(out, p)
				break
			}
		}
	}
	slices.Sort(out)
	return out, nil
}
