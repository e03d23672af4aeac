package daemon_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/daemon"
	"github.com/semfs/semfs/wire"
)

// mountedInProcess starts an in-process mounting daemon that keeps its
// capabilities (so that the kernel accepts passthrough when run as root),
// with extra flags. It returns the mount point, the daemon's control socket,
// a client of it and the daemon's log.
func mountedInProcess(t *testing.T, extra ...string) (mnt, sock string, c *client.Client, log *lockedWriter) {
	t.Helper()
	mnt, c, d, log := mountInProcess(t, t.TempDir(), extra...)
	return mnt, d.Config.Socket, c, log
}

// mountInProcess starts an in-process mounting daemon over dir (its data,
// index, socket and mount point below it) with extra flags, and returns
// the mount point, a client of the daemon, the daemon and its log.
func mountInProcess(t *testing.T, dir string, extra ...string) (mnt string, c *client.Client, d *daemon.Main, log *lockedWriter) {
	t.Helper()
	needFUSE(t)
	mnt = filepath.Join(dir, "mnt")
	args := append([]string{"-mode", "mount", "-mount", mnt, "-drop-caps=false", "-data", dir + "/data",
		"-index", dir + "/index/index.db", "-socket", dir + "/run/semfs.sock"}, extra...)
	cfg, err := daemon.ParseConfig(args, func(string) string { return "" }, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	log = &lockedWriter{w: &bytes.Buffer{}}
	d = &daemon.Main{Config: cfg, Logger: slog.New(slog.NewTextHandler(log, nil))}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	c = client.New(cfg.Socket)
	t.Cleanup(func() { c.Close() })
	return mnt, c, d, log
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

// TestMountSeesChangesBehindIt changes files through the control socket
// while the mount caches them (pages kept across opens, attributes and
// names for a minute) and checks that the mount shows each change as soon
// as the socket call returned: a whole-file write, an in-place write to a
// file open through the mount, a rename and a removal.
func TestMountSeesChangesBehindIt(t *testing.T) {
	for _, pt := range []bool{true, false} {
		t.Run(map[bool]string{true: "passthrough", false: "through-daemon"}[pt], func(t *testing.T) {
			mnt, _, c, log := mountedInProcess(t, fmt.Sprintf("-passthrough=%v", pt))
			if !strings.Contains(log.String(), fmt.Sprintf("passthrough=%v", pt && os.Geteuid() == 0)) {
				t.Errorf("daemon log does not say passthrough=%v:\n%s", pt && os.Geteuid() == 0, log)
			}
			ctx := context.Background()
			remote := c.FS()
			want := func(name, data string) {
				t.Helper()
				p := filepath.Join(mnt, name)
				if info, err := os.Stat(p); err != nil || info.Size() != int64(len(data)) {
					t.Fatalf("stat %s through the mount = %v, %v; want size %d", name, info, err, len(data))
				}
				if got, err := os.ReadFile(p); err != nil || string(got) != data {
					t.Fatalf("read %s through the mount = %q, %v; want %q", name, got, err, data)
				}
			}
			if err := os.WriteFile(filepath.Join(mnt, "a.txt"), []byte("first"), 0o644); err != nil {
				t.Fatal(err)
			}
			want("a.txt", "first")
			want("a.txt", "first")

			if err := semfs.WriteFile(ctx, remote, "/a.txt", []byte("second, and longer"), 0o644); err != nil {
				t.Fatal(err)
			}
			want("a.txt", "second, and longer")

			open, err := os.Open(filepath.Join(mnt, "a.txt"))
			if err != nil {
				t.Fatal(err)
			}
			defer open.Close()
			io.ReadAll(open)
			w, err := semfs.OpenFile(ctx, remote, "/a.txt", os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.WriteAt([]byte("SECOND"), 0); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			want("a.txt", "SECOND, and longer")
			if got, err := io.ReadAll(io.NewSectionReader(open, 0, 100)); err != nil || string(got) != "SECOND, and longer" {
				t.Fatalf("a handle open through the mount reads %q, %v after the socket write", got, err)
			}

			if err := semfs.Rename(ctx, remote, "/a.txt", "/b.txt"); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(mnt, "a.txt")); !os.IsNotExist(err) {
				t.Fatalf("old name after a rename through the socket: %v; want ENOENT", err)
			}
			want("b.txt", "SECOND, and longer")

			if err := semfs.Remove(ctx, remote, "/b.txt"); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(mnt, "b.txt")); !os.IsNotExist(err) {
				t.Fatalf("a file removed through the socket: %v; want ENOENT", err)
			}

			// Listings, which the kernel keeps too.
			list := func(dir string) string {
				t.Helper()
				ents, err := os.ReadDir(filepath.Join(mnt, dir))
				if err != nil {
					t.Fatal(err)
				}
				var s []string
				for _, e := range ents {
					s = append(s, e.Name())
				}
				return strings.Join(s, " ")
			}
			list("")
			if got := list(""); got != "" {
				t.Fatalf("root lists %q; want nothing", got)
			}
			if err := semfs.MkdirAll(ctx, remote, "/d/e", 0o755); err != nil {
				t.Fatal(err)
			}
			if got := list(""); got != "d" {
				t.Fatalf("root after a mkdir -p through the socket lists %q", got)
			}
			list("d")
			if err := semfs.WriteFile(ctx, remote, "/d/w.txt", []byte("w"), 0o644); err != nil {
				t.Fatal(err)
			}
			nf, err := semfs.OpenFile(ctx, remote, "/d/o.txt", os.O_WRONLY|os.O_CREATE, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			if got := list("d"); got != "e o.txt w.txt" {
				t.Fatalf("d lists %q after files were created through the socket", got)
			}
			nf.Close()
		})
	}
}

// TestPassthroughWritesIndexed writes through the mount — a new file, then
// an in-place change through a descriptor opened O_RDWR without O_TRUNC —
// and checks that the index holds each version's hash after close and
// that content search finds the new words, whether the daemon or (as root,
// by passthrough) the kernel wrote the bytes.
func TestPassthroughWritesIndexed(t *testing.T) {
	for _, pt := range []bool{true, false} {
		t.Run(map[bool]string{true: "passthrough", false: "through-daemon"}[pt], func(t *testing.T) {
			mnt, sock, c, _ := mountedInProcess(t, fmt.Sprintf("-passthrough=%v", pt))
			rewriteInPlace(t, mnt, c)
			// A registered app's child writes through the mount: the
			// file is the app's, though the kernel wrote its bytes.
			app := filepath.Join(mnt, "app.txt")
			runAppProc(t, &proc{sock: sock}, "notes", app+"=written by notes")
			if got := waitCreatedBy(t, c, "/app.txt"); got != "notes" {
				t.Errorf("created_by of a file a registered app wrote = %q; want notes", got)
			}
			waitHash(t, c, "/app.txt", []byte("written by notes"))
		})
	}
}

// rewriteInPlace writes /notes.txt through the mount at mnt, then
// rewrites a word of it in place through a second open, and checks that
// the row carries the new bytes' hash and the writer's uid as created_by,
// and that content search finds the new word. It returns the file's host
// path through the mount and its bytes.
func rewriteInPlace(t *testing.T, mnt string, c *client.Client) (string, []byte) {
	t.Helper()
	p := filepath.Join(mnt, "notes.txt")
	v1 := []byte(strings.Repeat("an ordinary line of notes\n", 2000))
	if err := os.WriteFile(p, v1, 0o644); err != nil {
		t.Fatal(err)
	}
	waitHash(t, c, "/notes.txt", v1)
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("zebrafinch "), 26*1000); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	v2 := bytes.Clone(v1)
	copy(v2[26*1000:], "zebrafinch ")
	st := waitHash(t, c, "/notes.txt", v2)
	if want := fmt.Sprintf("uid:%d", os.Getuid()); st.Meta.CreatedBy != want {
		t.Errorf("created_by = %q; want %q", st.Meta.CreatedBy, want)
	}
	hits, _, err := c.Search(context.Background(), semfs.SearchRequest{Query: "zebrafinch"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Path != "/notes.txt" {
		t.Errorf("search for a word written in place: %+v; want /notes.txt first", hits)
	}
	return p, v2
}

// waitHash waits until the index row of p carries the hash of data.
func waitHash(t *testing.T, c *client.Client, p string, data []byte) wire.Stat {
	t.Helper()
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := c.Stat(context.Background(), p)
		if err == nil && st.Meta != nil && st.Meta.Hash == want {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("row of %s never got the written bytes' hash: %+v, %v", p, st.Meta, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
