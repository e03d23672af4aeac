package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs/httpapi"
	"github.com/semfs/semfs/mcpserver"
)

func init() { Register("http", newHTTP) }

func newHTTP(app *App) *cobra.Command {
	var listen, tokens, mcpPath string
	cmd := &cobra.Command{
		Use:   "http",
		Short: "Serve the tree over HTTP: a JSON API, and MCP tools with --mcp-path",
		Long: `Serve the tree at --root over HTTP until interrupted.

The JSON API answers POST /v1/read, /v1/write, /v1/search, ... and GET/PUT
/v1/files/PATH; GET /v1/openapi.json describes it. Every request but
/v1/health and /v1/openapi.json needs "Authorization: Bearer TOKEN", and the
tokens file (JSON) says what each token may see and do:

  {"tokens": {"s3cr3t": {"id": "ci", "app": "ci-bot", "groups": ["billing"],
    "read_only": true, "default": "none",
    "rules": [{"path": "/reports/**", "access": "read"}]}}}

With --mcp-path /mcp the same tokens also reach the MCP tools over streamable
HTTP at that path, one MCP server per token (its principal and policy).

When it is listening, it prints "listening on http://ADDR" to stderr; with
--listen 127.0.0.1:0 the system picks the port.`,
		Example: `  semfs http --root /srv/context --tokens /etc/semfs/tokens.json
  semfs http --listen 127.0.0.1:0 --tokens tokens.json --mcp-path /mcp`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if tokens == "" {
				return Usagef("--tokens FILE is required: a JSON file mapping bearer tokens to principals (see semfs http --help)")
			}
			if mcpPath != "" && (!strings.HasPrefix(mcpPath, "/") || strings.HasPrefix(mcpPath, "/v1/")) {
				return Usagef("--mcp-path %q: give an absolute URL path outside /v1/, e.g. /mcp", mcpPath)
			}
			cfg, err := httpapi.LoadConfig(tokens)
			if err != nil {
				return UsageError{err}
			}
			ctx := cmd.Context()
			m, _, err := app.openIndexedTree(ctx)
			if err != nil {
				return err
			}
			cfg.Logger = app.logger()
			api := httpapi.New(m, cfg)
			mux := mcpserver.Mux(api, mcpPath, version())
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return UnavailableError{fmt.Errorf("listening on %s: %w", listen, err)}
			}
			srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: nil}
			fmt.Fprintf(app.Stderr, "semfs http: listening on http://%s\n", ln.Addr())
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ln) }()
			select {
			case err := <-errc:
				return err
			case <-ctx.Done():
			}
			// MCP event streams stay open: give requests a moment, then close.
			sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			if err := srv.Shutdown(sctx); err != nil {
				srv.Close()
			}
			if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:7434", "address to listen on, host:port (config http.listen, env SEMFS_HTTP_LISTEN)")
	f.StringVar(&tokens, "tokens", "", "JSON file mapping bearer tokens to principals and path rules (config http.tokens, env SEMFS_TOKENS or SEMFS_HTTP_TOKENS)")
	f.StringVar(&mcpPath, "mcp-path", "", "also serve MCP over streamable HTTP at this URL path, e.g. /mcp (config http.mcp_path, env SEMFS_HTTP_MCP_PATH)")
	return cmd
}
