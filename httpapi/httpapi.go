// Package httpapi is semfs's HTTP API: the operations of package ops as
// JSON endpoints (POST /v1/OPERATION), raw file transfer (GET and PUT
// /v1/files/PATH), health, and an OpenAPI description generated from the
// same route table that serves the requests.
//
// Every request carries a bearer token; the configuration maps each token
// to a principal (its groups decide which files exist for it) and a path
// policy (read, write or none by glob). Errors map to HTTP statuses in one
// table; request bodies are size-limited, unknown JSON fields are refused,
// and each request runs under a timeout.
package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/access"
	"github.com/semfs/semfs/ops"
)

// Token is what one bearer token grants.
type Token struct {
	ID       string        `json:"id"`               // principal ID, e.g. "ci"
	App      string        `json:"app,omitempty"`    // recorded as created_by of its new files
	Groups   []string      `json:"groups,omitempty"` // visibility groups
	Admin    bool          `json:"admin,omitempty"`  // sees every file (path rules still apply)
	ReadOnly bool          `json:"read_only,omitempty"`
	Default  access.Access `json:"default,omitempty"` // path policy default: read, write or none (default write)
	Rules    []access.Rule `json:"rules,omitempty"`
}

// Config configures the API.
type Config struct {
	// Tokens maps bearer tokens to what they grant.
	Tokens map[string]Token `json:"tokens"`
	// MaxBody bounds a request body (default 32 MiB); MaxJSON bounds a JSON
	// request (default 1 MiB).
	MaxBody int64 `json:"max_body,omitempty"`
	MaxJSON int64 `json:"max_json,omitempty"`
	// Timeout bounds one request (default 30 s).
	Timeout Duration     `json:"timeout,omitempty"`
	Logger  *slog.Logger `json:"-"`
}

// Duration is a time.Duration written as "30s" in JSON.
type Duration time.Duration

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf(`timeout must be a string such as "30s"`)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// LoadConfig reads a JSON configuration file:
//
//	{"tokens": {"s3cr3t": {"id": "ci", "groups": ["billing"], "read_only": true,
//	  "default": "none", "rules": [{"path": "/reports/**", "access": "read"}]}}}
func LoadConfig(path string) (Config, error) {
	var c Config
	data, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("http config: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("http config %s: %v", path, err)
	}
	if len(c.Tokens) == 0 {
		return c, fmt.Errorf("http config %s: no tokens: every request needs a bearer token", path)
	}
	return c, nil
}

// API serves one tree over HTTP.
type API struct {
	fsys   semfs.FS
	cfg    Config
	log    *slog.Logger
	tokens map[[32]byte]*grant
	mux    *http.ServeMux
}

type grant struct {
	tok     Token
	fs      semfs.FS
	session *Session
}

// New builds the API over fsys (the tree below any access layer: each
// token's policy is applied here).
func New(fsys semfs.FS, cfg Config) *API {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 32 << 20
	}
	if cfg.MaxJSON <= 0 {
		cfg.MaxJSON = 1 << 20
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = Duration(30 * time.Second)
	}
	a := &API{fsys: fsys, cfg: cfg, log: cfg.Logger, tokens: map[[32]byte]*grant{}, mux: http.NewServeMux()}
	if a.log == nil {
		a.log = slog.Default()
	}
	for secret, t := range cfg.Tokens {
		g := &grant{tok: t, fs: access.New(fsys, t.Policy())}
		g.session = &Session{Principal: g.principal(), FS: g.fs, ReadOnly: t.ReadOnly}
		a.tokens[sha256.Sum256([]byte(secret))] = g
	}
	for _, r := range routes {
		a.mux.HandleFunc(r.Method+" "+r.Path, a.wrap(r))
	}
	a.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeErr(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path+"; see GET /v1/openapi.json")
	})
	return a
}

// Policy returns the path policy t grants: its rules over its default
// (write when unset), with write lowered to read for a read-only token.
func (t Token) Policy() access.Policy {
	def := t.Default
	if def == access.Unset {
		def = access.Write
	}
	if !t.ReadOnly {
		return access.Policy{Default: def, Rules: t.Rules}
	}
	rules := make([]access.Rule, len(t.Rules))
	for i, r := range t.Rules {
		r.Access = readOnly(r.Access)
		rules[i] = r
	}
	return access.Policy{Default: readOnly(def), Rules: rules}
}

func readOnly(a access.Access) access.Access {
	if a == access.Write {
		return access.Read
	}
	return a
}

// ServeHTTP implements http.Handler.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

// principal authenticates r.
func (a *API) principal(r *http.Request) (*grant, bool) {
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || tok == "" {
		return nil, false
	}
	g, ok := a.tokens[sha256.Sum256([]byte(tok))]
	return g, ok
}

