package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/ops"
)

// route is one endpoint: the table serves requests and generates the
// OpenAPI description.
type route struct {
	Method, Path, Summary string
	In, Out               reflect.Type // JSON request and response types (nil: none)
	Public                bool         // no token needed
	Handle                func(a *API, g *grant, w http.ResponseWriter, r *http.Request)
}

// op makes a JSON endpoint of an operation.
func op[In, Out any](path, summary string, fn func(*ops.Service, context.Context, In) (Out, error)) route {
	return route{Method: "POST", Path: path, Summary: summary,
		In: reflect.TypeFor[In](), Out: reflect.TypeFor[Out](),
		Handle: func(a *API, g *grant, w http.ResponseWriter, r *http.Request) {
			var in In
			if !a.decode(w, r, &in) {
				return
			}
			out, err := fn(g.service(), r.Context(), in)
			if err != nil {
				a.fail(w, r, err)
				return
			}
			writeJSON(w, out)
		}}
}

// Health is the body of GET /v1/health.
type Health struct {
	OK bool `json:"ok"`
}

var routes = []route{
	op("/v1/read", "Read a text file, or a range of its lines", (*ops.Service).ReadFile),
	op("/v1/write", "Create or replace a file with text", (*ops.Service).WriteFile),
	op("/v1/edit", "Replace an exact string in a file", (*ops.Service).EditFile),
	op("/v1/list", "List a directory", (*ops.Service).List),
	op("/v1/glob", "Find files by glob (** across directories)", (*ops.Service).Glob),
	op("/v1/grep", "Search file contents for a regular expression", (*ops.Service).Grep),
	op("/v1/find", "Find files and directories by name, type and depth", (*ops.Service).Find),
	op("/v1/stat", "Describe a path, with its tags", (*ops.Service).Stat),
	op("/v1/tag", "Set a file's tags (replacing previous ones)", (*ops.Service).Tag),
	op("/v1/query", "Tag query: find files by tags and paths", (*ops.Service).Query),
	op("/v1/search", "Hybrid content search with filters, snippets and a cursor", (*ops.Service).Search),
	op("/v1/related", "Likely duplicates and close relatives of a file", (*ops.Service).Related),
	op("/v1/remove", "Remove a file, or a directory with recursive", (*ops.Service).Remove),
	op("/v1/move", "Move or rename; tags and links follow", (*ops.Service).Move),
	op("/v1/shell", "Run a script in the virtual shell", (*ops.Service).Shell),
	{Method: "GET", Path: "/v1/files/{path...}", Summary: "Download a file's bytes", Handle: getFile},
	{Method: "PUT", Path: "/v1/files/{path...}", Summary: "Upload a file's bytes (creates parents)", Handle: putFile},
	{Method: "GET", Path: "/v1/health", Summary: "Liveness", Public: true, Out: reflect.TypeFor[Health](),
		Handle: func(a *API, _ *grant, w http.ResponseWriter, _ *http.Request) { writeJSON(w, Health{OK: true}) }},
	{Method: "GET", Path: "/v1/openapi.json", Summary: "This API's OpenAPI description", Public: true,
		Handle: func(a *API, _ *grant, w http.ResponseWriter, _ *http.Request) { writeJSON(w, openAPIDoc()) }},
}

// openAPIDoc breaks the initialisation cycle between the route table and
// the document generated from it.
var openAPIDoc func() map[string]any

func init() { openAPIDoc = OpenAPI }

func getFile(a *API, g *grant, w http.ResponseWriter, r *http.Request) {
	s := g.service()
	ctx := semfs.WithPrincipal(r.Context(), s.Principal)
	p, err := semfs.Clean("read", r.PathValue("path"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	f, err := s.FS.Open(ctx, p)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	if info, err := f.Stat(); err == nil {
		w.Header().Set("Content-Length", fmt.Sprint(info.Size()))
	}
	io.Copy(w, f)
}

func putFile(a *API, g *grant, w http.ResponseWriter, r *http.Request) {
	s := g.service()
	if s.ReadOnly {
		a.fail(w, r, ops.ErrReadOnlySession)
		return
	}
	ctx := semfs.WithPrincipal(r.Context(), s.Principal)
	p, err := semfs.Clean("write", r.PathValue("path"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.cfg.MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeErr(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("file over the server's %d-byte upload limit", a.cfg.MaxBody))
			return
		}
		writeErr(w, http.StatusBadRequest, "reading the body: "+err.Error())
		return
	}
	if err := semfs.WriteFile(ctx, s.FS, p, data, 0o644); err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, ops.WriteOut{Path: p, Bytes: len(data)})
}
