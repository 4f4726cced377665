package server_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/server"
	"github.com/reinhq/rein/session"
)

// TestBadInput: every malformed request gets a 4xx problem+json whose
// detail says what is wrong and how to fix it.
func TestBadInput(t *testing.T) {
	e := newEnv(t, func(c *server.Config) { c.MaxBodyBytes = 256 })
	f := e.fixture(t, "ada")
	msgs := "/sessions/" + f.session + "/messages"
	for _, tc := range []struct {
		name, method, path string
		body               any
		hdr                []string
		status             int
		detail             string // part of the detail
	}{
		{"unknown field", "POST", "/workspaces", `{"kind":"chat","color":"red"}`, nil, 422, "body.color: unexpected property"},
		{"field in another case", "POST", "/workspaces", `{"KIND":"chat"}`, nil, 422, "fix the fields listed in errors"},
		{"bad enum", "POST", "/workspaces", `{"kind":"office"}`, nil, 422, "body.kind"},
		{"not JSON", "POST", "/workspaces", `{"kind":`, nil, 400, "fix the fields"},
		{"a JSON array", "POST", "/workspaces", `[1,2]`, nil, 422, "expected object"},
		{"no body", "POST", "/workspaces", nil, nil, 400, "send a JSON object"},
		{"too large", "POST", "/workspaces", `{"kind":"chat","name":"` + strings.Repeat("n", 300) + `"}`, nil, 413, "send a smaller body"},
		{"wrong content type", "POST", "/workspaces", `kind=chat`, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, ""},
		{"empty workspace id", "POST", "/sessions", `{"workspace_id":""}`, nil, 422, "body.workspace_id"},
		{"negative max_turns", "POST", msgs, `{"text":"x","max_turns":-1}`, nil, 422, "body.max_turns"},
		{"unknown permission mode", "POST", msgs, `{"text":"x","permission_mode":"yolo"}`, nil, 422, "body.permission_mode"},
		{"text missing", "POST", msgs, `{}`, nil, 422, "required property text"},
		{"a second key in another case", "POST", msgs, `{"text":"x","max_turns":1,"MAX_TURNS":-5}`, nil, 422, "body.MAX_TURNS: unexpected property"},
		{"text not a string", "POST", msgs, `{"text":5}`, nil, 422, "body.text"},
		{"a session in bypass (PERM-7)", "POST", "/sessions", `{"workspace_id":"` + f.workspace + `","permission_mode":"bypass"}`, nil, 422, "body.permission_mode"},
		{"a session patched into bypass (PERM-7)", "PATCH", "/sessions/" + f.session, `{"permission_mode":"bypass"}`, nil, 422, "body.permission_mode"},
		{"a session patched with an unknown mode", "PATCH", "/sessions/" + f.session, `{"permission_mode":"yolo"}`, nil, 422, "body.permission_mode"},
		{"a session patched with an unknown field", "PATCH", "/sessions/" + f.session, `{"caller":"mallory"}`, nil, 422, "body.caller: unexpected property"},
		{"a session's title too long", "PATCH", "/sessions/" + f.session, `{"title":"` + strings.Repeat("t", 201) + `"}`, nil, 422, "body.title"},
		{"negative fork seq", "POST", "/sessions/" + f.session + "/fork", `{"at_seq":-3}`, nil, 422, "body.at_seq"},
		{"malformed id", "GET", "/sessions/.hidden", nil, nil, 422, "path.id"},
		{"unknown query parameter", "GET", "/sessions?workspace=x", nil, nil, 422, "query.workspace: unknown query parameter"},
		{"limit too large", "GET", "/sessions?limit=100000", nil, nil, 422, "query.limit"},
		{"no route", "GET", "/nope", nil, nil, 404, "/openapi.json lists the API"},
		{"wrong method", "PUT", "/sessions", nil, nil, 405, "use GET or POST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, tc.method, tc.path, f.tok, tc.body, tc.hdr...)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			p := r.problem(t)
			if p.Status != tc.status || p.Title == "" || p.Detail == "" || !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("problem %+v, want status %d and a detail with %q", p, tc.status, tc.detail)
			}
		})
	}
	if r := e.do(t, "PUT", "/sessions", f.tok, nil); r.header.Get("Allow") != "GET, POST" {
		t.Errorf("405 Allow %q", r.header.Get("Allow"))
	}
}

