// Package client is the Go SDK of the semfs daemon: it talks to the control
// socket (package wire) to register an app, tag files, query and search, and
// offers the daemon's tree as a semfs.FS.
//
// # When the daemon is not there (seed 000's rules)
//
//   - No socket configured ([FromEnv] with SEMFS_SOCKET unset): the client
//     is a no-op. Register and Tag return nil, Query and Search return
//     nothing, and FS is an empty read-only tree.
//   - A socket configured but unreachable: Tag, Query, Search and every FS
//     call return an error wrapping [ErrUnavailable] — an outage never looks
//     like "nothing matched". Register logs a warning and returns nil, and
//     that app's writes go unattributed.
//
// A Client is safe for concurrent use; it keeps a small pool of
// connections. Register attributes the calling process (and its children):
// the daemon reads the pid from the socket's peer credentials.
package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/wire"
)

// ErrUnavailable is wrapped by errors that mean the daemon could not be
// reached.
var ErrUnavailable = errors.New("semfs daemon unavailable")

// Client talks to one daemon.
type Client struct {
	path string // "" for the no-op client
	// Logf receives warnings (a failed Register); nil means log.Printf.
	Logf func(format string, args ...any)
	// DialTimeout bounds connecting; 0 means 5 seconds.
	DialTimeout time.Duration

	mu   sync.Mutex
	idle []*conn
	next uint64
}

type conn struct {
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

// New returns a client of the daemon at socketPath. It does not connect
// until the first call.
func New(socketPath string) *Client { return &Client{path: socketPath} }

// FromEnv returns a client of the socket named by SEMFS_SOCKET, or the
// no-op client when it is unset or empty.
func FromEnv() *Client { return New(os.Getenv("SEMFS_SOCKET")) }

// NoOp reports whether c is the no-op client (no socket configured).
func (c *Client) NoOp() bool { return c.path == "" }

// Close closes the client's idle connections.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cn := range c.idle {
		cn.c.Close()
	}
	c.idle = nil
	return nil
}

func (c *Client) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
		return
	}
	log.Printf(format, args...)
}

func (c *Client) get(ctx context.Context) (*conn, error) {
	c.mu.Lock()
	if n := len(c.idle); n > 0 {
		cn := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		return cn, nil
	}
	c.mu.Unlock()
	return c.dial(ctx)
}

// dial opens a new connection.
func (c *Client) dial(ctx context.Context) (*conn, error) {
	d := net.Dialer{Timeout: c.DialTimeout}
	if d.Timeout == 0 {
		d.Timeout = 5 * time.Second
	}
	nc, err := d.DialContext(ctx, "unix", c.path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUnavailable, c.path, err)
	}
	return &conn{c: nc, r: bufio.NewReaderSize(nc, 64<<10), w: bufio.NewWriterSize(nc, 64<<10)}, nil
}

func (c *Client) put(cn *conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.idle) < 8 {
		c.idle = append(c.idle, cn)
		return
	}
	cn.c.Close()
}

// Call sends one request and decodes its result into result (which may be
// nil). A daemon error comes back in the contract's shape (errors.Is works
// with the semfs sentinels); a transport failure wraps ErrUnavailable.
func (c *Client) Call(ctx context.Context, op string, args, result any) error {
	if c.NoOp() {
		return fmt.Errorf("%w: no socket configured (SEMFS_SOCKET is unset)", ErrUnavailable)
	}
	var raw json.RawMessage
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return err
		}
		raw = b
	}
	c.mu.Lock()
	c.next++
	id := c.next
	c.mu.Unlock()
	line, err := json.Marshal(wire.Request{V: wire.Version, ID: id, Op: op, Args: raw})
	if err != nil {
		return err
	}
	if len(line) > wire.MaxLine {
		return semfs.PathErr(op, "/", semfs.ErrInvalid, fmt.Sprintf("request of %d bytes exceeds the socket's %d-byte line limit", len(line), wire.MaxLine))
	}
	// A pooled connection may have been closed by the daemon: retry once
	// on a fresh one when nothing was answered.
	for attempt := 0; ; attempt++ {
		cn, err := c.get(ctx)
		if err != nil {
			return err
		}
		resp, err := roundTrip(ctx, cn, line)
		if err != nil {
			cn.c.Close()
			if attempt == 0 {
				continue
			}
			return fmt.Errorf("%w: %s: %v", ErrUnavailable, c.path, err)
		}
		c.put(cn)
		if resp.ID != id {
			return fmt.Errorf("semfs client: response id %d for request %d", resp.ID, id)
		}
		if resp.Error != nil {
			return resp.Error.Err()
		}
		if result != nil && len(resp.Result) > 0 {
			return json.Unmarshal(resp.Result, result)
		}
		return nil
	}
}

