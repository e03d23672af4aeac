package daemon_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/daemon"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/semfstest"
	"github.com/semfs/semfs/wire"
)

// TestMain doubles as the helper processes the tests start: a daemon
// (SEMFS_TEST_ROLE=daemon, configured from the environment), an app that
// registers and writes through the mount (SEMFS_TEST_ROLE=app), and a
// session registered with a token (SEMFS_TEST_ROLE=session, see runSession).
func TestMain(m *testing.M) {
	switch os.Getenv("SEMFS_TEST_ROLE") {
	case "daemon":
		os.Exit(runDaemon())
	case "app":
		os.Exit(runApp())
	case "session":
		os.Exit(runSession())
	case "connector":
		os.Exit(runConnector())
	case "holder":
		os.Exit(runHolder())
	}
	os.Exit(m.Run())
}

func runDaemon() int {
	cfg, err := daemon.ParseConfig(nil, nil, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d := &daemon.Main{Config: cfg, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))}
	if err := d.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "daemon:", err)
		return 1
	}
	return 0
}

// runApp registers SEMFS_TEST_APP, then runs each SEMFS_TEST_WRITES entry
// ("path=contents;...") as a write through the mount by a child shell, so
// the writer is a descendant of the registered process.
func runApp() int {
	ctx := context.Background()
	c := client.FromEnv()
	if err := c.Register(ctx, os.Getenv("SEMFS_TEST_APP")); err != nil {
		fmt.Fprintln(os.Stderr, "register:", err)
		return 1
	}
	for _, w := range strings.Split(os.Getenv("SEMFS_TEST_WRITES"), ";") {
		path, data, _ := strings.Cut(w, "=")
		cmd := exec.Command("sh", "-c", `printf '%s' "$2" > "$1"`, "sh", path, data)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "write:", err)
			return 1
		}
	}
	return 0
}

// headless starts an in-process daemon without a mount and returns its
// socket path.
func headless(t testing.TB) (string, *daemon.Main) {
	t.Helper()
	return headlessAt(t, t.TempDir())
}

// headlessAt starts an in-process headless daemon over dir/data and
// dir/index.
func headlessAt(t testing.TB, dir string) (string, *daemon.Main) {
	t.Helper()
	cfg, err := daemon.ParseConfig([]string{"-mode", "headless", "-data", dir + "/data", "-index", dir + "/index/index.db", "-socket", dir + "/run/semfs.sock"}, func(string) string { return "" }, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	d := &daemon.Main{Config: cfg, Logger: slog.New(slog.DiscardHandler)}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return cfg.Socket, d
}

// TestClientConformance runs the conformance suite on the client's FS
// against one headless daemon; each case gets a fresh directory of the
// daemon's tree. Seeded cases write their files straight into the backing
// directory (the daemon serves what is there), which keeps the
// thousand-file cases fast.
func TestClientConformance(t *testing.T) {
	// The socket and the client are under test here, not the metadata
	// layer or a disk (their owners test them, and the other tests here
	// run the full stack): the daemon serves a memfs tree.
	tree := memfs.New()
	sock := filepath.Join(t.TempDir(), "s.sock")
	d := &daemon.Main{Config: daemon.Config{Mode: daemon.ModeHeadless, Socket: sock}, Tree: tree, Logger: slog.New(slog.DiscardHandler)}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	c := client.New(sock)
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	n := 0
	fresh := func() string {
		n++
		return fmt.Sprintf("/case%03d", n)
	}
	semfstest.Run(t, func(t *testing.T) semfs.FS {
		dir := fresh()
		if err := semfs.Mkdir(ctx, c.FS(), dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return subFS{base: c.FS(), dir: dir}
	}, semfstest.Seed(func(tb semfstest.TB, files map[string][]byte) semfs.FS {
		// Seeded trees are written in-process, then read over the socket.
		dir := fresh()
		if err := semfs.MkdirAll(ctx, tree, dir, 0o755); err != nil {
			tb.Fatalf("seed: %v", err)
		}
		for p, b := range files {
			if err := semfs.WriteFile(ctx, tree, dir+p, b, 0o644); err != nil {
				tb.Fatalf("seed: %v", err)
			}
		}
		return subFS{base: c.FS(), dir: dir}
	}), semfstest.Writers(3)) // each op is a socket round trip; keeps the -race run short
}

// socketOnly starts an in-process daemon serving a memfs tree (no models,
// no index): for tests of the socket itself.
func socketOnly(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "run", "semfs.sock")
	d := &daemon.Main{Config: daemon.Config{Mode: daemon.ModeHeadless, Socket: sock}, Tree: memfs.New(), Logger: slog.New(slog.DiscardHandler)}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return sock
}

func TestSocketPermissions(t *testing.T) {
	sock := socketOnly(t)
	info, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o660 || info.Mode().Type() != os.ModeSocket {
		t.Errorf("socket mode %v, want socket 0660", info.Mode())
	}
	dinfo, err := os.Stat(filepath.Dir(sock))
	if err != nil || dinfo.Mode().Perm() != 0o755 {
		t.Errorf("socket dir mode %v, %v; want 0755", dinfo.Mode(), err)
	}
}

// rawConn speaks the wire protocol by hand.
type rawConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, sock string) *rawConn {
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c, r: bufio.NewReaderSize(c, 1<<20)}
}

