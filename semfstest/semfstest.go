// Package semfstest is the conformance suite of the semfs contract: every
// backend, every layer stack and every front end that exposes a [semfs.FS]
// runs it.
//
// The suite is the executable form of the contract. It covers the cases a
// real agent finds: writing through a path whose parent is a file, listing a
// directory that exists only because something below it does, removing a
// subtree without touching its siblings, the byte accounting a quota depends
// on, bad paths, the shape of every error, open-file flags, and concurrent
// writers.
//
// Use it from a test:
//
//	func TestConformance(t *testing.T) {
//		semfstest.Run(t, func(t *testing.T) semfs.FS { return memfs.New() })
//	}
//
// A read-only backend passes [ReadOnly] and a [Seed] function that builds a
// tree holding given files; the suite then checks every read against the
// seeded files and that every writer fails with [semfs.ErrReadOnly].
//
// Capabilities are detected by type assertion, as the root helpers do: the
// suite calls the helpers (semfs.WriteFile, semfs.RemoveAll, ...) and, where
// the FS implements a capability, the interface method directly. A tree
// without RenameFS or OpenFileFS declares it with [NoRename] or
// [NoOpenFile]; SnapshotFS is checked when present. A layer that reads the
// principal from the context gets one through [Context]. Whole-file
// atomicity under concurrent writers is checked only when the tree
// implements WriteFileFS (the helper's OpenFile fallback cannot promise it).
//
// Each case runs on fresh trees from newFS; a failure names the case, so
// `go test -run 'TestConformance/RemoveAll'` reruns one. [Cases] lists them.
//
// # Fixed choices
//
// The contract leaves a few outcomes to the suite, which fixes them:
// removing the root fails with ErrInvalid; moving or replacing the root with
// Rename fails with ErrInvalid; Mkdir of the root fails with ErrExist;
// RemoveAll of a missing path succeeds, of a path below a file fails with
// ErrNotDir (as os.RemoveAll does), and of the root empties the tree; Stat,
// Open and Remove of a path below a file fail with ErrNotDir or
// ErrNotExist; a read-only handle refuses writes and a write-only handle
// refuses reads, and every operation on a closed file fails, each with a
// *fs.PathError; Restore of a damaged stream fails with a *fs.PathError and
// changes nothing.
// The interface methods themselves, called with a path Clean rejects, must
// fail with a *fs.PathError (any sentinel) and change nothing: a backend
// that "succeeds" on "../x" may be reaching outside its tree.
//
// At the end of every case the suite checks that the views of each tree it
// made agree (see [Consistent]): every listing is sorted and matches Stat,
// Files lists exactly the regular files a walk finds, and TotalSize is the
// sum of their sizes.
//
// # Testing the suite
//
// [Check] runs the same cases without a *testing.T and returns the failures,
// so the suite's own tests assert that deliberately broken file systems
// fail it.
package semfstest

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/semfs/semfs"
)

// TB is the part of testing.TB the suite uses; *testing.T satisfies it.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
}

// Option configures the suite.
type Option func(*config)

type config struct {
	readOnly   bool
	seed       func(tb TB, files map[string][]byte) semfs.FS
	noRename   bool
	noOpenFile bool
	writers    int
	ctx        context.Context
	only       []string
	parallel   bool
}

// ReadOnly declares that the FS has no writers: the suite writes nothing,
// checks that every writing helper fails with ErrReadOnly, and runs its read
// cases on trees built by [Seed], which is then required.
func ReadOnly() Option { return func(c *config) { c.readOnly = true } }

// Seed gives the suite a way to build a tree that already holds files (tree
// path → contents) before the FS is opened — for read-only backends, whose
// trees the suite cannot write. When given to a writable backend too, the
// read cases use it instead of semfs.WriteFile.
func Seed(fn func(tb TB, files map[string][]byte) semfs.FS) Option {
	return func(c *config) { c.seed = fn }
}

// NoRename declares that the FS does not move files: every Rename must fail
// (with ErrReadOnly or ErrPermission) and leave the tree unchanged.
func NoRename() Option { return func(c *config) { c.noRename = true } }

// NoOpenFile declares that the FS has no random-access writers: OpenFile
// must fail with ErrReadOnly, and WriteFile must work without it.
func NoOpenFile() Option { return func(c *config) { c.noOpenFile = true } }

// Writers sets the number of goroutines of the concurrency case (default 8).
func Writers(n int) Option { return func(c *config) { c.writers = n } }

// Parallel runs the cases of [Run] as parallel subtests (t.Parallel), for
// backends whose calls mostly wait (a network store, a FUSE mount). newFS
// must then give each case a tree of its own that shares nothing with the
// others.
func Parallel() Option { return func(c *config) { c.parallel = true } }

// Only restricts the suite to the named cases (as listed by [Cases]), for
// debugging a backend and for the suite's own tests. A conformance test
// runs every case.
func Only(cases ...string) Option { return func(c *config) { c.only = cases } }

// Cases returns the names of every case of the suite, in the order they run.
func Cases() []string {
	var out []string
	for _, c := range allCases() {
		out = append(out, c.name)
	}
	return out
}

// Context sets the context every call of the suite runs with (default
// context.Background()); a layer that reads the principal from the context
// (semfs.WithPrincipal) passes one here.
func Context(ctx context.Context) Option { return func(c *config) { c.ctx = ctx } }