func roundTrip(ctx context.Context, cn *conn, line []byte) (wire.Response, error) {
	var resp wire.Response
	if dl, ok := ctx.Deadline(); ok {
		cn.c.SetDeadline(dl)
		defer cn.c.SetDeadline(time.Time{})
	}
	if _, err := cn.w.Write(append(line, '\n')); err != nil {
		return resp, err
	}
	if err := cn.w.Flush(); err != nil {
		return resp, err
	}
	b, err := cn.r.ReadBytes('\n')
	if err != nil {
		return resp, err
	}
	return resp, json.Unmarshal(b, &resp)
}

// RegisterOption configures Register.
type RegisterOption func(*registerArgs)

type registerArgs struct {
	wire.RegisterArgs
	tokenSet bool
}

// WithToken registers with token, one of the daemon's tokens: the process
// and its children then act as the token's principal (its groups and path
// policy) on the mount and the socket. It overrides the environment's
// token (see EnvToken); an empty token registers without one.
func WithToken(token string) RegisterOption {
	return func(a *registerArgs) { a.Token, a.tokenSet = token, true }
}

// envToken holds the token last read from the environment (see EnvToken).
var envToken struct {
	mu    sync.Mutex
	token string
}

// EnvToken returns the token the environment gives this process: the
// contents of the file SEMFS_TOKEN_FILE names (surrounding white space
// trimmed; the preferred way), else SEMFS_TOKEN; "" for none. It removes
// both variables from the process's environment once read, so that
// children it starts later do not inherit the token, and keeps the token
// for later calls. (The environment the process started with stays
// readable in /proc/PID/environ to its uid: prefer SEMFS_TOKEN_FILE.)
func EnvToken() (string, error) {
	envToken.mu.Lock()
	defer envToken.mu.Unlock()
	file, fileSet := os.LookupEnv("SEMFS_TOKEN_FILE")
	tok, tokSet := os.LookupEnv("SEMFS_TOKEN")
	if !fileSet && !tokSet {
		return envToken.token, nil
	}
	os.Unsetenv("SEMFS_TOKEN_FILE")
	os.Unsetenv("SEMFS_TOKEN")
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("semfs: SEMFS_TOKEN_FILE: %w", err)
		}
		tok = strings.TrimSpace(string(b))
		if tok == "" {
			return "", fmt.Errorf("semfs: SEMFS_TOKEN_FILE %s is empty", file)
		}
	}
	envToken.token = tok
	return tok, nil
}

// Register attributes the calling process's later writes (through the
// mount and the socket) to app. The token comes from WithToken, else from
// the environment (EnvToken: SEMFS_TOKEN_FILE, else SEMFS_TOKEN); without
// one the process acts with no groups. An unknown token, or a token file
// that cannot be read, is an error and registers nothing. With a token, an
// empty app registers under the token's app (else its id). When the daemon
// cannot be reached it logs a warning and returns nil: the app carries on,
// unattributed.
func (c *Client) Register(ctx context.Context, app string, opts ...RegisterOption) error {
	if c.NoOp() {
		return nil
	}
	args := registerArgs{RegisterArgs: wire.RegisterArgs{App: app}}
	for _, o := range opts {
		o(&args)
	}
	if !args.tokenSet {
		tok, err := EnvToken()
		if err != nil {
			return err
		}
		args.Token = tok
	}
	err := c.Call(ctx, wire.OpRegister, args.RegisterArgs, nil)
	if errors.Is(err, ErrUnavailable) {
		c.logf("semfs: register %q: %v; this app's writes will not be attributed", app, err)
		return nil
	}
	return err
}

// Tag replaces the tags of path.
func (c *Client) Tag(ctx context.Context, path string, tags semfs.Tags) error {
	if c.NoOp() {
		return nil
	}
	return c.Call(ctx, wire.OpTag, wire.TagArgs{Path: path, Tags: tags}, nil)
}

// Query runs seed 000's tag query; limit <= 0 means all matches.
func (c *Client) Query(ctx context.Context, text string, limit int) ([]semfs.QueryResult, error) {
	if c.NoOp() {
		return nil, nil
	}
	var out []semfs.QueryResult
	err := c.Call(ctx, wire.OpQuery, wire.QueryArgs{Text: text, Limit: limit}, &out)
	return out, err
}

// Search runs one page of a content search.
func (c *Client) Search(ctx context.Context, req semfs.SearchRequest) (hits []semfs.SearchHit, next string, err error) {
	if c.NoOp() {
		return nil, "", nil
	}
	var out wire.SearchResult
	err = c.Call(ctx, wire.OpSearch, req, &out)
	return out.Hits, out.Next, err
}

