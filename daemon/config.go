package daemon

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/semfs/semfs/meta"
)

// Modes of the daemon.
const (
	ModeMount    = "mount"    // FUSE mount + control socket
	ModeHeadless = "headless" // control socket only, no FUSE
	ModeOff      = "off"      // do nothing and exit 0
)

// Config is the daemon's configuration. Every field has a flag and an
// environment variable; flags win over the environment, which wins over the
// defaults (see ParseConfig and docs/daemon.md).
type Config struct {
	Mount string // SEMFS_MOUNT, -mount: mount point (default /context)
	Data  string // SEMFS_DATA, -data: backing directory (default /var/lib/semfs/data)
	Index string // SEMFS_INDEX, -index: SQLite index file or postgres:// URL (default /var/lib/semfs/index.db)
	Store string // SEMFS_STORE, -store: "" (files in Data) or s3://bucket/prefix
	State string // SEMFS_STATE, -state: directory of the model-identity marker when the index is PostgreSQL (default: Data/../state)
	S3    S3Config
	HTTP  HTTPConfig
	// Tokens (SEMFS_TOKENS, -tokens; SEMFS_HTTP_TOKENS and -http-tokens
	// are older names) is the daemon's tokens file (see httpapi.LoadConfig):
	// each token names a principal (groups, admin) and a path policy. HTTP
	// requests carry one as a bearer token; a process that registers over
	// the socket with one acts as its principal on the mount and the
	// socket. Without it, every caller of the mount and the socket has no
	// groups and may read and write everywhere.
	Tokens      string
	Socket      string // SEMFS_SOCKET, -socket: control socket (default /run/semfs.sock as root, else /tmp/semfs.sock)
	SocketGroup string // SEMFS_SOCKET_GROUP, -socket-group: group owning the socket (default: the daemon's)
	Mode        string // SEMFS_MODE, -mode: mount, headless or off (default mount)
	Ready       string // SEMFS_READY, -ready: file written once the daemon serves (default: none)
	DropCaps    bool   // SEMFS_DROP_CAPS, -drop-caps: drop capabilities once mounted (default true)
	AllowOther  bool   // SEMFS_ALLOW_OTHER, -allow-other: let other users use the mount (default true as root)
	// AttrTimeout is how long the kernel caches attributes and names. Zero
	// means automatic: a minute for a backing directory only this daemon
	// changes (it tells the kernel of every change made behind the mount),
	// a second for a bucket other daemons may change or a tree given in
	// code.
	AttrTimeout time.Duration
	// Passthrough (SEMFS_PASSTHROUGH, -passthrough; default true) lets the
	// kernel read and write backing files directly (FUSE passthrough).
	// It needs CAP_SYS_ADMIN in the serving process, so a daemon that
	// dropped its capabilities serves reads and writes itself regardless.
	Passthrough bool
	// CloseDelay (SEMFS_CLOSE_DELAY, -close-delay; default 100ms) is the
	// longest the index update of a closed file waits, so that a stream of
	// closes is stored in batches (meta.Options.CloseDelay). Every read of
	// the index stores what is pending first, and a journal beside the
	// index keeps pending writers across a crash. 0 stores each file's
	// row at its close.
	CloseDelay time.Duration
	// OpenFree (SEMFS_OPEN_FREE, -open-free; default false) opens and
	// closes files of the mount without a FUSE request
	// (fusefs.Options.OpenFree): a walk that opens many small files
	// (grep -r) costs a READ per file cold and nothing warm, instead of
	// an OPEN and a RELEASE per file. It gives up passthrough (every read
	// and write goes through the daemon), indexes a file written through
	// the mount a moment after its last write instead of at close(2), and
	// refuses a write the caller may not make at write(2) instead of at
	// open(2). It needs a backing directory only this daemon changes (the
	// kernel keeps pages across opens): not with -store. And it needs
	// every caller who can see a file to be allowed to write it if any
	// may (a shared mapping's pages are written back as the file's last
	// caller): the daemon refuses to start with a token that may read a
	// path it may not write.
	OpenFree bool
	Debug    bool
}

// S3Config reaches the object store of an s3:// Store. The secret key is
// never printed.
type S3Config struct {
	Endpoint  string // SEMFS_S3_ENDPOINT: host:port
	AccessKey string // SEMFS_S3_ACCESS_KEY
	SecretKey string // SEMFS_S3_SECRET_KEY
	Secure    bool   // SEMFS_S3_SECURE: use https
}

// HTTPConfig turns on the daemon's HTTP front end: the JSON API and, with
// MCPPath, MCP over streamable HTTP, both with the bearer tokens of
// Config.Tokens.
type HTTPConfig struct {
	Listen  string // SEMFS_HTTP_LISTEN, -http: host:port ("" = no HTTP)
	MCPPath string // SEMFS_HTTP_MCP_PATH, -mcp-path: e.g. /mcp ("" = no MCP over HTTP)
}

