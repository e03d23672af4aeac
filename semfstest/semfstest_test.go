package semfstest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/semfstest"
)

func TestMemfsConforms(t *testing.T) {
	if failures := semfstest.Check(func(semfstest.TB) semfs.FS { return memfs.New() }); len(failures) > 0 {
		t.Fatalf("memfs fails the suite:\n%s", join(failures))
	}
}

// readOnly exposes only the core FS of what it wraps.
type readOnly struct{ fs semfs.FS }

func (r readOnly) Open(ctx context.Context, name string) (fs.File, error) {
	return r.fs.Open(ctx, name)
}
func (r readOnly) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	return r.fs.Stat(ctx, name)
}
func (r readOnly) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	return r.fs.ReadDir(ctx, name)
}

func seedMem(tb semfstest.TB, files map[string][]byte) *memfs.FS {
	m := memfs.New()
	for p, data := range files {
		if err := m.WriteFile(context.Background(), p, data, 0o644); err != nil {
			tb.Fatalf("seed %s: %v", p, err)
		}
	}
	return m
}

func TestReadOnlyConforms(t *testing.T) {
	seed := semfstest.Seed(func(tb semfstest.TB, files map[string][]byte) semfs.FS {
		return readOnly{seedMem(tb, files)}
	})
	if failures := semfstest.Check(nil, semfstest.ReadOnly(), seed); len(failures) > 0 {
		t.Fatalf("a read-only view of memfs fails the suite:\n%s", join(failures))
	}
	// The same through Run, as a backend would use it.
	semfstest.Run(t, nil, semfstest.ReadOnly(), seed)
}

func TestReadOnlyNeedsSeed(t *testing.T) {
	failures := semfstest.Check(func(semfstest.TB) semfs.FS { return readOnly{memfs.New()} }, semfstest.ReadOnly())
	if len(failures) != 1 || failures[0].Case != "config" {
		t.Fatalf("ReadOnly without Seed: failures %v; want one config failure", failures)
	}
}

// Broken file systems. Each embeds memfs and breaks one rule.

type forgetsImplicitDirs struct{ *memfs.FS }

// ReadDir lists only files, as a backend that stores only file keys and
// forgets to synthesise the directories between them would.
func (b forgetsImplicitDirs) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	entries, err := b.FS.ReadDir(ctx, name)
	var out []fs.DirEntry
	for _, e := range entries {
		if !e.IsDir() {
			out = append(out, e)
		}
	}
	return out, err
}

type unsortedReadDir struct{ *memfs.FS }

func (b unsortedReadDir) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	entries, err := b.FS.ReadDir(ctx, name)
	for i, j := 0, len(entries)-1; i < j; i, j = i+1, j-1 {
		entries[i], entries[j] = entries[j], entries[i]
	}
	return entries, err
}

// wrongSentinel reports "not exist" where the contract says "not a
// directory".
type wrongSentinel struct{ *memfs.FS }

func fixSentinel(err error) error {
	var pe *fs.PathError
	if errors.Is(err, semfs.ErrNotDir) && errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: pe.Path, Err: fs.ErrNotExist}
	}
	return err
}

func (b wrongSentinel) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	return fixSentinel(b.FS.WriteFile(ctx, name, data, perm))
}

func (b wrongSentinel) MkdirAll(ctx context.Context, name string, perm fs.FileMode) error {
	return fixSentinel(b.FS.MkdirAll(ctx, name, perm))
}

type totalOffByOne struct{ *memfs.FS }

func (b totalOffByOne) TotalSize(ctx context.Context) (int64, error) {
	n, err := b.FS.TotalSize(ctx)
	return n + 1, err
}

// removeAllFirstChild removes only the first entry of each directory.
type removeAllFirstChild struct{ *memfs.FS }

func (b removeAllFirstChild) RemoveAll(ctx context.Context, name string) error {
	info, err := b.FS.Stat(ctx, name)
	if err != nil || !info.IsDir() {
		return b.FS.RemoveAll(ctx, name)
	}
	entries, _ := b.FS.ReadDir(ctx, name)
	if len(entries) > 0 {
		return b.RemoveAll(ctx, semfs.Join(name, entries[0].Name()))
	}
	return b.FS.Remove(ctx, name)
}

// leaksHostPath reports the host location of the tree in its errors.
type leaksHostPath struct{ *memfs.FS }

func (b leaksHostPath) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	info, err := b.FS.Stat(ctx, name)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, &fs.PathError{Op: pe.Op, Path: path.Join(os.TempDir(), "semfs-store", name), Err: pe.Err}
	}
	return info, err
}

// cleansBadPaths "helpfully" cleans paths instead of rejecting them.
type cleansBadPaths struct{ *memfs.FS }

func lax(name string) string { return path.Clean("/" + strings.ReplaceAll(name, "\\", "/")) }