// Related returns likely duplicates and relatives of path.
func (c *Client) Related(ctx context.Context, path string, limit int) ([]semfs.Candidate, error) {
	if c.NoOp() {
		return nil, nil
	}
	var out []semfs.Candidate
	err := c.Call(ctx, wire.OpRelated, wire.RelatedArgs{Path: path, Limit: limit}, &out)
	return out, err
}

// Stat describes path, with its metadata when the daemon keeps it.
func (c *Client) Stat(ctx context.Context, path string) (wire.Stat, error) {
	var out wire.Stat
	if c.NoOp() {
		return out, semfs.PathErr("stat", path, semfs.ErrNotExist, "no semfs daemon configured")
	}
	err := c.Call(ctx, wire.OpStat, wire.PathArgs{Path: path}, &out)
	return out, err
}

// Health asks the daemon whether it is ready.
func (c *Client) Health(ctx context.Context) (wire.Health, error) {
	var out wire.Health
	err := c.Call(ctx, wire.OpHealth, nil, &out)
	return out, err
}

// Doctor returns the daemon's health report.
func (c *Client) Doctor(ctx context.Context) (wire.Doctor, error) {
	var out wire.Doctor
	err := c.Call(ctx, wire.OpDoctor, nil, &out)
	return out, err
}

// Snapshot writes a snapshot archive of the daemon's tree to out. The
// client creates a temporary file beside out itself (with its own
// permissions), passes its descriptor to the daemon, which writes the
// archive into it, and renames it over out: the daemon opens no path.
// The daemon answers only an admin token's principal, or a caller of uid
// 0 or its own uid registered without a token; out may not be inside the
// mount.
func (c *Client) Snapshot(ctx context.Context, out string) (res wire.SnapshotResult, err error) {
	if c.NoOp() {
		return res, fmt.Errorf("%w: no socket configured (SEMFS_SOCKET is unset)", ErrUnavailable)
	}
	out, err = filepath.Abs(out)
	if err != nil {
		return res, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".semfs-snapshot-*")
	if err != nil {
		return res, fmt.Errorf("snapshot: %w", err)
	}
	defer func() {
		tmp.Close()
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	args, err := json.Marshal(wire.SnapshotArgs{Out: out, FD: true})
	if err != nil {
		return res, err
	}
	c.mu.Lock()
	c.next++
	id := c.next
	c.mu.Unlock()
	line, err := json.Marshal(wire.Request{V: wire.Version, ID: id, Op: wire.OpSnapshot, Args: args})
	if err != nil {
		return res, err
	}
	// A connection of its own: the descriptor goes with the line's bytes.
	cn, err := c.dial(ctx)
	if err != nil {
		return res, err
	}
	defer cn.c.Close()
	uc, ok := cn.c.(*net.UnixConn)
	if !ok {
		return res, errors.New("snapshot: the socket is not a Unix socket")
	}
	if dl, ok := ctx.Deadline(); ok {
		uc.SetDeadline(dl)
	}
	rights := unix.UnixRights(int(tmp.Fd()))
	if _, _, err := uc.WriteMsgUnix(append(line, '\n'), rights, nil); err != nil {
		return res, fmt.Errorf("%w: %s: %v", ErrUnavailable, c.path, err)
	}
	b, err := cn.r.ReadBytes('\n')
	if err != nil {
		return res, fmt.Errorf("%w: %s: %v", ErrUnavailable, c.path, err)
	}
	var resp wire.Response
	if err := json.Unmarshal(b, &resp); err != nil {
		return res, err
	}
	if resp.Error != nil {
		return res, resp.Error.Err()
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return res, err
	}
	if info, err := tmp.Stat(); err == nil && info.Size() == 0 && res.Bytes > 0 {
		// A daemon that predates descriptor passing wrote out itself.
		os.Remove(tmp.Name())
		res.Out = out
		return res, nil
	}
	if err := tmp.Sync(); err != nil {
		return res, err
	}
	if err := tmp.Close(); err != nil {
		return res, err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return res, err
	}
	if d, err := os.Open(filepath.Dir(out)); err == nil {
		d.Sync()
		d.Close()
	}
	res.Out = out
	return res, nil
}

// WaitReady polls Health until the daemon answers ready or ctx is done.
func (c *Client) WaitReady(ctx context.Context) error {
	for {
		h, err := c.Health(ctx)
		if err == nil && h.Ready {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = errors.New("daemon answers but is not ready")
			}
			return fmt.Errorf("waiting for the semfs daemon: %w (%v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
