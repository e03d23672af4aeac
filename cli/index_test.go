package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs"
)

func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func TestIndexCommands(t *testing.T) {
	dir := t.TempDir()
	must := func(p, s string) {
		full := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must("notes/auth.md", "# Login\n\nThe login handler rejects valid passwords after the upgrade.\n")
	must("src/url.go", "package src\n\n// ParseURL splits a URL into scheme, host and path.\nfunc ParseURL(s string) {}\n")
	must("bin/blob", "\x00\x01\x02")

	out, errs, code := run(t, "index", dir, "--json")
	if code != 0 {
		t.Fatalf("index: %d %s", code, errs)
	}
	var rep indexReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Added != 3 || rep.Files != 3 || rep.Embedded == 0 {
		t.Fatalf("index report: %s %v", out, err)
	}
	// Incremental: nothing re-read, nothing re-embedded.
	out, _, _ = run(t, "index", dir, "--json")
	json.Unmarshal([]byte(out), &rep)
	if rep.Unchanged != 3 || rep.Bytes != 0 || rep.Embedded != 0 {
		t.Fatalf("re-index not incremental: %s", out)
	}
	must("notes/auth.md", "# Login\n\nThe login handler rejects valid passwords after the upgrade.\n\nNew paragraph.\n")
	out, _, _ = run(t, "index", dir, "--json")
	json.Unmarshal([]byte(out), &rep)
	if rep.Updated != 1 || rep.Unchanged != 2 {
		t.Fatalf("changed file not updated: %s", out)
	}

	out, errs, code = run(t, "--root", dir, "tag", "/notes/auth.md", "--task", "fix auth bug", "--app", "editor", "--kv", "team=infra", "--json")
	if code != 0 {
		t.Fatalf("tag: %d %s", code, errs)
	}
	var m semfs.Meta
	if err := json.Unmarshal([]byte(out), &m); err != nil || m.Task != "fix auth bug" || m.Extra["team"] != "infra" {
		t.Fatalf("tag output: %s", out)
	}
	out, _, code = run(t, "--root", dir, "query", "auth", "--json")
	var qr []semfs.QueryResult
	if err := json.Unmarshal([]byte(out), &qr); code != 0 || err != nil || len(qr) == 0 || qr[0].Path != "/notes/auth.md" || qr[0].Score < 1 {
		t.Fatalf("query: %d %s", code, out)
	}
	out, _, code = run(t, "--root", dir, "search", "parse", "url", "--json")
	var sr struct {
		Hits []semfs.SearchHit
		Next string
	}
	if err := json.Unmarshal([]byte(out), &sr); code != 0 || err != nil || len(sr.Hits) == 0 || sr.Hits[0].Path != "/src/url.go" || sr.Hits[0].Line == 0 {
		t.Fatalf("search: %d %s", code, out)
	}
	out, _, code = run(t, "--root", dir, "search", "login", "tag:team=infra")
	if code != 0 || !strings.Contains(out, "/notes/auth.md:") || strings.Contains(out, "url.go") {
		t.Fatalf("search text: %d %s", code, out)
	}
	out, _, code = run(t, "--root", dir, "related", "/src/url.go", "--json")
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "[") {
		t.Fatalf("related: %d %s", code, out)
	}
	out, _, code = run(t, "--root", dir, "reindex", "--json")
	json.Unmarshal([]byte(out), &rep)
	if code != 0 || rep.Updated != 3 {
		t.Fatalf("reindex: %d %s", code, out)
	}
	// Tags survive a reindex.
	out, _, _ = run(t, "--root", dir, "query", "infra", "editor", "--json")
	if !strings.Contains(out, "fix auth bug") {
		t.Fatalf("tags lost by reindex: %s", out)
	}
	// Bad input: clear errors and stable exit codes.
	if _, errs, code := run(t, "--root", dir, "query", " "); code != ExitInvalid || !strings.Contains(errs, "empty query") {
		t.Fatalf("empty query: %d %s", code, errs)
	}
	if _, errs, code := run(t, "--root", dir, "tag", "/nope", "--task", "x"); code != ExitNotExist || errs == "" {
		t.Fatalf("tag missing: %d %s", code, errs)
	}
	if _, errs, code := run(t, "--root", dir, "tag", "/notes/auth.md", "--kv", "novalue"); code != ExitUsage || !strings.Contains(errs, "key=value") {
		t.Fatalf("bad kv: %d %s", code, errs)
	}
	if _, _, code := run(t, "--root", dir, "search", "x", "--cursor", "bogus"); code != ExitInvalid {
		t.Fatalf("bad cursor: %d", code)
	}
	if _, _, code := run(t, "index", filepath.Join(dir, "missing")); code != ExitUsage {
		t.Fatalf("missing dir: %d", code)
	}
	if _, _, code := run(t, "--root", dir, "--index", "postgres://x/y", "query", "a"); code != ExitUsage {
		t.Fatalf("postgres index: %d", code)
	}
}

func TestIndexWatch(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "first.txt"), []byte("alpha"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var errb bytes.Buffer
	go func() {
		var out bytes.Buffer
		done <- Run(ctx, []string{"index", dir, "--watch"}, strings.NewReader(""), &out, &errb)
	}()
	// Wait until the first pass indexed first.txt, then add a file.
	var last string
	found := func(word, path string) bool {
		out, errs, code := run(t, "--root", dir, "search", word, "--json")
		last = fmt.Sprintf("exit %d, stdout %.300q, stderr %.300q", code, out, errs)
		return code == 0 && strings.Contains(out, path)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !found("alpha", "/first.txt") {
		if time.Now().After(deadline) {
			t.Fatalf("first pass did not index first.txt; last search: %s; index --watch stderr: %s", last, errb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "sub", "second.txt"), []byte("walrus tusks"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(20 * time.Second)
	for !found("walrus", "/sub/second.txt") {
		if time.Now().After(deadline) {
			t.Fatalf("watch did not index a new file; stderr: %s", errb.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	os.Remove(filepath.Join(dir, "first.txt"))
	deadline = time.Now().Add(20 * time.Second)
	for found("alpha", "/first.txt") {
		if time.Now().After(deadline) {
			t.Fatal("watch did not drop a removed file")
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("watch exit %d: %s", code, errb.String())
	}
}
