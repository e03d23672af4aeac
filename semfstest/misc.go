package semfstest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/semfs/semfs"
)

// badPaths are rejected by semfs.Clean.
var badPaths = []string{
	"../x", "/a/../b", "a//b", "a/./b", "/a/", "..", "a\x00b", `a\b`, "",
	"/" + strings.Repeat("n", 256), strings.Repeat("/abcd", 1000), "/\xff\xfe", "a\nb",
}

// writerCalls are the writing helpers, each applied to name.
func writerCalls() map[string]func(ctx context.Context, fsys semfs.FS, name string) error {
	return map[string]func(ctx context.Context, fsys semfs.FS, name string) error{
		"WriteFile": func(ctx context.Context, fsys semfs.FS, name string) error {
			return semfs.WriteFile(ctx, fsys, name, []byte("x"), 0o644)
		},
		"Mkdir": func(ctx context.Context, fsys semfs.FS, name string) error {
			return semfs.Mkdir(ctx, fsys, name, 0o755)
		},
		"MkdirAll": func(ctx context.Context, fsys semfs.FS, name string) error {
			return semfs.MkdirAll(ctx, fsys, name, 0o755)
		},
		"Remove":    func(ctx context.Context, fsys semfs.FS, name string) error { return semfs.Remove(ctx, fsys, name) },
		"RemoveAll": func(ctx context.Context, fsys semfs.FS, name string) error { return semfs.RemoveAll(ctx, fsys, name) },
		"RenameFrom": func(ctx context.Context, fsys semfs.FS, name string) error {
			return semfs.Rename(ctx, fsys, name, "/renamed")
		},
		"RenameTo": func(ctx context.Context, fsys semfs.FS, name string) error {
			return semfs.Rename(ctx, fsys, "/f", name)
		},
		"OpenFile": func(ctx context.Context, fsys semfs.FS, name string) error {
			f, err := semfs.OpenFile(ctx, fsys, name, osCreate, 0o644)
			if err == nil {
				f.Close()
			}
			return err
		},
	}
}

// readerCalls are the reading helpers, each applied to name.
func readerCalls() map[string]func(ctx context.Context, fsys semfs.FS, name string) error {
	return map[string]func(ctx context.Context, fsys semfs.FS, name string) error{
		"Stat": func(ctx context.Context, fsys semfs.FS, name string) error {
			_, err := semfs.Stat(ctx, fsys, name)
			return err
		},
		"ReadDir": func(ctx context.Context, fsys semfs.FS, name string) error {
			_, err := semfs.ReadDir(ctx, fsys, name)
			return err
		},
		"ReadFile": func(ctx context.Context, fsys semfs.FS, name string) error {
			_, err := semfs.ReadFile(ctx, fsys, name)
			return err
		},
		"Files": func(ctx context.Context, fsys semfs.FS, name string) error {
			_, err := semfs.FileList(ctx, fsys, name)
			return err
		},
		"GetMeta": func(ctx context.Context, fsys semfs.FS, name string) error {
			_, err := semfs.GetMeta(ctx, fsys, name)
			return err
		},
	}
}

func testBadPaths(e *env) {
	fsys := e.seeded(map[string]string{"/f": "f", "/a/b": "b", "/a/x": "x"})
	before := e.state(fsys)
	calls := readerCalls()
	for k, v := range writerCalls() {
		calls[k] = v
	}
	for _, name := range slices.Sorted(maps.Keys(calls)) {
		for _, p := range badPaths {
			err := calls[name](e.ctx, fsys, p)
			e.wantErr(err, semfs.ErrInvalid, fmt.Sprintf("%s(%q)", name, clip(p)))
		}
	}
	for _, p := range badPaths {
		if ok, err := semfs.Exists(e.ctx, fsys, p); ok || err != nil {
			e.Errorf("Exists(%q) = %v, %v; want false, nil", clip(p), ok, err)
		}
	}
	e.sameState(fsys, before, "calls with bad paths")
}

