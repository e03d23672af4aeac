package daemon_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/cli"
	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/daemon"
)

// accessTokens is the tokens file of the access tests: "fin" sees the
// finance group's files, "lim" may not see /secret, "bot" is for one app.
const accessTokens = `{"tokens": {
	"fin-secret": {"id": "fin", "groups": ["finance"]},
	"lim-secret": {"id": "lim", "rules": [{"path": "/secret", "access": "none"}]},
	"bot-secret": {"id": "bot", "app": "billing-bot"}
}}`

// runSession is the SEMFS_TEST_ROLE=session helper: it registers as
// SEMFS_TEST_APP (with SEMFS_TOKEN, which the client reads), then runs the
// steps of SEMFS_TEST_STEPS, one per line: "sh SCRIPT" (a child shell, so
// a descendant of the registered process), "stat PATH", "query TEXT",
// "search TEXT" and "public PATH" (tag PATH public, keeping its groups)
// through the socket. It prints what each step saw.
func runSession() int {
	ctx := context.Background()
	c := client.FromEnv()
	if err := c.Register(ctx, os.Getenv("SEMFS_TEST_APP")); err != nil {
		fmt.Println("register:", err)
		return 3
	}
	for _, step := range strings.Split(os.Getenv("SEMFS_TEST_STEPS"), "\n") {
		op, arg, _ := strings.Cut(step, " ")
		switch op {
		case "sh":
			out, err := exec.Command("sh", "-c", arg).CombinedOutput()
			fmt.Printf("sh: %s(exit %v)\n", out, err)
		case "stat":
			st, err := c.Stat(ctx, arg)
			fmt.Printf("stat %s: size %d, err %v\n", arg, st.Size, err)
		case "query":
			res, err := c.Query(ctx, arg, 0)
			for _, r := range res {
				fmt.Printf("query hit %s\n", r.Path)
			}
			fmt.Printf("query: %d hits, err %v\n", len(res), err)
		case "search":
			hits, _, err := c.Search(ctx, semfs.SearchRequest{Query: arg})
			for _, h := range hits {
				fmt.Printf("search hit %s\n", h.Path)
			}
			fmt.Printf("search: %d hits, err %v\n", len(hits), err)
		case "snapshot":
			_, err := c.Snapshot(ctx, arg)
			fmt.Printf("snapshot: err %v\n", err)
		case "public":
			st, err := c.Stat(ctx, arg)
			if err == nil {
				tags := st.Meta.Tags
				tags.Public = true
				err = c.Tag(ctx, arg, tags)
			}
			fmt.Printf("public %s: err %v\n", arg, err)
		default:
			fmt.Printf("unknown step %q\n", step)
			return 2
		}
	}
	return 0
}

// session runs the session helper registered as app with token, and
// returns its output.
func session(t *testing.T, sock, app, token string, steps ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SEMFS_TEST_ROLE=session", "SEMFS_SOCKET="+sock, "SEMFS_TEST_APP="+app,
		"SEMFS_TOKEN="+token, "SEMFS_TEST_STEPS="+strings.Join(steps, "\n"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("session %s: %v\n%s", app, err, out)
	}
	return string(out)
}

// mountWithTokens starts an in-process mounting daemon with the tokens
// file text.
func mountWithTokens(t *testing.T, tokens string) (mnt, sock string, c *client.Client, d *daemon.Main) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/tokens.json", []byte(tokens), 0o600); err != nil {
		t.Fatal(err)
	}
	mnt, c, d, _ = mountInProcess(t, dir, "-tokens", dir+"/tokens.json")
	return mnt, d.Config.Socket, c, d
}

// waitIdle waits until the daemon has indexed and embedded everything.
func waitIdle(t *testing.T, d *daemon.Main) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, err := d.Backlog(context.Background())
		if err == nil && b.Idle() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the index did not catch up: %+v, %v", b, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("ls %s: %v", dir, err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// wantAbsent checks that the test process (registered with no token) gets
