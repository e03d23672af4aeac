package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, nil, &out, &errb)
	return out.String(), errb.String(), code
}

func configOf(t *testing.T, args ...string) map[string]ConfigValue {
	t.Helper()
	out, errs, code := runCLI(t, append([]string{"config", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("config: exit %d: %s", code, errs)
	}
	var rep ConfigReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("config --json: %v\n%s", err, out)
	}
	m := map[string]ConfigValue{"": {Value: rep.File}}
	for _, v := range rep.Values {
		m[v.Key] = v
	}
	return m
}

// Flags beat the environment, which beats the configuration file, which
// beats the defaults — and commands really use the result.
func TestConfigPrecedence(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	for _, e := range []string{"SEMFS_CONFIG", "SEMFS_DATA", "SEMFS_INDEX", "SEMFS_HTTP_LISTEN", "SEMFS_HTTP_TOKENS", "SEMFS_TOKENS"} {
		t.Setenv(e, "")
		os.Unsetenv(e)
	}
	c := configOf(t)
	if c[""].Value != "" || c["root"].Value != "." || c["root"].Source != "default" || c["http.listen"].Value != "127.0.0.1:7434" {
		t.Errorf("no file: %+v", c)
	}

	fileRoot, envRoot, flagRoot := t.TempDir(), t.TempDir(), t.TempDir()
	for dir, name := range map[string]string{fileRoot: "from-file", envRoot: "from-env", flagRoot: "from-flag"} {
		os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644)
	}
	cfg := filepath.Join(xdg, "semfs", "semfs.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	os.WriteFile(cfg, []byte("root = \""+fileRoot+"\"\n[http]\nlisten = \"127.0.0.1:1234\"\ntokens = \"/etc/t.json\"\n"), 0o644)

	c = configOf(t)
	if c[""].Value != cfg || c["root"].Value != fileRoot || c["root"].Source != "file "+cfg || c["http.tokens"].Value != "/etc/t.json" {
		t.Errorf("XDG file: %+v", c)
	}
	ls := func(args ...string) string {
		out, errs, code := runCLI(t, append(args, "ls", "/")...)
		if code != 0 {
			t.Fatalf("ls: exit %d: %s", code, errs)
		}
		return strings.TrimSpace(out)
	}
	if got := ls(); got != "from-file" {
		t.Errorf("ls with root from the file = %q", got)
	}

	t.Setenv("SEMFS_DATA", envRoot)
	t.Setenv("SEMFS_HTTP_LISTEN", ":5555")
	c = configOf(t)
	if c["root"].Value != envRoot || c["root"].Source != "env SEMFS_DATA" || c["http.listen"].Source != "env SEMFS_HTTP_LISTEN" || c["http.tokens"].Source != "file "+cfg {
		t.Errorf("env over file: %+v", c)
	}
	if got := ls(); got != "from-env" {
		t.Errorf("ls with root from the environment = %q", got)
	}

	c = configOf(t, "--root", flagRoot)
	if c["root"].Value != flagRoot || c["root"].Source != "flag --root" {
		t.Errorf("flag over env: %+v", c["root"])
	}
	if got := ls("--root", flagRoot); got != "from-flag" {
		t.Errorf("ls with --root = %q", got)
	}

	// An explicit file beats the default one; it must exist; typos are errors.
	other := filepath.Join(t.TempDir(), "other.toml")
	os.WriteFile(other, []byte("index = \"/x/index.db\"\n"), 0o644)
	t.Setenv("SEMFS_CONFIG", other)
	if c = configOf(t); c[""].Value != other || c["index"].Value != "/x/index.db" {
		t.Errorf("SEMFS_CONFIG: %+v", c)
	}
	if c = configOf(t, "--config", cfg); c[""].Value != cfg {
		t.Errorf("--config over SEMFS_CONFIG: file %q", c[""].Value)
	}
	if _, errs, code := runCLI(t, "--config", filepath.Join(xdg, "missing.toml"), "config"); code != ExitUsage || !strings.Contains(errs, "missing.toml") {
		t.Errorf("missing --config file: exit %d, %s", code, errs)
	}
	os.WriteFile(other, []byte("rooot = \"/x\"\n"), 0o644)
	if _, errs, code := runCLI(t, "ls", "/"); code != ExitUsage || !strings.Contains(errs, "unknown keys rooot") {
		t.Errorf("unknown key: exit %d, %s", code, errs)
	}
}

// semfs http refuses bad settings before it opens anything, whichever
// source they came from.
func TestHTTPUsageErrors(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	os.Unsetenv("SEMFS_HTTP_TOKENS")
	os.Unsetenv("SEMFS_TOKENS") // wins over SEMFS_HTTP_TOKENS
	os.Unsetenv("SEMFS_HTTP_MCP_PATH")
	root := t.TempDir()
	badTokens := filepath.Join(root, "tokens.json")
	os.WriteFile(badTokens, []byte(`{"tokens": {"t": {"id": "x", "grups": ["a"]}}}`), 0o600)
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"http"}, "--tokens FILE is required"},
		{nil, []string{"http", "--tokens", badTokens}, `unknown field "grups"`},
		{map[string]string{"SEMFS_HTTP_TOKENS": badTokens}, []string{"http"}, `unknown field "grups"`},
		{map[string]string{"SEMFS_HTTP_TOKENS": badTokens, "SEMFS_HTTP_MCP_PATH": "mcp"}, []string{"http"}, `--mcp-path "mcp"`},
		{nil, []string{"http", "--tokens", badTokens, "--mcp-path", "/v1/mcp"}, "outside /v1/"},
	} {
		for k, v := range c.env {
			t.Setenv(k, v)
		}
		_, errs, code := runCLI(t, append([]string{"--root", root}, c.args...)...)
		if code != ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v %v: exit %d, %q; want exit %d with %q", c.env, c.args, code, errs, ExitUsage, c.want)
		}
		for k := range c.env {
			os.Unsetenv(k)
		}
	}
}
