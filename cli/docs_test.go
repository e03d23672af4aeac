package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDocsIngestAndSites(t *testing.T) {
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "auth"), 0o755)
	os.WriteFile(filepath.Join(src, "auth", "oauth.mdx"), []byte("# OAuth\n\n## Scopes\n"), 0o644)
	os.WriteFile(filepath.Join(src, "billing.md"), []byte("---\ngroups: [billing]\n---\n# Billing\n"), 0o644)
	root := t.TempDir()
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"--root", root}, args...), strings.NewReader(""), &out, &errb)
		return out.String(), errb.String(), code
	}
	out, errs, code := run("docs", "ingest", src, "--site", "acme")
	if code != 0 || !strings.Contains(out, "site acme: 2 pages") {
		t.Fatalf("ingest: code %d, out %q, err %q", code, out, errs)
	}
	out, _, code = run("docs", "sites", "--json")
	if code != 0 || !strings.Contains(out, `"acme"`) {
		t.Fatalf("sites: %d %q", code, out)
	}
	if _, errs, code = run("docs", "ingest", src); code != ExitUsage || !strings.Contains(errs, "--site") {
		t.Fatalf("ingest without --site: code %d, %q", code, errs)
	}
	if _, _, code = run("docs", "ingest", filepath.Join(src, "missing"), "--site", "x"); code != ExitNotExist {
		t.Fatalf("ingest of a missing dir: code %d, want %d", code, ExitNotExist)
	}
	f, err := (&App{Root: root}).openDocsSite(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := f.Stat(context.Background(), "/auth/oauth.mdx"); err != nil || info.Size() != 19 {
		t.Fatalf("stat of an ingested page: %v, %v", info, err)
	}
}

func TestShellExitStatusIsTheScripts(t *testing.T) {
	root := t.TempDir()
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"--root", root, "sh", "-c", "exit 42"}, strings.NewReader(""), &out, &errb)
	if code != 42 || strings.Contains(errb.String(), "exited with status") {
		t.Fatalf("sh -c 'exit 42': code %d, stderr %q; want 42 and no extra line", code, errb.String())
	}
}

func TestShOnDocsSite(t *testing.T) {
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "auth"), 0o755)
	os.MkdirAll(filepath.Join(src, "internal"), 0o755)
	os.WriteFile(filepath.Join(src, "auth", "oauth.mdx"), []byte("# OAuth\n\nTokens expire.\n"), 0o644)
	os.WriteFile(filepath.Join(src, "internal", "billing.mdx"), []byte("---\ngroups: [billing]\n---\n# Billing\n\nStripe webhooks.\n"), 0o644)
	root := t.TempDir()
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"--root", root}, args...), strings.NewReader(""), &out, &errb)
		return out.String(), errb.String(), code
	}
	if _, errs, code := run("docs", "ingest", src, "--site", "hb"); code != 0 {
		t.Fatalf("ingest: %d %s", code, errs)
	}
	// Public session: the billing page does not exist (twice: the second
	// session loads the persisted tree).
	for i := 0; i < 2; i++ {
		out, _, code := run("sh", "--site", "hb", "-c", "find / -type f; grep -r webhooks / ; echo rc=$?")
		if code != 0 || out != "/auth/oauth.mdx\nrc=1\n" {
			t.Fatalf("public session %d: %d %q", i, code, out)
		}
	}
	out, _, _ := run("sh", "--site", "hb", "--groups", "billing", "-c", "cat /internal/billing.mdx | tail -n 1")
	if out != "Stripe webhooks.\n" {
		t.Fatalf("billing session: %q", out)
	}
	// The site is searchable, and search obeys the same groups.
	out, errs, code := run("sh", "--site", "hb", "-c", "search tokens expire")
	if code != 0 || !strings.Contains(out, "/auth/oauth.mdx") {
		t.Fatalf("public search: %d %q %q", code, out, errs)
	}
	out, _, _ = run("sh", "--site", "hb", "-c", "search stripe webhooks")
	if strings.Contains(out, "billing") {
		t.Fatalf("a public session's search shows a hidden page: %q", out)
	}
	out, _, _ = run("sh", "--site", "hb", "--groups", "billing", "-c", "search stripe webhooks")
	if !strings.Contains(out, "/internal/billing.mdx") {
		t.Fatalf("the billing session's search misses its page: %q", out)
	}
	if _, errs, code := run("sh", "--site", "hb", "-c", "tag /auth/oauth.mdx --task x"); code == 0 {
		t.Fatalf("a session re-tagged a page of a site: %q", errs)
	}
	_, errs, code = run("sh", "--site", "hb", "-c", "echo x > /auth/new.md")
	if code == 0 || !strings.Contains(strings.ToLower(errs), "read-only") {
		t.Fatalf("write into a site: %d %q", code, errs)
	}
	if _, errs, code := run("sh", "--site", "nope", "-c", "ls"); code != ExitNotExist || !strings.Contains(errs, "docs ingest") {
		t.Fatalf("missing site: %d %q", code, errs)
	}
}