// ENOENT for p on the mount, and does not see it listed.
func wantAbsent(t *testing.T, mnt, p string) {
	t.Helper()
	full := mnt + p
	if _, err := os.Stat(full); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat %s without the group = %v; want ENOENT", p, err)
	}
	if f, err := os.Open(full); !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			f.Close()
		}
		t.Errorf("open %s without the group = %v; want ENOENT", p, err)
	}
	dir, base := filepath.Split(full)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return // hidden too (checked on its own)
	}
	if slices.Contains(names(t, dir), base) {
		t.Errorf("ls %s without the group shows %s", dir, base)
	}
	out, _ := exec.Command("ls", "-a", dir).CombinedOutput()
	if strings.Contains(string(out), base) {
		t.Errorf("ls(1) %s without the group shows %s:\n%s", dir, base, out)
	}
}

// TestMountAndSocketHideGroupFiles: a process registered with a token of
// group finance sees, reads and lists a file tagged for finance; a process
// without the token gets ENOENT for it and does not see it listed, right
// after the first one listed and stat'ed it (the kernel's caches, shared
// by every caller of the mount, must not answer for it), nor in socket
// stat, query, search and listings; once the file is tagged public it sees
// it, and a file it had cached that is tagged for finance vanishes for it
// at once.
func TestMountAndSocketHideGroupFiles(t *testing.T) {
	mnt, sock, c, d := mountWithTokens(t, accessTokens)
	ctx := context.Background()
	files := map[string]string{
		"/reports/q3.txt":      "quarterly revenue forecast for the board",
		"/reports/summary.txt": "public summary of the year",
		"/only/ledger.txt":     "general ledger entries",
	}
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(mnt+p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(mnt+p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The writer caches the names and listings before they are tagged.
	names(t, mnt+"/reports")
	names(t, mnt+"/only")
	for _, p := range []string{"/reports/q3.txt", "/only/ledger.txt"} {
		if _, err := os.Stat(mnt + p); err != nil {
			t.Fatal(err)
		}
		if err := c.Tag(ctx, p, semfs.Tags{Task: "q3 revenue forecast", Groups: []string{"finance"}}); err != nil {
			t.Fatalf("tag %s: %v", p, err)
		}
	}
	waitIdle(t, d)

	for round := range 2 {
		out := session(t, sock, "analyst", "fin-secret",
			"sh cat "+mnt+"/reports/q3.txt; echo; ls "+mnt+"/reports "+mnt+"/only; stat -c 'size=%s' "+mnt+"/reports/q3.txt "+mnt+"/only",
			"stat /reports/q3.txt", "query q3 revenue forecast", "search quarterly revenue forecast")
		for _, want := range []string{files["/reports/q3.txt"], "q3.txt", "ledger.txt", "size=40", "exit <nil>",
			"stat /reports/q3.txt: size 40, err <nil>", "query hit /reports/q3.txt", "search hit /reports/q3.txt"} {
			if !strings.Contains(out, want) {
				t.Fatalf("round %d: the finance session does not see %q:\n%s", round, want, out)
			}
		}
		wantAbsent(t, mnt, "/reports/q3.txt")
		wantAbsent(t, mnt, "/only/ledger.txt")
		wantAbsent(t, mnt, "/only") // every file in it is hidden
		if _, err := os.Stat(mnt + "/reports/summary.txt"); err != nil {
			t.Errorf("a public file is hidden: %v", err)
		}
		if _, err := c.Stat(ctx, "/reports/q3.txt"); !errors.Is(err, semfs.ErrNotExist) {
			t.Errorf("socket stat without the group = %v; want not found", err)
		}
		if res, err := c.Query(ctx, "q3 revenue forecast", 0); err != nil || len(res) != 0 {
			t.Errorf("socket query without the group = %+v, %v; want nothing", res, err)
		}
		if hits, _, err := c.Search(ctx, semfs.SearchRequest{Query: "quarterly revenue forecast"}); err != nil || slices.ContainsFunc(hits, func(h semfs.SearchHit) bool { return h.Path == "/reports/q3.txt" }) {
			t.Errorf("socket search without the group = %+v, %v; want no /reports/q3.txt", hits, err)
		}
		if entries, err := c.FS().ReadDir(ctx, "/reports"); err != nil || slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == "q3.txt" }) {
			t.Errorf("socket list without the group = %v, %v", entries, err)
		}
	}

	// Tagged public, the file exists for everyone.
	if out := session(t, sock, "analyst", "fin-secret", "public /reports/q3.txt"); !strings.Contains(out, "err <nil>") {
		t.Fatalf("tagging public failed:\n%s", out)
	}
	if data, err := os.ReadFile(mnt + "/reports/q3.txt"); err != nil || string(data) != files["/reports/q3.txt"] {
		t.Fatalf("after tagging public: read = %q, %v", data, err)
	}
	if got := names(t, mnt+"/reports"); !slices.Equal(got, []string{"q3.txt", "summary.txt"}) {
		t.Fatalf("after tagging public: ls = %v", got)
	}
	// A file the caller cached (listing and name shared by everyone now)
	// vanishes for it as soon as it is tagged for finance.
	if _, err := os.Stat(mnt + "/reports/summary.txt"); err != nil {
		t.Fatal(err)
	}
	if err := c.Tag(ctx, "/reports/summary.txt", semfs.Tags{Groups: []string{"finance"}}); err != nil {
		t.Fatal(err)
	}
	wantAbsent(t, mnt, "/reports/summary.txt")
	if out := session(t, sock, "analyst", "fin-secret", "sh cat "+mnt+"/reports/summary.txt"); !strings.Contains(out, files["/reports/summary.txt"]) {
		t.Fatalf("the finance session lost the file tagged for finance:\n%s", out)
	}
}