// testBadPathsDirect calls the interface methods themselves with bad paths:
// a backend may rely on the helpers having validated, but must not crash,
// must fail with the contract's error shape, and must change nothing.
func testBadPathsDirect(e *env) {
	fsys := e.seeded(map[string]string{"/f": "f", "/a/b": "b", "/a/x": "x"})
	before := e.state(fsys)
	for _, p := range badPaths {
		what := func(m string) string { return fmt.Sprintf("%s(%q) called directly", m, clip(p)) }
		if _, err := fsys.Stat(e.ctx, p); err == nil {
			e.Errorf("%s succeeded", what("Stat"))
		} else {
			e.checkShape(err, what("Stat"))
		}
		if _, err := fsys.ReadDir(e.ctx, p); err == nil {
			e.Errorf("%s succeeded", what("ReadDir"))
		} else {
			e.checkShape(err, what("ReadDir"))
		}
		if _, err := fsys.Open(e.ctx, p); err == nil {
			e.Errorf("%s succeeded", what("Open"))
		} else {
			e.checkShape(err, what("Open"))
		}
		var errs []error
		if w, ok := fsys.(semfs.WriteFileFS); ok {
			errs = append(errs, w.WriteFile(e.ctx, p, []byte("x"), 0o644))
		}
		if m, ok := fsys.(semfs.MkdirAllFS); ok {
			errs = append(errs, m.MkdirAll(e.ctx, p, 0o755))
		}
		if m, ok := fsys.(semfs.MkdirFS); ok {
			errs = append(errs, m.Mkdir(e.ctx, p, 0o755))
		}
		if r, ok := fsys.(semfs.RemoveFS); ok {
			errs = append(errs, r.Remove(e.ctx, p))
		}
		if r, ok := fsys.(semfs.RenameFS); ok {
			errs = append(errs, r.Rename(e.ctx, p, "/renamed"), r.Rename(e.ctx, "/f", p))
		}
		if o, ok := fsys.(semfs.OpenFileFS); ok {
			f, err := o.OpenFile(e.ctx, p, osCreate, 0o644)
			if err == nil {
				f.Close()
			}
			errs = append(errs, err)
		}
		for i, err := range errs {
			if err == nil {
				e.Errorf("writer #%d called directly with %q succeeded", i, clip(p))
			} else {
				e.checkShape(err, what(fmt.Sprintf("writer #%d", i)))
			}
		}
		if r, ok := fsys.(semfs.RemoveAllFS); ok {
			// RemoveAll of a missing path succeeds, so only check that
			// nothing below a look-alike path was removed.
			if err := r.RemoveAll(e.ctx, p); err != nil {
				e.checkShape(err, what("RemoveAll"))
			}
		}
	}
	e.sameState(fsys, before, "direct calls with bad paths")
}

func clip(p string) string {
	if len(p) > 40 {
		return p[:40] + "…"
	}
	return p
}

// payload is the whole contents writer w writes in generation g. Its header
// names w and g, so a reader can tell which payload it must be equal to; the
// sizes differ per writer and cross 64 KiB boundaries, so a mix of two
// writes is caught.
func payload(w, g int) string {
	head := fmt.Sprintf("w=%d g=%d;", w, g)
	n := 500 + w*911 + (g%3)*40000
	const abc = "abcdefghijklmnopqrstuvwxyz"
	rot := (w + g) % len(abc)
	body := strings.Repeat(abc[rot:]+abc[:rot], n/len(abc)+1)
	return head + body[:n-len(head)]
}

// checkPayload reports whether data is exactly one writer's whole payload.
func checkPayload(data []byte) bool {
	var w, g int
	if _, err := fmt.Sscanf(string(data), "w=%d g=%d;", &w, &g); err != nil {
		return false
	}
	return w >= 0 && g >= 0 && bytes.Equal(data, []byte(payload(w, g)))
}