// TestRuntimeErrors maps the runtime's errors to statuses; a 500 hides the
// error from the client and logs it.
func TestRuntimeErrors(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t, "ada")
	for _, tc := range []struct {
		err    error
		status int
		detail string
	}{
		{fmt.Errorf("model nope: %w", session.ErrInvalid), 422, "model nope: invalid session input"},
		{fmt.Errorf("queue full: %w", session.ErrConflict), 409, "queue full"},
		{fmt.Errorf("run r: %w", session.ErrExists), 409, "already exists"},
		{fmt.Errorf("gone: %w", session.ErrNotFound), 404, "gone"},
		{fmt.Errorf("%w (closing)", session.ErrShuttingDown), 503, "retry in a moment"},
		{fmt.Errorf("%w: postgres at 10.0.0.7:5432: connection refused", session.ErrUnavailable), 503, "a service the server depends on does not answer"},
		{fmt.Errorf("publish: %w: Redis at 10.0.0.8:6379: EOF", eventbus.ErrUnavailable), 503, "retry in a moment"},
		{errors.New("disk on fire"), 500, "queueing the run failed on the server (request "},
	} {
		e.rt.mu.Lock()
		e.rt.err = tc.err
		e.rt.mu.Unlock()
		r := e.do(t, "POST", "/sessions/"+f.session+"/messages", f.tok, `{"text":"x"}`)
		p := r.problem(t)
		if r.status != tc.status || !strings.Contains(p.Detail, tc.detail) {
			t.Errorf("%v: %d %+v, want %d with %q", tc.err, r.status, p, tc.status, tc.detail)
		}
		if tc.status == 503 && r.header.Get("Retry-After") == "" {
			t.Error("503 without Retry-After")
		}
		if strings.Contains(string(r.body), "10.0.0.") {
			t.Errorf("%v: the answer shows a dependency's address: %s", tc.err, r.body)
		}
		if tc.status == 500 {
			if strings.Contains(string(r.body), "disk on fire") {
				t.Error("the 500 shows the error to the client")
			}
			id := r.header.Get("X-Request-Id")
			if id == "" || !strings.Contains(p.Detail, id) {
				t.Errorf("500 detail %q does not name the request %q", p.Detail, id)
			}
			if !strings.Contains(e.logs.String(), "disk on fire") {
				t.Error("the 500's error is not logged")
			}
		}
	}
}

func TestPanicIsAProblem(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t, "ada")
	e.rt.mu.Lock()
	e.rt.panicMsg = "boom"
	e.rt.mu.Unlock()
	r := e.do(t, "POST", "/sessions/"+f.session+"/messages", f.tok, `{"text":"x"}`)
	if p := r.problem(t); r.status != 500 || strings.Contains(p.Detail, "boom") {
		t.Errorf("panic: %d %+v", r.status, p)
	}
	if !strings.Contains(e.logs.String(), `"panic":"boom"`) {
		t.Errorf("the panic is not logged: %s", e.logs.String())
	}
}

// TestRequestLog: one line per request with method, route, status,
// duration and caller — and never the token.
func TestRequestLog(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t, "ada")
	e.do(t, "GET", "/sessions/"+f.session, f.tok, nil)
	expired := principals[1].tok(t)
	e.do(t, "GET", "/sessions/"+f.session, expired, nil)
	logs := e.logs.String()
	for _, secret := range []string{f.tok, expired, "Bearer", "Authorization"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if m["msg"] == "http request" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("%d request lines, want 2:\n%s", len(lines), logs)
	}
	for i, want := range []struct {
		status float64
		caller string
	}{{200, "ada"}, {401, ""}} {
		l := lines[i]
		if l["method"] != "GET" || l["route"] != "/sessions/{id}" || l["status"] != want.status || l["caller"] != want.caller ||
			l["duration"] == nil || l["request_id"] == "" || l["path"] != "/sessions/"+f.session || l["session_id"] != f.session {
			t.Errorf("line %d: %v", i, l)
		}
	}
}