// IndexIsPostgres reports whether the index is a PostgreSQL URL.
func (c Config) IndexIsPostgres() bool {
	return strings.HasPrefix(c.Index, "postgres://") || strings.HasPrefix(c.Index, "postgresql://")
}

// DefaultConfig returns the defaults, before flags and environment.
func DefaultConfig() Config {
	sock := "/tmp/semfs.sock"
	if os.Geteuid() == 0 {
		sock = "/run/semfs.sock"
	}
	return Config{
		Mount:       "/context",
		Data:        "/var/lib/semfs/data",
		Index:       "/var/lib/semfs/index.db",
		Socket:      sock,
		Mode:        ModeMount,
		DropCaps:    true,
		AllowOther:  os.Geteuid() == 0,
		Passthrough: true,
		CloseDelay:  meta.DefaultCloseDelay,
	}
}

// ParseConfig builds a Config from the defaults, then getenv (os.Getenv when
// nil), then args (flags, without the program name). Output for -h goes to
// out.
func ParseConfig(args []string, getenv func(string) string, out io.Writer) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	c := DefaultConfig()
	var errs []string
	str := func(dst *string, key string) {
		if v := getenv(key); v != "" {
			*dst = v
		}
	}
	boolean := func(dst *bool, key string) {
		switch strings.ToLower(getenv(key)) {
		case "":
		case "1", "true", "yes", "on":
			*dst = true
		case "0", "false", "no", "off":
			*dst = false
		default:
			errs = append(errs, fmt.Sprintf("%s=%q: want 1 or 0", key, getenv(key)))
		}
	}
	str(&c.Mount, "SEMFS_MOUNT")
	str(&c.Data, "SEMFS_DATA")
	str(&c.Index, "SEMFS_INDEX")
	str(&c.Store, "SEMFS_STORE")
	str(&c.State, "SEMFS_STATE")
	str(&c.S3.Endpoint, "SEMFS_S3_ENDPOINT")
	str(&c.S3.AccessKey, "SEMFS_S3_ACCESS_KEY")
	str(&c.S3.SecretKey, "SEMFS_S3_SECRET_KEY")
	boolean(&c.S3.Secure, "SEMFS_S3_SECURE")
	str(&c.HTTP.Listen, "SEMFS_HTTP_LISTEN")
	str(&c.Tokens, "SEMFS_HTTP_TOKENS")
	str(&c.Tokens, "SEMFS_TOKENS")
	str(&c.HTTP.MCPPath, "SEMFS_HTTP_MCP_PATH")
	str(&c.Socket, "SEMFS_SOCKET")
	str(&c.SocketGroup, "SEMFS_SOCKET_GROUP")
	str(&c.Mode, "SEMFS_MODE")
	str(&c.Ready, "SEMFS_READY")
	boolean(&c.DropCaps, "SEMFS_DROP_CAPS")
	boolean(&c.AllowOther, "SEMFS_ALLOW_OTHER")
	boolean(&c.Passthrough, "SEMFS_PASSTHROUGH")
	boolean(&c.OpenFree, "SEMFS_OPEN_FREE")
	if v := getenv("SEMFS_CLOSE_DELAY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			errs = append(errs, fmt.Sprintf("SEMFS_CLOSE_DELAY=%q: want a duration such as 100ms, or 0 to store each file at its close", v))
		} else {
			c.CloseDelay = d
		}
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("daemon: %s", strings.Join(errs, "; "))
	}

	fl := flag.NewFlagSet("semfs serve", flag.ContinueOnError)
	fl.SetOutput(out)
	fl.StringVar(&c.Mount, "mount", c.Mount, "mount point (env SEMFS_MOUNT)")
	fl.StringVar(&c.Data, "data", c.Data, "backing directory holding the files (env SEMFS_DATA)")
	fl.StringVar(&c.Index, "index", c.Index, "SQLite index file, or postgres://user@host:port/db to share the index between daemons (env SEMFS_INDEX)")
	fl.StringVar(&c.Store, "store", c.Store, "s3://bucket/prefix to keep file contents in an S3-compatible bucket instead of -data (env SEMFS_STORE; endpoint and keys from SEMFS_S3_ENDPOINT, SEMFS_S3_ACCESS_KEY, SEMFS_S3_SECRET_KEY)")
	fl.StringVar(&c.HTTP.Listen, "http", c.HTTP.Listen, "also serve the HTTP API on host:port (env SEMFS_HTTP_LISTEN)")
	fl.StringVar(&c.Tokens, "tokens", c.Tokens, "tokens file: principals (groups, admin) and path policies for HTTP bearer tokens and for processes that register with a token (env SEMFS_TOKENS)")
	fl.StringVar(&c.Tokens, "http-tokens", c.Tokens, "older name of -tokens (env SEMFS_HTTP_TOKENS)")
	fl.StringVar(&c.HTTP.MCPPath, "mcp-path", c.HTTP.MCPPath, "serve MCP over streamable HTTP at this URL path, e.g. /mcp (env SEMFS_HTTP_MCP_PATH)")
	fl.StringVar(&c.State, "state", c.State, "directory of the model-identity marker when the index is PostgreSQL (env SEMFS_STATE)")
	fl.StringVar(&c.Socket, "socket", c.Socket, "control socket path (env SEMFS_SOCKET)")
	fl.StringVar(&c.SocketGroup, "socket-group", c.SocketGroup, "group that may connect to the socket (env SEMFS_SOCKET_GROUP)")
	fl.StringVar(&c.Mode, "mode", c.Mode, "mount, headless (socket only) or off (env SEMFS_MODE)")
	fl.StringVar(&c.Ready, "ready", c.Ready, "file to write once serving, for supervisors (env SEMFS_READY)")
	fl.BoolVar(&c.DropCaps, "drop-caps", c.DropCaps, "drop capabilities once the mount is up (env SEMFS_DROP_CAPS)")
	fl.BoolVar(&c.AllowOther, "allow-other", c.AllowOther, "let other users use the mount (env SEMFS_ALLOW_OTHER)")
	fl.DurationVar(&c.AttrTimeout, "attr-timeout", c.AttrTimeout, "how long the kernel caches attributes and names (0: a minute over a backing directory, a second over a bucket)")
	fl.BoolVar(&c.Passthrough, "passthrough", c.Passthrough, "let the kernel read and write backing files directly when the daemon holds CAP_SYS_ADMIN (env SEMFS_PASSTHROUGH)")
	fl.DurationVar(&c.CloseDelay, "close-delay", c.CloseDelay, "longest a closed file waits for its index update, so closes are stored in batches; 0 stores each at its close (env SEMFS_CLOSE_DELAY)")
	fl.BoolVar(&c.OpenFree, "open-free", c.OpenFree, "open and close files of the mount without a FUSE request; reads and writes go through the daemon, written files are indexed a moment after their last write (env SEMFS_OPEN_FREE)")
	fl.BoolVar(&c.Debug, "debug", c.Debug, "log every FUSE request")
	if err := fl.Parse(args); err != nil {
		return c, err
	}
	if fl.NArg() > 0 {
		return c, fmt.Errorf("daemon: unexpected arguments %q", fl.Args())
	}
	return c, c.validate()
}

