package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/semfs/semfs/daemon"
)

// A setting is one configurable value. Its sources, strongest first: the
// command-line flag, the environment variable, the configuration file, the
// default.
type setting struct {
	Key  string // in the configuration file, "." for a table: http.listen
	Env  string // SEMFS_...
	Old  string // an older name of Env, which Env wins over
	Flag string // the flag that sets it on the commands that take it
	Help string
	Def  func() string
}

var settings = []setting{
	{Key: "root", Env: "SEMFS_DATA", Flag: "root", Help: "host directory holding the tree's files", Def: func() string { return "." }},
	{Key: "index", Env: "SEMFS_INDEX", Flag: "index", Help: "index database (empty: ROOT/.semfs/index.db)", Def: func() string { return "" }},
	{Key: "socket", Env: "SEMFS_SOCKET", Flag: "socket", Help: "control socket of the daemon", Def: func() string { return daemon.DefaultConfig().Socket }},
	{Key: "mount", Env: "SEMFS_MOUNT", Help: "mount point of semfs serve", Def: func() string { return daemon.DefaultConfig().Mount }},
	{Key: "mode", Env: "SEMFS_MODE", Help: "semfs serve mode: mount, headless or off", Def: func() string { return daemon.DefaultConfig().Mode }},
	{Key: "socket_group", Env: "SEMFS_SOCKET_GROUP", Help: "group owning the control socket", Def: func() string { return "" }},
	{Key: "store", Env: "SEMFS_STORE", Help: "s3://bucket/prefix: keep file contents in an S3-compatible bucket (semfs serve)", Def: func() string { return "" }},
	{Key: "state", Env: "SEMFS_STATE", Help: "directory of the model-identity marker when the index is PostgreSQL", Def: func() string { return "" }},
	{Key: "s3.endpoint", Env: "SEMFS_S3_ENDPOINT", Help: "host:port of the S3-compatible server (the secret key comes only from SEMFS_S3_SECRET_KEY)", Def: func() string { return "" }},
	{Key: "s3.access_key", Env: "SEMFS_S3_ACCESS_KEY", Help: "access key of the S3-compatible server", Def: func() string { return "" }},
	{Key: "http.listen", Env: "SEMFS_HTTP_LISTEN", Flag: "listen", Help: "address of semfs http", Def: func() string { return "127.0.0.1:7434" }},
	{Key: "http.tokens", Env: "SEMFS_TOKENS", Old: "SEMFS_HTTP_TOKENS", Flag: "tokens", Help: "tokens file of semfs http and semfs serve (SEMFS_HTTP_TOKENS is an older name)", Def: func() string { return "" }},
	{Key: "http.mcp_path", Env: "SEMFS_HTTP_MCP_PATH", Flag: "mcp-path", Help: "URL path of MCP over HTTP (empty: off)", Def: func() string { return "" }},
}

// env returns the setting's value in the environment: Env's when set and
// not empty, else Old's.
func (s setting) env() (string, bool) {
	if v, ok := os.LookupEnv(s.Env); ok && v != "" || s.Old == "" {
		return v, ok
	}
	return os.LookupEnv(s.Old)
}

// envName is the variable env took its value from.
func (s setting) envName() string {
	if v := os.Getenv(s.Env); v != "" || s.Old == "" {
		return s.Env
	}
	return s.Old
}

// fileConfig is the shape of semfs.toml.
type fileConfig struct {
	Root        string `toml:"root"`
	Index       string `toml:"index"`
	Socket      string `toml:"socket"`
	Mount       string `toml:"mount"`
	Mode        string `toml:"mode"`
	SocketGroup string `toml:"socket_group"`
	Store       string `toml:"store"`
	State       string `toml:"state"`
	S3          struct {
		Endpoint  string `toml:"endpoint"`
		AccessKey string `toml:"access_key"`
	} `toml:"s3"`
	HTTP struct {
		Listen  string `toml:"listen"`
		Tokens  string `toml:"tokens"`
		MCPPath string `toml:"mcp_path"`
	} `toml:"http"`
}

func (c *fileConfig) values() map[string]string {
	v := map[string]string{"root": c.Root, "index": c.Index, "socket": c.Socket, "mount": c.Mount,
		"mode": c.Mode, "socket_group": c.SocketGroup, "store": c.Store, "state": c.State,
		"s3.endpoint": c.S3.Endpoint, "s3.access_key": c.S3.AccessKey,
		"http.listen": c.HTTP.Listen, "http.tokens": c.HTTP.Tokens, "http.mcp_path": c.HTTP.MCPPath}
	for k, s := range v {
		if s == "" {
			delete(v, k)
		}
	}
	return v
}

// configFile finds the configuration file: --config, else SEMFS_CONFIG,
// else $XDG_CONFIG_HOME/semfs/semfs.toml (~/.config/...), else
// /etc/semfs/semfs.toml. A file named explicitly must exist; a default one
// may be missing ("" then).
func (a *App) configFile() (string, error) {
	explicit := a.ConfigPath
	if explicit == "" {
		explicit = os.Getenv("SEMFS_CONFIG")
	}
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", Usagef("config file: %v (check --config or SEMFS_CONFIG)", err)
		}
		return explicit, nil
	}
	var candidates []string
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		candidates = append(candidates, filepath.Join(x, "semfs", "semfs.toml"))
	} else if h, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(h, ".config", "semfs", "semfs.toml"))
	}
	candidates = append(candidates, "/etc/semfs/semfs.toml")
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("config file %s: %w", c, err)
		}
	}
	return "", nil
}