func configure(opts []Option) *config {
	c := &config{writers: 8, ctx: context.Background()}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Run runs the conformance suite, one subtest per case. newFS returns a new,
// empty FS for each case (for a read-only FS with [Seed], it is not called).
func Run(t *testing.T, newFS func(t *testing.T) semfs.FS, opts ...Option) {
	t.Helper()
	cfg := configure(opts)
	if cfg.readOnly && cfg.seed == nil {
		t.Fatal("semfstest: ReadOnly needs a Seed option to build trees to read")
	}
	for _, c := range selected(cfg) {
		t.Run(c.name, func(t *testing.T) {
			if cfg.parallel {
				t.Parallel()
			}
			e := &env{TB: t, cfg: cfg, ctx: cfg.ctx, newFS: func() semfs.FS { return newFS(t) }}
			c.run(e)
			for _, fsys := range e.trees {
				e.consistent(fsys)
			}
		})
	}
}

// Consistent checks that the views of fsys agree, as the suite does at the
// end of every case: every listing is sorted without duplicates and matches
// Stat, Files lists exactly the regular files a walk finds, and TotalSize
// is the sum of their sizes. Layers and backends can call it at the end of
// their own tests.
func Consistent(tb TB, ctx context.Context, fsys semfs.FS) {
	tb.Helper()
	e := &env{TB: tb, cfg: configure(nil), ctx: ctx}
	e.consistent(fsys)
}

// Failure is one failed case reported by [Check].
type Failure struct {
	Case    string
	Message string
}

func (f Failure) String() string { return f.Case + ": " + f.Message }

// Check runs every case of the suite on file systems made by newFS and
// returns the failures (nil if the FS conforms). It exists to test the suite
// itself against broken file systems; backends use [Run].
func Check(newFS func(tb TB) semfs.FS, opts ...Option) []Failure {
	cfg := configure(opts)
	var out []Failure
	if cfg.readOnly && cfg.seed == nil {
		return []Failure{{Case: "config", Message: "ReadOnly needs a Seed option"}}
	}
	for _, c := range selected(cfg) {
		rec := &recorder{}
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer func() {
				if r := recover(); r != nil {
					rec.Errorf("panic: %v", r)
				}
			}()
			e := &env{TB: rec, cfg: cfg, ctx: cfg.ctx, newFS: func() semfs.FS { return newFS(rec) }}
			c.run(e)
			for _, fsys := range e.trees {
				e.consistent(fsys)
			}
		}()
		<-done
		for _, m := range rec.msgs {
			out = append(out, Failure{Case: c.name, Message: m})
		}
	}
	return out
}

// recorder is a TB that records failures; Fatalf ends the goroutine of the
// case as testing.T.FailNow does.
type recorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) Helper()             {}
func (r *recorder) Logf(string, ...any) {}
func (r *recorder) Errorf(f string, a ...any) {
	r.mu.Lock()
	r.msgs = append(r.msgs, fmt.Sprintf(f, a...))
	r.mu.Unlock()
}
func (r *recorder) Fatalf(f string, a ...any) { r.Errorf(f, a...); runtime.Goexit() }

// testCase is one named check of the contract.
type testCase struct {
	name string
	// mode says which trees the case applies to.
	mode caseMode
	run  func(e *env)
}

type caseMode int

const (
	anyFS      caseMode = iota // read cases: run on seeded trees, writable or not
	writeFS                    // needs writers
	readOnlyFS                 // only for ReadOnly trees
)

func selected(cfg *config) []testCase {
	var out []testCase
	for _, c := range allCases() {
		if len(cfg.only) > 0 && !slices.Contains(cfg.only, c.name) {
			continue
		}
		switch {
		case c.mode == anyFS,
			c.mode == writeFS && !cfg.readOnly,
			c.mode == readOnlyFS && cfg.readOnly:
			out = append(out, c)
		}
	}
	return out
}

func allCases() []testCase {
	return []testCase{
		{"RoundTrip", writeFS, testRoundTrip},
		{"Overwrite", writeFS, testOverwrite},
		{"WriteCreatesParents", writeFS, testWriteCreatesParents},
		{"ParentIsFile", writeFS, testParentIsFile},
		{"ReadSeeded", anyFS, testReadSeeded},
		{"ImplicitDirs", anyFS, testImplicitDirs},
		{"ReadDir", anyFS, testReadDir},
		{"ReadDirLarge", anyFS, testReadDirLarge},
		{"OddNames", anyFS, testOddNames},
		{"ListingsFollowWrites", writeFS, testListingsFollowWrites},
		{"OpenDirAndMissing", anyFS, testOpenDirAndMissing},
		{"FileInfo", anyFS, testFileInfo},
		{"ModTimeUpdated", writeFS, testModTimeUpdated},
		{"Mkdir", writeFS, testMkdir},
		{"Remove", writeFS, testRemove},
		{"RemoveAll", writeFS, testRemoveAll},
		{"Rename", writeFS, testRename},
		{"OpenFile", writeFS, testOpenFile},
		{"OpenFileReadWrite", writeFS, testOpenFileReadWrite},
		{"Accounting", writeFS, testAccounting},
		{"Files", anyFS, testFiles},
		{"TotalSizeSeeded", anyFS, testTotalSizeSeeded},
		{"BadPaths", anyFS, testBadPaths},
		{"BadPathsDirect", anyFS, testBadPathsDirect},
		{"ConcurrentWriters", writeFS, testConcurrentWriters},
		{"ConcurrentReaders", anyFS, testConcurrentReaders},
		{"IOFS", anyFS, testIOFS},
		{"Cancelled", writeFS, testCancelled},
		{"CancelledRead", anyFS, testCancelledRead},
		{"Snapshot", writeFS, testSnapshot},
		{"ReadOnly", readOnlyFS, testReadOnly},
	}
}