// TestMountHoldsTokenPathRules: a token's path rules hold on the mount for
// the process registered with it, even right after a caller without them
// listed and read the refused subtree.
func TestMountHoldsTokenPathRules(t *testing.T) {
	mnt, sock, _, _ := mountWithTokens(t, accessTokens)
	if err := os.MkdirAll(mnt+"/secret", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mnt+"/secret/plan.txt", []byte("the plan"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mnt+"/notes.txt", []byte("notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got := names(t, mnt); !slices.Contains(got, "secret") {
			t.Fatalf("ls without a token = %v; want secret", got)
		}
		if data, err := os.ReadFile(mnt + "/secret/plan.txt"); err != nil || string(data) != "the plan" {
			t.Fatalf("read without a token = %q, %v", data, err)
		}
		out := session(t, sock, "limited", "lim-secret",
			"sh ls "+mnt+"; cat "+mnt+"/secret/plan.txt || echo cat-refused; ls "+mnt+"/secret || echo ls-refused; stat "+mnt+"/secret || echo stat-refused")
		if strings.Contains(out, "secret\n") || strings.Contains(out, "the plan") || !strings.Contains(out, "notes.txt") {
			t.Fatalf("the limited session sees /secret:\n%s", out)
		}
		for _, want := range []string{"cat-refused", "ls-refused", "stat-refused"} {
			if !strings.Contains(out, want) {
				t.Fatalf("the limited session was not refused (%s):\n%s", want, out)
			}
		}
	}
}

// TestRegisterWithToken: an unknown token, or a token registered under
// another app than its own, is refused with a clear error and registers
// nothing; a token naming its app registers under it.
func TestRegisterWithToken(t *testing.T) {
	mnt, sock, c, _ := mountWithTokens(t, accessTokens)
	ctx := context.Background()
	err := c.Register(ctx, "app", client.WithToken("not-a-token"))
	if !errors.Is(err, semfs.ErrPermission) || !strings.Contains(err.Error(), "unknown token") {
		t.Fatalf("register with an unknown token = %v; want a permission error naming the unknown token", err)
	}
	err = c.Register(ctx, "other-app", client.WithToken("bot-secret"))
	if !errors.Is(err, semfs.ErrPermission) || !strings.Contains(err.Error(), `is for app "billing-bot"`) {
		t.Fatalf("register under another app = %v; want a permission error naming the token's app", err)
	}
	// Nothing was registered: this process still writes as its uid.
	if err := os.WriteFile(mnt+"/mine.txt", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if by := waitCreatedBy(t, c, "/mine.txt"); !strings.HasPrefix(by, "uid:") {
		t.Fatalf("after refused registrations created_by = %q; want uid:N", by)
	}
	out := session(t, sock, "", "bot-secret", "sh printf bot > "+mnt+"/bot.txt")
	if !strings.Contains(out, "exit <nil>") {
		t.Fatalf("bot session: %s", out)
	}
	if by := waitCreatedBy(t, c, "/bot.txt"); by != "billing-bot" {
		t.Fatalf("created_by of the bot's file = %q; want billing-bot", by)
	}
	var buf bytes.Buffer
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SEMFS_TEST_ROLE=session", "SEMFS_SOCKET="+sock, "SEMFS_TEST_APP=x", "SEMFS_TOKEN=wrong")
	cmd.Stdout = &buf
	if err := cmd.Run(); err == nil || !strings.Contains(buf.String(), "unknown token") {
		t.Fatalf("SEMFS_TOKEN=wrong: %v, %s; want the register error", err, buf.String())
	}
}

// TestTokensFileChecked: a tokens file whose ids collide or take the
// daemon's uid: names is refused at boot, with the reason.
func TestTokensFileChecked(t *testing.T) {
	for _, c := range []struct{ tokens, want string }{
		{`{"tokens": {"a": {"id": "x"}, "b": {"id": "x", "groups": ["g"]}}}`, `two tokens have the id "x"`},
		{`{"tokens": {"a": {"id": "uid:0"}}}`, `ids starting with "uid:"`},
		{`{"tokens": {"a": {"groups": ["g"]}}}`, `has no id`},
	} {
		dir := t.TempDir()
		os.WriteFile(dir+"/tokens.json", []byte(c.tokens), 0o600)
		cfg, err := daemon.ParseConfig([]string{"-mode", "headless", "-data", dir + "/data", "-index", dir + "/index.db",
			"-socket", dir + "/semfs.sock", "-tokens", dir + "/tokens.json"}, func(string) string { return "" }, os.Stderr)
		if err != nil {
			t.Fatal(err)
		}
		d := &daemon.Main{Config: cfg, Logger: slog.New(slog.DiscardHandler)}
		err = d.Start(context.Background())
		d.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("tokens %s: boot error %v; want %q", c.tokens, err, c.want)
		}
	}
}

// TestTokensSettings: the tokens file is SEMFS_TOKENS or -tokens; the
// HTTP-only names of before still set it, and the new ones win.
func TestTokensSettings(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"SEMFS_TOKENS": "/a.json"}, nil, "/a.json"},
		{map[string]string{"SEMFS_HTTP_TOKENS": "/old.json"}, nil, "/old.json"},
		{map[string]string{"SEMFS_HTTP_TOKENS": "/old.json", "SEMFS_TOKENS": "/a.json"}, nil, "/a.json"},
		{map[string]string{"SEMFS_TOKENS": "/a.json"}, []string{"-tokens", "/b.json"}, "/b.json"},
		{nil, []string{"-http-tokens", "/old.json"}, "/old.json"},
	} {
		cfg, err := daemon.ParseConfig(append([]string{"-mode", "headless"}, c.args...), func(k string) string { return c.env[k] }, os.Stderr)
		if err != nil || cfg.Tokens != c.want {
			t.Errorf("env %v args %v: Tokens = %q, %v; want %q", c.env, c.args, cfg.Tokens, err, c.want)
		}
	}
	if _, err := daemon.ParseConfig([]string{"-mode", "headless", "-http", "127.0.0.1:0"}, func(string) string { return "" }, os.Stderr); err == nil || !strings.Contains(err.Error(), "-tokens FILE") {
		t.Errorf("-http without tokens: %v; want an error asking for -tokens", err)
	}
}