func (c *Config) validate() error {
	switch c.Mode {
	case ModeMount, ModeHeadless, ModeOff:
	default:
		return fmt.Errorf("daemon: SEMFS_MODE/-mode %q: want mount, headless or off", c.Mode)
	}
	paths := []*string{&c.Mount, &c.Data, &c.Socket}
	if !c.IndexIsPostgres() {
		paths = append(paths, &c.Index)
	}
	if c.Store != "" && !strings.HasPrefix(c.Store, "s3://") {
		return fmt.Errorf("daemon: SEMFS_STORE/-store %q: want s3://bucket/prefix, or nothing to keep files in -data", c.Store)
	}
	if c.Store != "" && c.S3.Endpoint == "" {
		return fmt.Errorf("daemon: -store %s needs the object store's address: set SEMFS_S3_ENDPOINT (host:port) and its keys", c.Store)
	}
	if c.HTTP.Listen != "" && c.Tokens == "" {
		return fmt.Errorf("daemon: -http %s needs -tokens FILE (SEMFS_TOKENS): every HTTP request carries a bearer token", c.HTTP.Listen)
	}
	if c.HTTP.MCPPath != "" && (!strings.HasPrefix(c.HTTP.MCPPath, "/") || strings.HasPrefix(c.HTTP.MCPPath, "/v1/")) {
		return fmt.Errorf("daemon: -mcp-path %q: give an absolute URL path outside /v1/, e.g. /mcp", c.HTTP.MCPPath)
	}
	if c.OpenFree && c.Store != "" {
		return fmt.Errorf("daemon: SEMFS_OPEN_FREE/-open-free needs a backing directory only this daemon changes, where the kernel may keep pages across opens; -store %s is a bucket other daemons may change: unset SEMFS_OPEN_FREE or -store", c.Store)
	}
	if c.CloseDelay < 0 {
		return fmt.Errorf("daemon: -close-delay %s: want 0 (store each file at its close) or a positive duration such as 100ms", c.CloseDelay)
	}
	if c.State == "" {
		c.State = filepath.Join(filepath.Dir(c.Data), "state")
	}
	paths = append(paths, &c.State)
	for _, p := range paths {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	if c.Mode == ModeMount && (strings.HasPrefix(c.Data+"/", c.Mount+"/") || strings.HasPrefix(c.Mount+"/", c.Data+"/")) {
		return fmt.Errorf("daemon: the mount point %s and the backing directory %s must not contain each other", c.Mount, c.Data)
	}
	return nil
}
