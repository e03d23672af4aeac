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
