package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/server"
)

// operations lists the document's operations as method, path, op.
func operations(doc *huma.OpenAPI) map[string]*huma.Operation {
	out := map[string]*huma.Operation{}
	for path, item := range doc.Paths {
		for method, op := range map[string]*huma.Operation{"GET": item.Get, "POST": item.Post, "DELETE": item.Delete, "PUT": item.Put, "PATCH": item.Patch} {
			if op != nil {
				out[method+" "+path] = op
			}
		}
	}
	return out
}

// TestOpenAPIStatusesDeclared_API1 walks every operation and sends what
// the layers around the handlers answer — a body that is no JSON (400),
// one over the limit (413), one of another type (415), a request over the
// rate limit (429) — and checks the document declares each status the
// server answered. Every operation that needs a caller reads the store, so
// it declares 503 too (the store down: TestRuntimeErrors).
func TestOpenAPIStatusesDeclared_API1(t *testing.T) {
	e := newEnv(t, func(c *server.Config) { c.MaxBodyBytes = 4096; c.Metrics = http.NotFoundHandler() })
	f := e.fixture(t, "ada")
	ids := strings.NewReplacer("{id}", f.session, "{call_id}", f.callID, "{note_id}", "ab12")
	runIDs := strings.NewReplacer("{id}", f.run, "{call_id}", f.callID)
	wsIDs := strings.NewReplacer("{id}", f.workspace, "{note_id}", "ab12")
	ops := operations(e.srv.OpenAPI())
	for key, op := range ops {
		method, tmpl, _ := strings.Cut(key, " ")
		path := ids.Replace(tmpl)
		switch {
		case strings.HasPrefix(tmpl, "/runs/"):
			path = runIDs.Replace(tmpl)
		case strings.HasPrefix(tmpl, "/workspaces/"):
			path = wsIDs.Replace(tmpl)
		}
		declared := func(st int) bool { _, ok := op.Responses[strconv.Itoa(st)]; return ok }
		if len(op.Security) > 0 && !declared(http.StatusServiceUnavailable) {
			t.Errorf("%s: needs a caller, so reads the store, but does not declare 503", key)
		}
		if !declared(http.StatusTooManyRequests) {
			t.Errorf("%s: does not declare 429", key)
		}
		if op.RequestBody == nil {
			continue
		}
		if !declared(http.StatusRequestEntityTooLarge) {
			t.Errorf("%s: takes a body but does not declare 413", key)
		}
		sends := []struct {
			body, ctype string
		}{
			{"{", "application/json"},
			{"{}", "text/plain"},
		}
		if op.MaxBodyBytes <= 1<<20 { // the messages' limit is larger: its 413 is checked in images_test.go
			sends = append(sends, struct{ body, ctype string }{`{"text":"` + strings.Repeat("x", int(op.MaxBodyBytes)) + `"}`, "application/json"})
		}
		for _, s := range sends {
			r := e.do(t, method, path, f.tok, s.body, "Content-Type", s.ctype)
			if r.status < 400 {
				t.Errorf("%s with %.20q (%s): %d, want a refusal", key, s.body, s.ctype, r.status)
				continue
			}
			if !declared(r.status) {
				t.Errorf("%s with %.20q (%s): answered %d, which the document does not declare", key, s.body, s.ctype, r.status)
			}
		}
	}
	// Every status answered over the rate limit is declared too.
	lim := newEnv(t, func(c *server.Config) { c.RateLimit, c.Burst = 1, 1 })
	lf := lim.fixture(t, "ada")
	lim.do(t, "GET", "/workspaces", lf.tok, nil)
	if r := lim.do(t, "GET", "/workspaces", lf.tok, nil); r.status != http.StatusTooManyRequests {
		t.Errorf("over the rate limit: %d, want 429", r.status)
	}
}

