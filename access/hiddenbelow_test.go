package access_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/hostfs"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/meta"
)

// belowStacks returns trees holding /q3.txt (restricted to finance) and
// /pub0.txt … /pub9.txt (public), through the access layer: the metadata
// layer over a host directory (visibility from access.VisibilityFS) and a
// tagged memfs (visibility from Meta, file by file).
func belowStacks(t *testing.T) map[string]*access.FS {
	files := map[string]string{"/q3.txt": "zanzibar revenue\n"}
	for i := range 10 {
		files["/pub"+string(rune('0'+i))+".txt"] = "public\n"
	}
	tg := newTagged(files)
	tg.hide("/q3.txt", "finance")

	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	host, err := hostfs.Open(data, hostfs.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := sqlite.Open(ctx, filepath.Join(dir, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := meta.New(host, ix, meta.Options{Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); ix.Close(); host.Close() })
	for p, d := range files {
		if err := m.WriteFile(ctx, p, []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.SetTags(ctx, "/q3.txt", semfs.Tags{Groups: []string{"finance"}}); err != nil {
		t.Fatal(err)
	}
	hooked := newTagged(files) // its tags are not asked: the hook decides
	return map[string]*access.FS{
		"meta+hostfs":  access.New(m, access.Policy{}),
		"tagged memfs": access.New(tg, access.Policy{}),
		"visible hook": access.New(hooked, access.Policy{Visible: func(ctx context.Context, p string) (bool, error) {
			pr, _ := semfs.PrincipalFrom(ctx)
			return p != "/q3.txt" || pr.InGroup([]string{"finance"}), nil
		}}),
	}
}

var (
	discard = slog.New(slog.DiscardHandler)
	pubs    = regexp.MustCompile(`/pub[0-9]\.txt`) // sources of renames
)

// TestBelowHiddenFileIsAbsent: a path below a file hidden from the caller
// gets the answer a path below an absent name gets, on every entry point
// that takes a path: the inner tree's "not a directory" would tell that a
// file is there (HTTP answered 409 not_dir, against 404).
//
// Creating below a hidden file cannot succeed as it would below an absent
// name (the directory cannot be made); it fails with ErrNotExist, as a
// create in a directory that does not exist does, never ErrNotDir.
func TestBelowHiddenFileIsAbsent(t *testing.T) {
	bob := semfs.WithPrincipal(ctx, semfs.Principal{ID: "bob", Groups: []string{"eng"}})
	for name, acc := range belowStacks(t) {
		t.Run(name, func(t *testing.T) {
			n := 0
			// same runs op on the path below the hidden file, then below
			// an absent name (a new one each time), and wants the same
			// answer, names aside.
			same := func(what string, op func(below string) error) {
				t.Helper()
				n++
				absent := "/none" + string(rune('a'+n)) + ".txt"
				hid := op("/q3.txt")
				miss := op(absent)
				want := ""
				if miss != nil {
					want = pubs.ReplaceAllString(strings.ReplaceAll(miss.Error(), absent, "/q3.txt"), "/pub.txt")
				}
				if (hid == nil) != (miss == nil) || (hid != nil && pubs.ReplaceAllString(hid.Error(), "/pub.txt") != want) ||
					semfs.Sentinel(hid) != semfs.Sentinel(miss) {
					t.Errorf("%s: below the hidden file %v; below an absent name %v", what, hid, miss)
				}
				if hid != nil && errors.Is(hid, semfs.ErrNotDir) {
					t.Errorf("%s: %v tells a file is there", what, hid)
				}
			}
			// created runs a create below the hidden file, which must fail
			// with ErrNotExist, and below an absent name, which succeeds.
			created := func(what, op string, do func(below string) error) {
				t.Helper()
				n++
				err := do("/q3.txt")
				wantMsg := op + " /q3.txt/x: file does not exist"
				if err == nil || !errors.Is(err, semfs.ErrNotExist) || err.Error() != wantMsg {
					t.Errorf("%s below the hidden file: %v, want %q", what, err, wantMsg)
				}
				if err := do("/none" + string(rune('a'+n)) + ".txt"); err != nil {
					t.Errorf("%s below an absent name: %v", what, err)
				}
			}
			same("stat below", func(d string) error { _, err := acc.Stat(bob, d+"/x"); return err })
			same("stat deeper", func(d string) error { _, err := acc.Stat(bob, d+"/x/y"); return err })
			same("readdir", func(d string) error { _, err := acc.ReadDir(bob, d); return err })
			same("readdir below", func(d string) error { _, err := acc.ReadDir(bob, d+"/x"); return err })
			same("open below", func(d string) error { _, err := acc.Open(bob, d+"/x"); return err })
			same("readfile below", func(d string) error { _, err := acc.ReadFile(bob, d+"/x"); return err })
			same("openfile read below", func(d string) error { _, err := acc.OpenFile(bob, d+"/x", os.O_RDONLY, 0); return err })
			same("openfile write below", func(d string) error { _, err := acc.OpenFile(bob, d+"/x", os.O_WRONLY, 0); return err })
			same("openfile create below", func(d string) error {
				f, err := acc.OpenFile(bob, d+"/x", os.O_WRONLY|os.O_CREATE, 0o644)
				if err == nil {
					f.Close()
				}
				return err
			})
			same("meta below", func(d string) error { _, err := acc.Meta(bob, d+"/x"); return err })
			same("tag below", func(d string) error { return acc.SetTags(bob, d+"/x", semfs.Tags{Task: "t"}) })
			same("remove below", func(d string) error { return acc.Remove(bob, d+"/x") })
			same("removeall below", func(d string) error { return acc.RemoveAll(bob, d+"/x") })
			same("mkdir below", func(d string) error { return acc.Mkdir(bob, d+"/x", 0o755) })
			same("files below", func(d string) error {
				for _, err := range acc.Files(bob, d+"/x") {
					if err != nil {
						return err
					}
				}
				return nil
			})
			same("related below", func(d string) error { _, err := acc.Related(bob, d+"/x", 0); return err })
			same("grep below", func(d string) error {
				_, _, err := acc.GrepCandidates(bob, d+"/x", "zanzibar", semfs.GrepOptions{})
				return err
			})
			same("rename from below", func(d string) error { return acc.Rename(bob, d+"/x", "/moved.txt") })
			i := 0
			same("rename to below", func(d string) error {
				i++
				src := "/pub" + string(rune('0'+i)) + ".txt"
				return acc.Rename(bob, src, d+"/x")
			})
			if ok, err := acc.Exists(bob, "/q3.txt/x"); ok || err != nil {
				t.Errorf("exists below: %v, %v", ok, err)
			}
			created("write below", "write", func(d string) error { return acc.WriteFile(bob, d+"/x", []byte("x"), 0o644) })
			created("mkdirall below", "mkdir", func(d string) error { return acc.MkdirAll(bob, d+"/x", 0o755) })
			// Nothing changed the hidden file; its group still sees it.
			fin := semfs.WithPrincipal(ctx, semfs.Principal{ID: "fay", Groups: []string{"finance"}})
			if b, err := acc.ReadFile(fin, "/q3.txt"); err != nil || string(b) != "zanzibar revenue\n" {
				t.Errorf("finance reads /q3.txt: %q, %v", b, err)
			}
			// For those who see the file, "not a directory" is the answer.
			if _, err := acc.Stat(fin, "/q3.txt/x"); !errors.Is(err, semfs.ErrNotDir) {
				t.Errorf("finance stats /q3.txt/x: %v, want not-a-directory", err)
			}
		})
	}
}