func (b cleansBadPaths) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	return b.FS.Stat(ctx, lax(name))
}

func (b cleansBadPaths) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	return b.FS.WriteFile(ctx, lax(name), data, perm)
}

// dropsLastByte loses the last byte of files longer than 64 KiB, as a
// chunking bug would.
type dropsLastByte struct{ *memfs.FS }

func (b dropsLastByte) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	if len(data) > 64<<10 {
		data = data[:len(data)-1]
	}
	return b.FS.WriteFile(ctx, name, data, perm)
}

// renameLosesChildren moves a directory as an empty one.
type renameLosesChildren struct{ *memfs.FS }

func (b renameLosesChildren) Rename(ctx context.Context, oldname, newname string) error {
	info, err := b.FS.Stat(ctx, oldname)
	if err != nil || !info.IsDir() || oldname == newname {
		return b.FS.Rename(ctx, oldname, newname)
	}
	if err := b.FS.Mkdir(ctx, newname, 0o755); err != nil {
		return b.FS.Rename(ctx, oldname, newname)
	}
	return b.FS.RemoveAll(ctx, oldname)
}

// opensDirs opens a directory as an empty file.
type opensDirs struct{ *memfs.FS }

func (b opensDirs) Open(ctx context.Context, name string) (fs.File, error) {
	if info, err := b.FS.Stat(ctx, name); err == nil && info.IsDir() {
		return b.FS.Open(ctx, "/")
	}
	return b.FS.Open(ctx, name)
}

// filesInWalkOrder lists files in per-directory order, not full-path order.
type filesInWalkOrder struct{ *memfs.FS }

func (b filesInWalkOrder) Files(ctx context.Context, root string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		semfs.WalkDir(ctx, b.FS, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				yield("", err)
				return fs.SkipAll
			}
			if !d.IsDir() && !yield(p, nil) {
				return fs.SkipAll
			}
			return nil
		})
	}
}

// zeroModTime reports no modification times.
type zeroModTime struct{ *memfs.FS }

type noTime struct{ fs.FileInfo }

func (noTime) ModTime() time.Time { return time.Time{} }

func (b zeroModTime) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	info, err := b.FS.Stat(ctx, name)
	if err != nil {
		return nil, err
	}
	return noTime{info}, nil
}

// wrapsErrors hides the *fs.PathError inside another error.
type wrapsErrors struct{ *memfs.FS }

func (b wrapsErrors) Remove(ctx context.Context, name string) error {
	if err := b.FS.Remove(ctx, name); err != nil {
		return fmt.Errorf("backend: %w", err)
	}
	return nil
}

// removesRoot lets Remove("/") empty the tree.
type removesRoot struct{ *memfs.FS }

func (b removesRoot) Remove(ctx context.Context, name string) error {
	if name == "/" {
		return b.FS.RemoveAll(ctx, "/")
	}
	return b.FS.Remove(ctx, name)
}

// ignoresExcl drops O_EXCL; ignoresAppend drops O_APPEND.
type ignoresExcl struct{ *memfs.FS }

func (b ignoresExcl) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	return b.FS.OpenFile(ctx, name, flag&^os.O_EXCL, perm)
}

type ignoresAppend struct{ *memfs.FS }

func (b ignoresAppend) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	return b.FS.OpenFile(ctx, name, flag&^os.O_APPEND, perm)
}

// shortReads returns a reader that stops one byte early on Open.
type shortReads struct{ *memfs.FS }

// shortFile ends one byte before the end of the file.
type shortFile struct {
	fs.File
	left int64
}

func (f *shortFile) Read(p []byte) (int, error) {
	if f.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > f.left {
		p = p[:f.left]
	}
	n, err := f.File.Read(p)
	f.left -= int64(n)
	return n, err
}

func (b shortReads) Open(ctx context.Context, name string) (fs.File, error) {
	f, err := b.FS.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return &shortFile{File: f, left: info.Size() - 1}, nil
}

// restoresBlindly empties the tree before it reads the stream.
type restoresBlindly struct{ *memfs.FS }

func (b restoresBlindly) Restore(ctx context.Context, r io.Reader) error {
	b.FS.RemoveAll(ctx, "/")
	return b.FS.Restore(ctx, r)
}

// writableReadOnly claims to be read-only but accepts writes.
type writableReadOnly struct{ *memfs.FS }