// TestOpenAPILoopbackSecurity_API4: a server without authentication
// serves loopback clients as the local caller with no credentials; its
// document offers the empty security requirement beside bearer on the
// operations that need a caller. With authentication, bearer is required.
func TestOpenAPILoopbackSecurity_API4(t *testing.T) {
	local := newEnv(t, func(c *server.Config) { c.Auth = server.Auth{} })
	for key, op := range operations(local.srv.OpenAPI()) {
		if len(op.Security) == 0 {
			continue // public
		}
		if !slices.ContainsFunc(op.Security, func(m map[string][]string) bool { return len(m) == 0 }) {
			t.Errorf("no auth: %s security %v, want an empty alternative", key, op.Security)
		}
	}
	if r := local.do(t, "GET", "/workspaces", "", nil); r.status != http.StatusOK {
		t.Errorf("no auth, loopback without credentials: %d", r.status)
	}
	authed := newEnv(t)
	for key, op := range operations(authed.srv.OpenAPI()) {
		if slices.ContainsFunc(op.Security, func(m map[string][]string) bool { return len(m) == 0 }) {
			t.Errorf("with auth: %s offers no security", key)
		}
	}
}

// TestOpenAPIEventSchemas_API1: the stream's 200 is one of a frame per
// event type, told apart by the event line; every example of
// docs/events.md validates against its type's data schema.
func TestOpenAPIEventSchemas_API1(t *testing.T) {
	e := newEnv(t)
	doc := e.srv.OpenAPI()
	stream := doc.Paths["/sessions/{id}/events"].Get.Responses["200"].Content["text/event-stream"].Schema
	if stream.Discriminator == nil || stream.Discriminator.PropertyName != "event" {
		t.Fatalf("stream schema has no discriminator on event: %+v", stream)
	}
	reg := doc.Components.Schemas
	for name := range api.EventTypes {
		ref := stream.Discriminator.Mapping[name]
		if ref == "" || !slices.ContainsFunc(stream.OneOf, func(s *huma.Schema) bool { return s.Ref == ref }) {
			t.Errorf("event %s: no frame in oneOf/mapping (%q)", name, ref)
			continue
		}
		frame := reg.SchemaFromRef(ref)
		if frame == nil || frame.Properties["event"] == nil || !slices.Equal(frame.Properties["event"].Enum, []any{name}) {
			t.Errorf("event %s: frame %s does not pin event to %s", name, ref, name)
		}
	}
	md, err := os.ReadFile("../docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```json\n(.*?)\n```").FindAllSubmatch(md, -1)
	if len(blocks) < 20 {
		t.Fatalf("found %d examples in docs/events.md", len(blocks))
	}
	for _, b := range blocks {
		var v map[string]any
		dec := json.NewDecoder(bytes.NewReader(b[1]))
		dec.UseNumber()
		if err := json.Unmarshal(b[1], &v); err != nil {
			t.Fatalf("%v: %s", err, b[1])
		}
		typ, _ := v["type"].(string)
		frame := reg.SchemaFromRef(stream.Discriminator.Mapping[typ])
		if frame == nil {
			t.Errorf("example of type %q has no schema", typ)
			continue
		}
		data := frame.Properties["data"]
		res := &huma.ValidateResult{}
		huma.Validate(reg, data, huma.NewPathBuffer(nil, 0), huma.ModeReadFromServer, v, res)
		for _, err := range res.Errors {
			t.Errorf("%s example does not fit its schema: %v\n%s", typ, err, b[1])
		}
	}
	// A payload of the wrong shape does not validate (the schemas are not
	// "anything").
	frame := reg.SchemaFromRef(stream.Discriminator.Mapping["question"])
	res := &huma.ValidateResult{}
	huma.Validate(reg, frame.Properties["data"], huma.NewPathBuffer(nil, 0), huma.ModeReadFromServer,
		map[string]any{"type": "question", "time": "2026-11-21T07:00:03Z", "question": 5}, res)
	if len(res.Errors) == 0 {
		t.Error("a question event without call_id and with a number for question validated")
	}
}