// Session is what one bearer token grants a request: the principal it acts
// as, its tree (the API's tree under the token's access policy) and whether
// it may change anything.
type Session struct {
	Principal semfs.Principal
	FS        semfs.FS
	ReadOnly  bool
}

// Authenticate returns the session of r's bearer token, or false when r
// carries none or an unknown one. The pointer is the same for every request
// with the same token, so other front ends (MCP over HTTP) may key
// per-token state by it.
func (a *API) Authenticate(r *http.Request) (*Session, bool) {
	g, ok := a.principal(r)
	if !ok {
		return nil, false
	}
	return g.session, true
}

// service returns the operations for an authenticated request.
func (g *grant) service() *ops.Service {
	return &ops.Service{FS: g.fs, Principal: g.principal(), ReadOnly: g.tok.ReadOnly}
}

func (g *grant) principal() semfs.Principal {
	return semfs.Principal{ID: g.tok.ID, App: g.tok.App, Groups: g.tok.Groups, Admin: g.tok.Admin}
}

// WriteError writes an error response in the API's JSON shape (for
// handlers mounted next to the API).
func WriteError(w http.ResponseWriter, status int, msg string) { writeErr(w, status, msg) }

func (a *API) wrap(rt route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if rt.Public {
			rt.Handle(a, nil, w, r)
			return
		}
		g, ok := a.principal(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="semfs"`)
			writeErr(w, http.StatusUnauthorized, "missing or unknown bearer token: send Authorization: Bearer TOKEN")
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), time.Duration(a.cfg.Timeout))
		defer cancel()
		rt.Handle(a, g, w, r.WithContext(ctx))
	}
}

// statuses is the one table mapping the contract's sentinels to HTTP
// statuses; anything else is 500 with a log line.
var statuses = map[error]int{
	semfs.ErrNotExist:   http.StatusNotFound,
	semfs.ErrExist:      http.StatusConflict,
	semfs.ErrPermission: http.StatusForbidden,
	semfs.ErrInvalid:    http.StatusBadRequest,
	semfs.ErrNotDir:     http.StatusConflict,
	semfs.ErrIsDir:      http.StatusConflict,
	semfs.ErrNotEmpty:   http.StatusConflict,
	semfs.ErrReadOnly:   http.StatusForbidden,
	semfs.ErrQuota:      http.StatusInsufficientStorage,
}

// ErrorBody is the JSON body of every error response.
type ErrorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"` // sentinel name: not_exist, permission, ...
}

var codes = map[error]string{
	semfs.ErrNotExist: "not_exist", semfs.ErrExist: "exist", semfs.ErrPermission: "permission",
	semfs.ErrInvalid: "invalid", semfs.ErrNotDir: "not_dir", semfs.ErrIsDir: "is_dir",
	semfs.ErrNotEmpty: "not_empty", semfs.ErrReadOnly: "read_only", semfs.ErrQuota: "quota",
}

func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.DeadlineExceeded) {
		writeErr(w, http.StatusGatewayTimeout, "the request took longer than the server's timeout; narrow it (a smaller path, a limit)")
		return
	}
	s := semfs.Sentinel(err)
	status, ok := statuses[s]
	if !ok {
		status = http.StatusInternalServerError
		a.log.Error("http: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(ErrorBody{Error: ops.Hint(err).Error(), Code: codeOf(s)})
}

func codeOf(s error) string {
	if c, ok := codes[s]; ok {
		return c
	}
	return "internal"
}

func writeErr(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	code := map[int]string{400: "bad_request", 401: "unauthorized", 404: "not_found", 413: "too_large", 415: "bad_media_type", 504: "timeout"}[status]
	json.NewEncoder(w).Encode(ErrorBody{Error: msg, Code: code})
}

// decode reads a JSON body into v, refusing unknown fields, trailing data
// and bodies over the limit.
func (a *API) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		writeErr(w, http.StatusUnsupportedMediaType, "send a JSON body with Content-Type: application/json")
		return false
	}
	body := http.MaxBytesReader(w, r.Body, a.cfg.MaxJSON)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			writeErr(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("JSON body over %d bytes; send file contents with PUT /v1/files/PATH", a.cfg.MaxJSON))
		case errors.Is(err, io.EOF):
			writeErr(w, http.StatusBadRequest, "empty body: send a JSON object (see GET /v1/openapi.json)")
		default:
			writeErr(w, http.StatusBadRequest, "malformed JSON: "+err.Error())
		}
		return false
	}
	if dec.More() {
		writeErr(w, http.StatusBadRequest, "malformed JSON: more than one value in the body")
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