func TestSuiteCatchesBrokenFS(t *testing.T) {
	type broken struct {
		name  string
		wrap  func(*memfs.FS) semfs.FS
		cases []string // the suite must fail in each of these cases
	}
	all := []broken{
		{"forgets implicit dirs", func(m *memfs.FS) semfs.FS { return forgetsImplicitDirs{m} }, []string{"ImplicitDirs", "ReadDir", "WriteCreatesParents"}},
		{"unsorted ReadDir", func(m *memfs.FS) semfs.FS { return unsortedReadDir{m} }, []string{"ReadDir"}},
		{"wrong sentinel", func(m *memfs.FS) semfs.FS { return wrongSentinel{m} }, []string{"ParentIsFile"}},
		{"TotalSize off by one", func(m *memfs.FS) semfs.FS { return totalOffByOne{m} }, []string{"Accounting", "TotalSizeSeeded", "Files", "RemoveAll"}},
		{"RemoveAll stops at first child", func(m *memfs.FS) semfs.FS { return removeAllFirstChild{m} }, []string{"RemoveAll", "Accounting"}},
		{"leaks host path", func(m *memfs.FS) semfs.FS { return leaksHostPath{m} }, []string{"OpenDirAndMissing", "Remove"}},
		{"cleans bad paths", func(m *memfs.FS) semfs.FS { return cleansBadPaths{m} }, []string{"BadPathsDirect"}},
		{"drops last byte", func(m *memfs.FS) semfs.FS { return dropsLastByte{m} }, []string{"RoundTrip", "ReadSeeded"}},
		{"rename loses children", func(m *memfs.FS) semfs.FS { return renameLosesChildren{m} }, []string{"Rename"}},
		{"opens directories", func(m *memfs.FS) semfs.FS { return opensDirs{m} }, []string{"OpenDirAndMissing", "ImplicitDirs"}},
		{"Files in walk order", func(m *memfs.FS) semfs.FS { return filesInWalkOrder{m} }, []string{"Files"}},
		{"zero ModTime", func(m *memfs.FS) semfs.FS { return zeroModTime{m} }, []string{"FileInfo", "ModTimeUpdated"}},
		{"wrapped errors", func(m *memfs.FS) semfs.FS { return wrapsErrors{m} }, []string{"Remove"}},
		{"removes the root", func(m *memfs.FS) semfs.FS { return removesRoot{m} }, []string{"Remove"}},
		{"ignores O_EXCL", func(m *memfs.FS) semfs.FS { return ignoresExcl{m} }, []string{"OpenFile"}},
		{"ignores O_APPEND", func(m *memfs.FS) semfs.FS { return ignoresAppend{m} }, []string{"OpenFile"}},
		{"restores blindly", func(m *memfs.FS) semfs.FS { return restoresBlindly{m} }, []string{"Snapshot"}},
		{"short reads", func(m *memfs.FS) semfs.FS { return shortReads{m} }, []string{"RoundTrip", "ReadSeeded"}},
	}
	for _, b := range all {
		t.Run(strings.ReplaceAll(b.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			failures := semfstest.Check(func(semfstest.TB) semfs.FS { return b.wrap(memfs.New()) }, semfstest.Writers(2), semfstest.Only(b.cases...))
			failed := map[string]bool{}
			for _, f := range failures {
				failed[f.Case] = true
			}
			for _, c := range b.cases {
				if !failed[c] {
					t.Errorf("the suite did not fail case %s; failures:\n%s", c, join(failures))
				}
			}
		})
	}
}

func TestSuiteCatchesWritableReadOnly(t *testing.T) {
	failures := semfstest.Check(nil, semfstest.ReadOnly(), semfstest.Seed(func(tb semfstest.TB, files map[string][]byte) semfs.FS {
		return writableReadOnly{seedMem(tb, files)}
	}))
	found := false
	for _, f := range failures {
		found = found || f.Case == "ReadOnly"
	}
	if !found {
		t.Fatalf("a tree declared read-only that accepts writes passed the ReadOnly case; failures: %v", failures)
	}
}

func join(fs []semfstest.Failure) string {
	var b strings.Builder
	for i, f := range fs {
		if i == 20 {
			fmt.Fprintf(&b, "  … and %d more\n", len(fs)-i)
			break
		}
		b.WriteString("  " + f.String() + "\n")
	}
	return b.String()
}

// base forwards everything of memfs but Rename and OpenFile; noRename and
// noOpenFile add back one of the two.
type base struct{ m *memfs.FS }

func (b base) Open(ctx context.Context, name string) (fs.File, error) { return b.m.Open(ctx, name) }
func (b base) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	return b.m.Stat(ctx, name)
}
func (b base) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	return b.m.ReadDir(ctx, name)
}
func (b base) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	return b.m.WriteFile(ctx, name, data, perm)
}
func (b base) Mkdir(ctx context.Context, name string, perm fs.FileMode) error {
	return b.m.Mkdir(ctx, name, perm)
}
func (b base) MkdirAll(ctx context.Context, name string, perm fs.FileMode) error {
	return b.m.MkdirAll(ctx, name, perm)
}
func (b base) Remove(ctx context.Context, name string) error    { return b.m.Remove(ctx, name) }
func (b base) RemoveAll(ctx context.Context, name string) error { return b.m.RemoveAll(ctx, name) }