// eventually retries check for up to two seconds (a change made through
// the mount is reported to the kernel once the request returned).
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMountHidesEmptiedDirectories: a directory that a removal or a move
// leaves holding only files of a group vanishes for callers without the
// group, though its name was cached while it showed.
func TestMountHidesEmptiedDirectories(t *testing.T) {
	mnt, sock, c, _ := mountWithTokens(t, accessTokens)
	ctx := context.Background()
	for p, data := range map[string]string{"/mixed/public.txt": "p", "/mixed/ledger.txt": "l", "/fin/moved.txt": "m",
		"/deep/sub/public.txt": "p", "/deep/sub/ledger.txt": "l"} {
		os.MkdirAll(filepath.Dir(mnt+p), 0o755)
		if err := os.WriteFile(mnt+p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(mnt+"/empty", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/mixed/ledger.txt", "/fin/moved.txt", "/deep/sub/ledger.txt"} {
		if err := c.Tag(ctx, p, semfs.Tags{Groups: []string{"finance"}}); err != nil {
			t.Fatal(err)
		}
	}
	// Cached while they show: /mixed holds a public file, /empty nothing.
	for _, d := range []string{"/mixed", "/empty", "/deep", "/deep/sub"} {
		if _, err := os.Stat(mnt + d); err != nil {
			t.Fatal(err)
		}
	}
	if got := names(t, mnt); !slices.Contains(got, "mixed") || !slices.Contains(got, "empty") {
		t.Fatalf("ls = %v", got)
	}
	gone := func(d string) func() error {
		return func() error {
			if _, err := os.Stat(mnt + d); !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("stat %s = %v; want ENOENT", d, err)
			}
			if slices.Contains(names(t, mnt), d[1:]) {
				return fmt.Errorf("ls shows %s", d)
			}
			return nil
		}
	}
	// Removed through the mount: the kernel dropped only the file's name.
	if err := os.Remove(mnt + "/mixed/public.txt"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "/mixed after its last public file was removed", gone("/mixed"))
	// Two levels up: the kernel drops nothing of /deep itself.
	if err := os.Remove(mnt + "/deep/sub/public.txt"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "/deep after the last public file below it was removed", gone("/deep"))
	// Moved into /empty through the mount, by a finance session.
	out := session(t, sock, "analyst", "fin-secret", "sh mv "+mnt+"/fin/moved.txt "+mnt+"/empty/moved.txt")
	if !strings.Contains(out, "exit <nil>") {
		t.Fatalf("mv: %s", out)
	}
	eventually(t, "/empty after a finance file was moved into it", gone("/empty"))
}

// TestMountHidesFileTaggedElsewhere: a restriction another process sets
// on the daemon's index (semfs tag run beside the daemon, with its own
// store) hides the file on the mount and the socket within the daemon's
// poll of the index, although the kernel had cached the public name.
func TestMountHidesFileTaggedElsewhere(t *testing.T) {
	mnt, _, c, d := mountWithTokens(t, accessTokens)
	ctx := context.Background()
	const p = "/reports/peer.txt"
	if err := os.MkdirAll(mnt+"/reports", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mnt+p, []byte("board minutes"), 0o644); err != nil {
		t.Fatal(err)
	}
	names(t, mnt+"/reports") // the kernel caches the listing and the name
	if _, err := os.Stat(mnt + p); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, d)
	var out, errs bytes.Buffer
	args := []string{"--root", d.Config.Data, "--index", d.Config.Index, "tag", p, "--groups", "finance"}
	if code := cli.Run(ctx, args, strings.NewReader(""), &out, &errs); code != 0 {
		t.Fatalf("semfs tag beside the daemon: exit %d: %s", code, errs.String())
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(mnt + p); errors.Is(err, fs.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("20 s after another process tagged %s for finance, the mount still shows it to a caller outside finance", p)
		}
	}
	wantAbsent(t, mnt, p)
	if _, err := c.Stat(ctx, p); !errors.Is(err, semfs.ErrNotExist) {
		t.Errorf("socket stat without the group = %v; want not found", err)
	}
}