// loadConfig reads the configuration file (once per invocation).
func (a *App) loadConfig() (path string, values map[string]string, err error) {
	if a.fileValues != nil {
		return a.configPath, a.fileValues, nil
	}
	path, err = a.configFile()
	if err != nil || path == "" {
		a.fileValues = map[string]string{}
		return "", a.fileValues, err
	}
	var c fileConfig
	md, err := toml.DecodeFile(path, &c)
	if err != nil {
		return path, nil, Usagef("config file %s: %v", path, err)
	}
	if un := md.Undecoded(); len(un) > 0 {
		var keys []string
		for _, k := range un {
			keys = append(keys, k.String())
		}
		return path, nil, Usagef("config file %s: unknown keys %s (known: %s)", path, strings.Join(keys, ", "), knownKeys())
	}
	a.configPath, a.fileValues = path, c.values()
	return path, a.fileValues, nil
}

func knownKeys() string {
	var k []string
	for _, s := range settings {
		k = append(k, s.Key)
	}
	return strings.Join(k, ", ")
}

// applyConfig gives every setting flag of cmd that was not set on the
// command line its value from the environment or, failing that, the
// configuration file. Commands that parse their own flags (semfs serve)
// get the file's values as environment variables instead, below any set
// in the real environment.
func (a *App) applyConfig(cmd *cobra.Command) error {
	_, values, err := a.loadConfig()
	if err != nil {
		return err
	}
	for _, s := range settings {
		fv, inFile := values[s.Key]
		if cmd.DisableFlagParsing {
			if _, set := s.env(); !set && inFile {
				os.Setenv(s.Env, fv)
			}
			continue
		}
		if s.Flag == "" {
			continue
		}
		f := cmd.Flags().Lookup(s.Flag)
		if f == nil || f.Changed {
			continue
		}
		if ev, ok := s.env(); ok && ev != "" {
			if err := f.Value.Set(ev); err != nil {
				return Usagef("%s=%q: %v", s.envName(), ev, err)
			}
			continue
		}
		if inFile {
			if err := f.Value.Set(fv); err != nil {
				return Usagef("config %s = %q: %v", s.Key, fv, err)
			}
		}
	}
	return nil
}

// ConfigValue is one line of `semfs config --json`.
type ConfigValue struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"` // "flag --root", "env SEMFS_DATA", "file PATH" or "default"
	Env    string `json:"env"`
	Help   string `json:"help"`
}

// ConfigReport is what `semfs config --json` prints.
type ConfigReport struct {
	File   string        `json:"file"` // the configuration file read, "" for none
	Values []ConfigValue `json:"values"`
}

func init() { Register("config", newConfig) }

func newConfig(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration and where each value came from",
		Long: `Print every setting, its effective value and where it came from. Sources, the
strongest first:

  1. command-line flags (--root, --index, --socket, --listen, --tokens, --mcp-path)
  2. environment variables (SEMFS_DATA, SEMFS_INDEX, SEMFS_SOCKET, SEMFS_MOUNT, ...)
  3. the configuration file: --config PATH, else $SEMFS_CONFIG, else
     $XDG_CONFIG_HOME/semfs/semfs.toml (~/.config/semfs/semfs.toml), else
     /etc/semfs/semfs.toml
  4. built-in defaults

The configuration file is TOML:

  root   = "/srv/context"
  index  = "/var/lib/semfs/index.db"
  socket = "/run/semfs.sock"
  mount  = "/context"
  mode   = "mount"          # mount, headless or off

  [http]
  listen   = "127.0.0.1:7434"
  tokens   = "/etc/semfs/tokens.json"
  mcp_path = "/mcp"

Unknown keys are an error, so a typo cannot silently fall back to a default.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, values, err := app.loadConfig()
			if err != nil {
				return err
			}
			rep := ConfigReport{File: path, Values: []ConfigValue{}}
			for _, s := range settings {
				v := ConfigValue{Key: s.Key, Env: s.Env, Help: s.Help, Value: s.Def(), Source: "default"}
				var f *pflag.Flag
				if s.Flag != "" {
					f = cmd.Flags().Lookup(s.Flag)
				}
				switch ev, envSet := s.env(); {
				case f != nil && f.Changed:
					v.Value, v.Source = f.Value.String(), "flag --"+s.Flag
				case envSet && ev != "":
					v.Value, v.Source = ev, "env "+s.envName()
				case values[s.Key] != "":
					v.Value, v.Source = values[s.Key], "file "+path
				}
				rep.Values = append(rep.Values, v)
			}
			if app.JSON {
				return app.PrintJSON(rep)
			}
			if path == "" {
				fmt.Fprintln(app.Stdout, "# no configuration file")
			} else {
				fmt.Fprintf(app.Stdout, "# configuration file: %s\n", path)
			}
			tw := tabwriter.NewWriter(app.Stdout, 0, 4, 2, ' ', 0)
			for _, v := range rep.Values {
				fmt.Fprintf(tw, "%s\t%q\t%s\n", v.Key, v.Value, v.Source)
			}
			return tw.Flush()
		},
	}
}
