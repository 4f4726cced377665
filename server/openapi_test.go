package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/server"
)

// routes are the operations of api.md.
var routes = []string{
	"GET /health",
	"GET /metrics",
	"GET /openapi.json",
	"POST /workspaces",
	"GET /workspaces",
	"GET /workspaces/{id}",
	"GET /workspaces/{id}/catalog",
	"GET /workspaces/{id}/memory",
	"POST /workspaces/{id}/memory",
	"DELETE /workspaces/{id}/memory/{note_id}",
	"GET /workspaces/{id}/kb",
	"POST /workspaces/{id}/kb",
	"GET /workspaces/{id}/kb/search",
	"POST /runs/{id}/questions/{call_id}",
	"POST /sessions",
	"GET /sessions",
	"GET /sessions/{id}",
	"PATCH /sessions/{id}",
	"DELETE /sessions/{id}",
	"POST /sessions/{id}/fork",
	"GET /sessions/{id}/export",
	"POST /sessions/{id}/messages",
	"GET /sessions/{id}/runs",
	"GET /sessions/{id}/jobs",
	"GET /sessions/{id}/events",
	"GET /sessions/{id}/context",
	"GET /runs/{id}",
	"POST /runs/{id}/cancel",
	"POST /runs/{id}/permissions/{call_id}",
	"GET /audit",
	"GET /ready",
}

func TestOpenAPIDocument(t *testing.T) {
	e := newEnv(t, func(c *server.Config) { c.Metrics = http.NotFoundHandler() })
	doc := e.srv.OpenAPI()
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	var got []string
	for path, item := range doc.Paths {
		for method, op := range map[string]*huma.Operation{"GET": item.Get, "POST": item.Post, "DELETE": item.Delete, "PUT": item.Put, "PATCH": item.Patch} {
			if op != nil {
				got = append(got, method+" "+path)
			}
		}
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(routes))
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("routes in the document (-want +got):\n%s", d)
	}

	// The served document is the same, and says 3.1.
	r := e.do(t, "GET", "/openapi.json", "", nil)
	served := decode[map[string]any](t, r, http.StatusOK)
	if served["openapi"] != "3.1.0" {
		t.Errorf("served openapi = %v", served["openapi"])
	}
	want2, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if string(want2) != string(r.body) {
		t.Error("served document differs from Server.OpenAPI()")
	}

	// The stream is documented as text/event-stream, the exports as their types.
	ev := doc.Paths["/sessions/{id}/events"].Get
	if ev.Responses["200"].Content["text/event-stream"] == nil {
		t.Errorf("events: 200 content %v, want text/event-stream", keys2(ev.Responses["200"].Content))
	}
	ex := doc.Paths["/sessions/{id}/export"].Get
	if d := cmp.Diff([]string{"application/x-ndjson", "text/markdown"}, keys2(ex.Responses["200"].Content)); d != "" {
		t.Errorf("export content types (-want +got):\n%s", d)
	}
	// Operations needing a caller say so; public ones do not.
	for path, item := range doc.Paths {
		if item.Get != nil {
			public := path == "/health" || path == "/ready" || path == "/openapi.json"
			if got := len(item.Get.Security) == 0; got != public {
				t.Errorf("GET %s: public %v, want %v", path, got, public)
			}
		}
	}
	// Request bodies reject unknown fields and state the rules.
	schemas := doc.Components.Schemas.Map()
	cw := schemas["CreateWorkspace"]
	if cw == nil {
		t.Fatalf("no CreateWorkspace schema; have %v", keys2(schemas))
	}
	if cw.AdditionalProperties != false {
		t.Errorf("CreateWorkspace additionalProperties = %v, want false", cw.AdditionalProperties)
	}
	if d := cmp.Diff([]any{"project", "chat"}, cw.Properties["kind"].Enum); d != "" {
		t.Errorf("kind enum (-want +got):\n%s", d)
	}
}

func keys2[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
