package mcpserver

import (
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/semfs/semfs/httpapi"
)

// HTTPHandler serves MCP over streamable HTTP with the bearer tokens of api:
// each token gets one MCP server acting as its principal, over the tree its
// path policy allows, so a session begun with one token cannot be continued
// with another. A missing or unknown token is refused before any MCP
// handling.
func HTTPHandler(api *httpapi.API, version string) http.Handler {
	var mu sync.Mutex
	handlers := map[*httpapi.Session]http.Handler{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess, ok := api.Authenticate(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="semfs"`)
			httpapi.WriteError(w, http.StatusUnauthorized, "missing or unknown bearer token: send Authorization: Bearer TOKEN")
			return
		}
		mu.Lock()
		h, ok := handlers[sess]
		if !ok {
			srv := New(sess.FS, Options{Principal: sess.Principal, ReadOnly: sess.ReadOnly, Version: version})
			h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP() }, nil)
			handlers[sess] = h
		}
		mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// Mux serves the JSON API of api at /, and MCP over streamable HTTP at
// mcpPath when it is not empty.
func Mux(api *httpapi.API, mcpPath, version string) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/", api)
	if mcpPath != "" {
		mux.Handle(mcpPath, HTTPHandler(api, version))
	}
	return mux
}
