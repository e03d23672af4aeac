package httpapi

import (
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// OpenAPI returns the OpenAPI 3.1 description of the API, generated from
// the route table that serves it (so the two cannot drift apart).
func OpenAPI() map[string]any {
	paths := map[string]any{}
	errSchema := schemaOf(reflect.TypeFor[ErrorBody]())
	for _, r := range routes {
		p := strings.ReplaceAll(r.Path, "{path...}", "{path}")
		op := map[string]any{"summary": r.Summary, "operationId": opID(r)}
		if r.Public {
			op["security"] = []any{}
		}
		if strings.Contains(r.Path, "{path...}") {
			op["parameters"] = []any{map[string]any{"name": "path", "in": "path", "required": true,
				"description": "tree path without its leading slash", "schema": map[string]any{"type": "string"}}}
		}
		if r.In != nil {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
				"application/json": map[string]any{"schema": schemaOf(r.In)}}}
		} else if r.Method == "PUT" {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
				"application/octet-stream": map[string]any{"schema": map[string]any{"type": "string", "format": "binary"}}}}
		}
		ok := map[string]any{"description": "OK"}
		switch {
		case r.Out != nil:
			ok["content"] = map[string]any{"application/json": map[string]any{"schema": schemaOf(r.Out)}}
		case r.Method == "GET" && strings.HasPrefix(r.Path, "/v1/files/"):
			ok["content"] = map[string]any{"application/octet-stream": map[string]any{"schema": map[string]any{"type": "string", "format": "binary"}}}
		}
		op["responses"] = map[string]any{"200": ok, "default": map[string]any{"description": "error",
			"content": map[string]any{"application/json": map[string]any{"schema": errSchema}}}}
		item, _ := paths[p].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[p] = item
		}
		item[strings.ToLower(r.Method)] = op
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info":    map[string]any{"title": "semfs", "version": "1", "description": "The semfs tree over HTTP: files, tags, search. Every endpoint but health and this document needs a bearer token."},
		"components": map[string]any{"securitySchemes": map[string]any{
			"bearer": map[string]any{"type": "http", "scheme": "bearer"}}},
		"security": []any{map[string]any{"bearer": []any{}}},
		"paths":    paths,
	}
}

func opID(r route) string {
	name := strings.TrimPrefix(r.Path, "/v1/")
	name = strings.ReplaceAll(strings.ReplaceAll(name, "/{path...}", ""), ".json", "")
	return strings.ToLower(r.Method) + "_" + name
}

func schemaOf(t reflect.Type) any {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{IgnoreInvalidTypes: true})
	if err != nil {
		return map[string]any{"description": "schema unavailable: " + err.Error()}
	}
	return s
}