func testConcurrentWriters(e *env) {
	fsys := e.empty()
	// Whole-file atomicity is promised by WriteFileFS; the helper's
	// fallback (OpenFile with O_TRUNC, then Write) cannot promise it, so
	// without WriteFileFS only files with a single writer are checked for
	// whole contents.
	_, atomic := fsys.(semfs.WriteFileFS)
	writers := e.cfg.writers
	const rounds = 40
	e.mkdirAll(fsys, "/shared")
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			own := fmt.Sprintf("/own/w%d", w)
			// Everyone creates the same directories at once: each call
			// must succeed, whoever wins the race.
			if err := semfs.MkdirAll(e.ctx, fsys, "/race/a/b/c", 0o755); err != nil {
				e.Errorf("writer %d: concurrent MkdirAll of the same path: %v", w, err)
			}
			race := fmt.Sprintf("/race/a/b/c/w%d", w)
			if err := semfs.WriteFile(e.ctx, fsys, race, []byte(payload(w, 0)), 0o644); err != nil {
				e.Errorf("writer %d: WriteFile(%s): %v", w, race, err)
			}
			for g := range rounds {
				shared := fmt.Sprintf("/shared/s%d", rng.IntN(4))
				if err := semfs.WriteFile(e.ctx, fsys, shared, []byte(payload(w, g)), 0o644); err != nil {
					e.Errorf("writer %d: WriteFile(%s): %v", w, shared, err)
					return
				}
				mine := fmt.Sprintf("%s/f%d", own, g%5)
				if err := semfs.WriteFile(e.ctx, fsys, mine, []byte(payload(w, g)), 0o644); err != nil {
					e.Errorf("writer %d: WriteFile(%s): %v", w, mine, err)
					return
				}
				other := fmt.Sprintf("/shared/s%d", rng.IntN(4))
				if data, err := semfs.ReadFile(e.ctx, fsys, other); err == nil {
					if atomic && !checkPayload(data) {
						e.Errorf("writer %d: %s holds %s: not one writer's whole bytes", w, other, short(string(data)))
					}
				} else if !errors.Is(err, semfs.ErrNotExist) {
					e.Errorf("writer %d: ReadFile(%s): %v", w, other, err)
				}
				entries, err := semfs.ReadDir(e.ctx, fsys, "/shared")
				if err != nil {
					e.Errorf("writer %d: ReadDir(/shared): %v", w, err)
				} else if !slices.IsSortedFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) }) {
					e.Errorf("writer %d: ReadDir(/shared) not sorted", w)
				}
				if !e.cfg.noRename && g%3 == 0 {
					from := fmt.Sprintf("/shared/s%d", rng.IntN(4))
					to := fmt.Sprintf("/shared/s%d", rng.IntN(4))
					if err := semfs.Rename(e.ctx, fsys, from, to); err != nil && !errors.Is(err, semfs.ErrNotExist) {
						e.Errorf("writer %d: Rename(%s, %s): %v", w, from, to, err)
					}
					err := semfs.Rename(e.ctx, fsys, mine, fmt.Sprintf("%s/r%d", own, g%5))
					if err != nil {
						e.Errorf("writer %d: Rename of its own file: %v", w, err)
					}
				}
				if g%7 == 0 {
					if err := semfs.Remove(e.ctx, fsys, fmt.Sprintf("/shared/s%d", rng.IntN(4))); err != nil && !errors.Is(err, semfs.ErrNotExist) {
						e.Errorf("writer %d: Remove: %v", w, err)
					}
				}
				if g%11 == 5 {
					if err := semfs.RemoveAll(e.ctx, fsys, own+"/sub"); err != nil {
						e.Errorf("writer %d: RemoveAll: %v", w, err)
					}
					if err := semfs.WriteFile(e.ctx, fsys, own+"/sub/deep/x", []byte(payload(w, g)), 0o644); err != nil {
						e.Errorf("writer %d: WriteFile below a removed dir: %v", w, err)
					}
				}
				if n, err := semfs.TotalSize(e.ctx, fsys); err != nil || n < 0 {
					e.Errorf("writer %d: TotalSize = %d, %v", w, n, err)
				}
			}
		})
	}
	wg.Wait()
	var sum int64
	files := e.files(fsys, "/")
	for _, p := range files {
		data, err := semfs.ReadFile(e.ctx, fsys, p)
		if err != nil {
			e.Errorf("after the writers: ReadFile(%s): %v", p, err)
			continue
		}
		if (atomic || !strings.HasPrefix(p, "/shared/")) && !checkPayload(data) {
			e.Errorf("after the writers: %s holds %s: not one writer's whole bytes", p, short(string(data)))
		}
		if info := e.stat(fsys, p); info.Size() != int64(len(data)) {
			e.Errorf("after the writers: Stat(%s).Size() = %d; it holds %d bytes", p, info.Size(), len(data))
		}
		sum += int64(len(data))
	}
	if got := e.names(fsys, "/race/a/b/c"); len(got) != writers {
		e.Errorf("after concurrent MkdirAll + WriteFile: /race/a/b/c lists %d names; want %d", len(got), writers)
	}
	for w := range writers {
		// Each writer's own files are exactly what it last wrote there.
		own := fmt.Sprintf("/own/w%d", w)
		for _, p := range e.files(fsys, own) {
			data := e.read(fsys, p)
			var ww, gg int
			fmt.Sscanf(data, "w=%d g=%d;", &ww, &gg)
			if ww != w {
				e.Errorf("%s holds writer %d's bytes", p, ww)
			}
		}
	}
	if n := e.totalSize(fsys); n != sum {
		e.Errorf("after the writers: TotalSize = %d; the files hold %d", n, sum)
	}
}

