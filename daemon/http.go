package daemon

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/semfs/semfs/httpapi"
	"github.com/semfs/semfs/mcpserver"
)

// serveHTTP starts the HTTP front end over the daemon's tree: the JSON API
// and, with a path, MCP over streamable HTTP, with the tokens file's
// principals and policies (each token's policy applied over the tree below
// the daemon's access layer).
func (m *Main) serveHTTP() error {
	cfg := m.Config.HTTP
	hc := m.tokens
	hc.Logger = m.log
	api := httpapi.New(m.fsys, hc)
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("daemon: HTTP front end: listening on %s: %w (change -http, or leave it empty for no HTTP)", cfg.Listen, err)
	}
	m.httpAddr = ln.Addr().String()
	m.http = &http.Server{Handler: mcpserver.Mux(api, cfg.MCPPath, "daemon"), ReadHeaderTimeout: 10 * time.Second}
	m.log.Info("HTTP front end listening", "addr", ln.Addr().String(), "mcp", cfg.MCPPath)
	go func() {
		if err := m.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Error("HTTP front end stopped", "err", err)
		}
	}()
	return nil
}

// HTTPAddr returns the address the HTTP front end listens on ("" if none).
func (m *Main) HTTPAddr() string {
	if m.http == nil {
		return ""
	}
	return m.httpAddr
}