func (rc *rawConn) send(line string) (wire.Response, error) {
	rc.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := rc.c.Write([]byte(line + "\n")); err != nil {
		return wire.Response{}, err
	}
	b, err := rc.r.ReadBytes('\n')
	if err != nil {
		return wire.Response{}, err
	}
	var resp wire.Response
	if err := json.Unmarshal(b, &resp); err != nil {
		rc.t.Fatalf("response %q: %v", b, err)
	}
	return resp, nil
}

func TestSocketProtocolErrors(t *testing.T) {
	sock := socketOnly(t)
	rc := dialRaw(t, sock)
	cases := []struct {
		line, code string
	}{
		{`{"id":1,"op":`, wire.CodeBadRequest},
		{`{"id":2,"op":"frobnicate"}`, wire.CodeUnknownOp},
		{`{"v":99,"id":3,"op":"health"}`, wire.CodeVersion},
		{`{"id":4,"op":"stat","args":{"path":"/missing"}}`, wire.CodeNotExist},
		{`{"id":5,"op":"stat","args":{"path":"a//b"}}`, wire.CodeInvalid},
		{`{"id":6,"op":"tag","args":"not an object"}`, wire.CodeBadRequest},
	}
	for _, c := range cases {
		resp, err := rc.send(c.line)
		if err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		if resp.Error == nil || resp.Error.Code != c.code {
			t.Errorf("%s: got %+v, want error code %s", c.line, resp.Error, c.code)
		}
		if resp.V != wire.Version {
			t.Errorf("%s: response version %d", c.line, resp.V)
		}
	}
	// After all that the connection still works.
	resp, err := rc.send(`{"id":7,"op":"health"}`)
	if err != nil || resp.Error != nil || resp.ID != 7 {
		t.Fatalf("health after errors: %+v, %v", resp, err)
	}
	var h wire.Health
	if err := json.Unmarshal(resp.Result, &h); err != nil || !h.Ready || h.Mode != "headless" {
		t.Errorf("health = %+v, %v", h, err)
	}

	// An oversized line is answered with too_large and the connection
	// is closed.
	big := dialRaw(t, sock)
	line := `{"id":8,"op":"write","args":{"path":"/x","data":"` + strings.Repeat("A", wire.MaxLine) + `"}}`
	resp, err = big.send(line)
	if err != nil {
		t.Fatalf("oversized line: %v", err)
	}
	if resp.Error == nil || resp.Error.Code != wire.CodeTooLarge {
		t.Errorf("oversized line: %+v", resp.Error)
	}
	if _, err := big.r.ReadByte(); err == nil {
		t.Error("connection stayed open after an oversized line")
	}
}

func TestClientRules(t *testing.T) {
	ctx := context.Background()
	t.Setenv("SEMFS_SOCKET", "")
	noop := client.FromEnv()
	if !noop.NoOp() {
		t.Fatal("FromEnv without SEMFS_SOCKET is not the no-op client")
	}
	res, err := noop.Query(ctx, "anything", 5)
	if err != nil || len(res) != 0 {
		t.Errorf("no-op Query = %v, %v; want nothing", res, err)
	}
	if err := noop.Tag(ctx, "/a", semfs.Tags{Task: "x"}); err != nil {
		t.Errorf("no-op Tag = %v", err)
	}
	if err := noop.Register(ctx, "app"); err != nil {
		t.Errorf("no-op Register = %v", err)
	}

	t.Setenv("SEMFS_SOCKET", filepath.Join(t.TempDir(), "absent.sock"))
	down := client.FromEnv()
	var warned []string
	down.Logf = func(format string, args ...any) { warned = append(warned, fmt.Sprintf(format, args...)) }
	if _, err := down.Query(ctx, "anything", 5); !errors.Is(err, client.ErrUnavailable) {
		t.Errorf("Query with the daemon down = %v; want ErrUnavailable", err)
	}
	if err := down.Tag(ctx, "/a", semfs.Tags{Task: "x"}); !errors.Is(err, client.ErrUnavailable) {
		t.Errorf("Tag with the daemon down = %v; want ErrUnavailable", err)
	}
	if err := down.Register(ctx, "notes"); err != nil {
		t.Errorf("Register with the daemon down = %v; want nil (warn and carry on)", err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "notes") {
		t.Errorf("Register warnings = %q; want one naming the app", warned)
	}
}