func testConcurrentReaders(e *env) {
	files := fixture()
	fsys := e.seeded(files)
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Go(func() {
			for i := range 20 {
				for _, p := range []string{"/docs/a.md", "/bin/nul", "/one"} {
					data, err := semfs.ReadFile(e.ctx, fsys, p)
					if err != nil || string(data) != files[p] {
						e.Errorf("reader %d round %d: ReadFile(%s) = %d bytes, %v", r, i, p, len(data), err)
					}
				}
				if _, err := semfs.ReadDir(e.ctx, fsys, "/docs"); err != nil {
					e.Errorf("reader %d: ReadDir: %v", r, err)
				}
				if _, err := semfs.FileList(e.ctx, fsys, "/"); err != nil {
					e.Errorf("reader %d: Files: %v", r, err)
				}
			}
		})
	}
	wg.Wait()
}

// cancelOK checks an error returned under a cancelled context: nil, or the
// contract's shape wrapping context.Canceled or a sentinel.
func (e *env) cancelOK(err error, what string) {
	e.Helper()
	if err == nil {
		return
	}
	e.checkShape(err, what)
	if !errors.Is(err, context.Canceled) && semfs.Sentinel(err) == nil {
		e.Errorf("%s: error %q wraps neither context.Canceled nor a sentinel", what, err)
	}
}

func testCancelled(e *env) {
	fsys := e.empty()
	e.write(fsys, "/c/a", "old")
	e.write(fsys, "/c/d/x", "x")
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	e.cancelOK(semfs.WriteFile(ctx, fsys, "/c/a", []byte("new"), 0o644), "WriteFile")
	e.cancelOK(semfs.WriteFile(ctx, fsys, "/c/n/new", []byte("new"), 0o644), "WriteFile")
	e.cancelOK(semfs.MkdirAll(ctx, fsys, "/c/m/n", 0o755), "MkdirAll")
	e.cancelOK(semfs.RemoveAll(ctx, fsys, "/c/d"), "RemoveAll")
	if !e.cfg.noRename {
		e.cancelOK(semfs.Rename(ctx, fsys, "/c/a", "/c/b"), "Rename")
	}
	if !e.cfg.noOpenFile {
		f, err := semfs.OpenFile(ctx, fsys, "/c/o", osCreate, 0o644)
		e.cancelOK(err, "OpenFile")
		if err == nil {
			f.Write([]byte("o"))
			f.Close()
		}
	}
	for _, err := range semfs.Files(ctx, fsys, "/") {
		e.cancelOK(err, "Files")
	}
	_, err := semfs.TotalSize(ctx, fsys)
	if err != nil && !errors.Is(err, context.Canceled) {
		e.Errorf("TotalSize under a cancelled context: %v", err)
	}
	// Whatever happened, the tree is consistent and usable.
	st := e.state(fsys)
	for p, v := range st {
		switch p {
		case "/c/a", "/c/b":
			if v.data != "old" && v.data != "new" {
				e.Errorf("%s holds %q; want old or new", p, v.data)
			}
		case "/c/d/x":
			if v.data != "x" {
				e.Errorf("%s holds %q; want x", p, v.data)
			}
		}
	}
	if _, a := st["/c/a"]; !a {
		if _, b := st["/c/b"]; !b {
			e.Errorf("/c/a is gone and was not renamed to /c/b")
		}
	}
	var sum int64
	for _, v := range st {
		sum += int64(len(v.data))
	}
	if n := e.totalSize(fsys); n != sum {
		e.Errorf("TotalSize = %d; the tree holds %d", n, sum)
	}
	e.write(fsys, "/c/after", "after")
	e.wantContent(fsys, "/c/after", "after")
}

func testCancelledRead(e *env) {
	fsys := e.seeded(map[string]string{"/r/a": "a"})
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	for name, call := range readerCalls() {
		e.cancelOK(call(ctx, fsys, "/r/a"), name)
	}
	_, err := fsys.Open(ctx, "/r/a")
	e.cancelOK(err, "Open")
	e.wantContent(fsys, "/r/a", "a")
}

func testReadOnly(e *env) {
	fsys := e.seeded(map[string]string{"/f": "f", "/d/g": "g"})
	before := e.state(fsys)
	calls := writerCalls()
	for _, name := range slices.Sorted(maps.Keys(calls)) {
		for _, p := range []string{"/f", "/d", "/d/g", "/new", "/d/new"} {
			err := calls[name](e.ctx, fsys, p)
			if name == "RemoveAll" && err == nil && (p == "/new" || p == "/d/new") {
				continue // RemoveAll of a missing path may report success
			}
			if name == "MkdirAll" && (p == "/f" || p == "/d" || p == "/d/g") {
				continue // MkdirAll of an existing path answers from Stat
			}
			e.wantErrAny(err, fmt.Sprintf("%s(%s) on a read-only tree", name, p), []error{semfs.ErrReadOnly}, p, "/f", "/renamed")
		}
	}
	e.sameState(fsys, before, "writes to a read-only tree")
}