type noRename struct{ base }

func (b noRename) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (semfs.RWFile, error) {
	return b.m.OpenFile(ctx, name, flag, perm)
}

type noOpenFile struct{ base }

func (b noOpenFile) Rename(ctx context.Context, oldname, newname string) error {
	return b.m.Rename(ctx, oldname, newname)
}

func TestMissingCapabilities(t *testing.T) {
	cases := []struct {
		name   string
		newFS  func() semfs.FS
		opt    semfstest.Option
		failed string // the case that fails without opt
	}{
		{"no Rename", func() semfs.FS { return noRename{base{memfs.New()}} }, semfstest.NoRename(), "Rename"},
		{"no OpenFile", func() semfs.FS { return noOpenFile{base{memfs.New()}} }, semfstest.NoOpenFile(), "OpenFile"},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			newFS := func(semfstest.TB) semfs.FS { return c.newFS() }
			if failures := semfstest.Check(newFS, c.opt, semfstest.Writers(2)); len(failures) > 0 {
				t.Errorf("with the option declaring it, the suite fails:\n%s", join(failures))
			}
			failures := semfstest.Check(newFS, semfstest.Writers(2))
			found := false
			for _, f := range failures {
				found = found || f.Case == c.failed
			}
			if !found {
				t.Errorf("without the option, case %s passed; failures:\n%s", c.failed, join(failures))
			}
		})
	}
}

// needsPrincipal refuses Stat to callers without a principal, as an access
// layer would.
type needsPrincipal struct{ *memfs.FS }

func (b needsPrincipal) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	if _, ok := semfs.PrincipalFrom(ctx); !ok {
		return nil, semfs.PathErr("stat", name, semfs.ErrPermission, "no principal")
	}
	return b.FS.Stat(ctx, name)
}

func TestContextOption(t *testing.T) {
	newFS := func(semfstest.TB) semfs.FS { return needsPrincipal{memfs.New()} }
	if failures := semfstest.Check(newFS, semfstest.Writers(2)); len(failures) == 0 {
		t.Fatal("a layer refusing calls without a principal passed without the Context option")
	}
	ctx := semfs.WithPrincipal(context.Background(), semfs.Principal{ID: "test"})
	if failures := semfstest.Check(newFS, semfstest.Writers(2), semfstest.Context(ctx)); len(failures) > 0 {
		t.Fatalf("with a principal in the context the suite fails:\n%s", join(failures))
	}
}

func TestOnly(t *testing.T) {
	all := semfstest.Cases()
	if len(all) < 25 || !slices.Contains(all, "RemoveAll") {
		t.Fatalf("Cases() = %q", all)
	}
	// A broken FS fails the case that covers the break, and Only keeps
	// the other cases from running at all.
	newFS := func(semfstest.TB) semfs.FS { return totalOffByOne{memfs.New()} }
	failures := semfstest.Check(newFS, semfstest.Only("Mkdir"))
	var cases []string
	for _, f := range failures {
		cases = append(cases, f.Case)
	}
	// Mkdir itself does not look at TotalSize; the end-of-case consistency
	// check does.
	if len(failures) == 0 || slices.ContainsFunc(cases, func(c string) bool { return c != "Mkdir" }) {
		t.Fatalf("Only(Mkdir) on an FS with a wrong TotalSize: failures in %q; want only Mkdir", cases)
	}
	if f := semfstest.Check(newFS, semfstest.Only("ReadDir")); len(f) == 0 {
		t.Fatalf("the consistency check did not catch a wrong TotalSize after ReadDir")
	}
}

func TestConsistentExported(t *testing.T) {
	m := memfs.FromMap(map[string]string{"/a/b": "bb", "/c": "c"})
	semfstest.Consistent(t, context.Background(), m)
	rec := &recordingTB{}
	semfstest.Consistent(rec, context.Background(), totalOffByOne{m})
	if len(rec.errs) == 0 {
		t.Fatal("Consistent did not notice a TotalSize that disagrees with the files")
	}
	rec = &recordingTB{}
	semfstest.Consistent(rec, context.Background(), unsortedReadDir{memfs.FromMap(map[string]string{"/a": "", "/b": ""})})
	if len(rec.errs) == 0 {
		t.Fatal("Consistent did not notice an unsorted listing")
	}
}

type recordingTB struct{ errs []string }

func (r *recordingTB) Helper()                   {}
func (r *recordingTB) Logf(string, ...any)       {}
func (r *recordingTB) Errorf(f string, a ...any) { r.errs = append(r.errs, fmt.Sprintf(f, a...)) }
func (r *recordingTB) Fatalf(f string, a ...any) { r.Errorf(f, a...) }
