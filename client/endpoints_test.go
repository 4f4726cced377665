package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// seen is what the test server saw of a request.
type seen struct {
	Method, Path, Query, Auth, Agent, ContentType string
	Body                                          any // decoded JSON, nil when empty
}

// recorder is a test server answering every request with one canned
// response and keeping what it saw.
type recorder struct {
	status int
	ctype  string
	body   string
	header http.Header

	mu   sync.Mutex
	reqs []seen
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var body any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &body); err != nil {
			body = "not JSON: " + string(b)
		}
	}
	rc.mu.Lock()
	rc.reqs = append(rc.reqs, seen{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Get("Authorization"),
		r.Header.Get("User-Agent"), r.Header.Get("Content-Type"), body})
	rc.mu.Unlock()
	for k, v := range rc.header {
		w.Header()[k] = v
	}
	if rc.ctype != "" {
		w.Header().Set("Content-Type", rc.ctype)
	}
	w.WriteHeader(rc.status)
	io.WriteString(w, rc.body)
}

func (rc *recorder) seen() []seen {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]seen(nil), rc.reqs...)
}

// serve starts rc on 127.0.0.1 and returns a client of it.
func serve(t *testing.T, h http.Handler, opts Options) *Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func TestEndpoints(t *testing.T) {
	ws := api.Workspace{ID: "w1", Kind: api.KindProject, Dir: "/src", CreatedAt: t0}
	sess := api.Session{ID: "s1", WorkspaceID: "w1", CreatedAt: t0, UpdatedAt: t0, Usage: llm.Usage{InputTokens: 5}}
	run := api.Run{ID: "r1", SessionID: "s1", Status: "running", CreatedAt: t0}
	audit := api.AuditRecord{ID: 9, Time: t0, SessionID: "s1", Kind: "tool_call", Data: json.RawMessage(`{"tool":"bash"}`)}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	obj := func(s string) any { var v any; _ = json.Unmarshal([]byte(s), &v); return v }

	tests := []struct {
		name   string
		call   func(context.Context, *Client) (any, error)
		status int
		reply  string
		want   seen
		result any
	}{{
		name:   "health",
		call:   func(ctx context.Context, c *Client) (any, error) { return c.Health(ctx) },
		status: 200, reply: `{"status":"ok","version":"1.2.3"}`,
		want:   seen{Method: "GET", Path: "/health"},
		result: &api.Health{Status: "ok", Version: "1.2.3"},
	}, {
		name: "create workspace",
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.CreateWorkspace(ctx, api.CreateWorkspace{Kind: api.KindProject, Dir: "/src"})
		},
		status: 201, reply: js(ws),
		want:   seen{Method: "POST", Path: "/workspaces", ContentType: "application/json", Body: obj(`{"kind":"project","dir":"/src"}`)},
		result: &ws,
	}, {
		name:   "workspaces",
		call:   func(ctx context.Context, c *Client) (any, error) { return c.Workspaces(ctx) },
		status: 200, reply: js(api.WorkspaceList{Items: []api.Workspace{ws}}),
		want:   seen{Method: "GET", Path: "/workspaces"},
		result: []api.Workspace{ws},
	}, {
		name:   "workspace, id escaped",
		call:   func(ctx context.Context, c *Client) (any, error) { return c.Workspace(ctx, "w 1/x") },
		status: 200, reply: js(ws),
		want:   seen{Method: "GET", Path: "/workspaces/w%201%2Fx"},
		result: &ws,
	}, {
		name: "create session",
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.CreateSession(ctx, api.CreateSession{WorkspaceID: "w1", Title: "t"})
		},
		status: 201, reply: js(sess),
		want:   seen{Method: "POST", Path: "/sessions", ContentType: "application/json", Body: obj(`{"workspace_id":"w1","title":"t"}`)},
		result: &sess,
	}, {
		name: "sessions",
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.Sessions(ctx, SessionQuery{WorkspaceID: "w1", Limit: 5, Cursor: "c&d"})
		},
		status: 200, reply: js(api.SessionList{Items: []api.Session{sess}, NextCursor: "n"}),
		want:   seen{Method: "GET", Path: "/sessions", Query: "cursor=c%26d&limit=5&workspace_id=w1"},
		result: &api.SessionList{Items: []api.Session{sess}, NextCursor: "n"},
	}, {
		name:   "sessions, no filter",
		call:   func(ctx context.Context, c *Client) (any, error) { return c.Sessions(ctx, SessionQuery{}) },
		status: 200, reply: `{"items":[],"next_cursor":""}`,
		want:   seen{Method: "GET", Path: "/sessions"},
		result: &api.SessionList{Items: []api.Session{}},
	}, {
		name:   "session",
		call:   func(ctx context.Context, c *Client) (any, error) { return c.Session(ctx, "s1") },
		status: 200, reply: js(sess),
		want:   seen{Method: "GET", Path: "/sessions/s1"},
		result: &sess,
	}, {
		name:   "delete session",
		call:   func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteSession(ctx, "s1") },
		status: 204,
		want:   seen{Method: "DELETE", Path: "/sessions/s1"},
	}, {
		name:   "fork",
		call:   func(ctx context.Context, c *Client) (any, error) { return c.Fork(ctx, "s1", api.Fork{AtSeq: 3}) },
		status: 201, reply: js(sess),
		want:   seen{Method: "POST", Path: "/sessions/s1/fork", ContentType: "application/json", Body: obj(`{"at_seq":3}`)},
		result: &sess,
	}, {
		name: "send",
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.Send(ctx, "s1", api.Message{Text: "hi", MaxTurns: 4})
		},
		status: 202, reply: `{"run_id":"r1","session_id":"s1","status":"queued"}`,
		want:   seen{Method: "POST", Path: "/sessions/s1/messages", ContentType: "application/json", Body: obj(`{"text":"hi","max_turns":4}`)},
		result: &api.Accepted{RunID: "r1", SessionID: "s1", Status: "queued"},
	}, {
		name:   "runs",
		call:   func(ctx context.Context, c *Client) (any, error) { return c.Runs(ctx, "s1") },
		status: 200, reply: js(api.RunList{Items: []api.Run{run}}),
		want:   seen{Method: "GET", Path: "/sessions/s1/runs"},
		result: []api.Run{run},
	}, {
		name:   "jobs",
		call:   func(ctx context.Context, c *Client) (any, error) { return c.Jobs(ctx, "s1") },
		status: 200, reply: `{"items":[{"id":"1","command":"npm run dev","state":"running","started":"2026-11-28T01:00:00Z","output_bytes":12}]}`,
		want:   seen{Method: "GET", Path: "/sessions/s1/jobs"},
		result: []api.Job{{ID: "1", Command: "npm run dev", State: "running", Started: time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC), OutputBytes: 12}},
	}, {
		name:   "run",
		call:   func(ctx context.Context, c *Client) (any, error) { return c.Run(ctx, "r1") },
		status: 200, reply: js(run),
		want:   seen{Method: "GET", Path: "/runs/r1"},
		result: &run,
	}, {
		name:   "cancel",
		call:   func(ctx context.Context, c *Client) (any, error) { return c.Cancel(ctx, "r1") },
		status: 200, reply: js(run),
		want:   seen{Method: "POST", Path: "/runs/r1/cancel"},
		result: &run,
	}, {
		name: "answer",
		call: func(ctx context.Context, c *Client) (any, error) {
			return nil, c.Answer(ctx, "r1", "call_7", api.PermissionAnswer{Answer: "deny", Message: "not now"})
		},
		status: 204,
		want:   seen{Method: "POST", Path: "/runs/r1/permissions/call_7", ContentType: "application/json", Body: obj(`{"answer":"deny","message":"not now"}`)},
	}, {
		name: "answer question",
		call: func(ctx context.Context, c *Client) (any, error) {
			return nil, c.AnswerQuestion(ctx, "r1", "call_8", api.QuestionAnswer{Answer: "PostgreSQL"})
		},
		status: 204,
		want:   seen{Method: "POST", Path: "/runs/r1/questions/call_8", ContentType: "application/json", Body: obj(`{"answer":"PostgreSQL"}`)},
	}, {
		name: "audit",
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.Audit(ctx, AuditQuery{SessionID: "s1", RunID: "r1", Kind: "tool_call", Since: t0, Until: t0.Add(time.Hour), AfterID: 8, Limit: 50})
		},
		status: 200, reply: js(api.AuditList{Items: []api.AuditRecord{audit}}),
		want: seen{Method: "GET", Path: "/audit",
			Query: "after_id=8&kind=tool_call&limit=50&run_id=r1&session_id=s1&since=2026-05-01T12%3A00%3A00Z&until=2026-05-01T13%3A00%3A00Z"},
		result: []api.AuditRecord{audit},
	}, {
		name: "export",
		call: func(ctx context.Context, c *Client) (any, error) {
			var b bytes.Buffer
			err := c.Export(ctx, "s1", ExportMarkdown, &b)
			return b.String(), err
		},
		status: 200, reply: "# Session\n\nhello\n",
		want:   seen{Method: "GET", Path: "/sessions/s1/export", Query: "format=markdown"},
		result: "# Session\n\nhello\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := &recorder{status: tt.status, ctype: "application/json", body: tt.reply}
			c := serve(t, rc, Options{Token: "tok"})
			got, err := tt.call(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if tt.result != nil {
				if diff := cmp.Diff(tt.result, got); diff != "" {
					t.Errorf("result (-want +got):\n%s", diff)
				}
			}
			want := tt.want
			want.Auth, want.Agent = "Bearer tok", "rein-client"
			if diff := cmp.Diff([]seen{want}, rc.seen()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCredentials(t *testing.T) {
	rc := &recorder{status: 200, ctype: "application/json", body: `{"status":"ok"}`}
	ctx := context.Background()

	c := serve(t, rc, Options{})
	if _, err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	n := 0
	c = serve(t, rc, Options{Token: "static", UserAgent: "rein-cli/1",
		TokenFunc: func(context.Context) (string, error) { n++; return "fresh" + string(rune('0'+n)), nil }})
	for range 2 {
		if _, err := c.Health(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var got [][2]string
	for _, s := range rc.seen() {
		got = append(got, [2]string{s.Auth, s.Agent})
	}
	want := [][2]string{{"", "rein-client"}, {"Bearer fresh1", "rein-cli/1"}, {"Bearer fresh2", "rein-cli/1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Authorization, User-Agent (-want +got):\n%s", diff)
	}

	failing := errors.New("vault sealed")
	c = serve(t, rc, Options{TokenFunc: func(context.Context) (string, error) { return "", failing }})
	before := len(rc.seen())
	if _, err := c.Health(ctx); !errors.Is(err, failing) {
		t.Errorf("token failure: %v, want it wrapped", err)
	}
	if len(rc.seen()) != before {
		t.Error("a request went out without its token")
	}
}

func TestNew(t *testing.T) {
	for _, bad := range []string{"", "127.0.0.1:8080", "ftp://host", "http://", "http://host/?q=1", "http://host/#f", "http://host/%zz"} {
		if _, err := New(bad, Options{}); err == nil {
			t.Errorf("New(%q): no error", bad)
		}
	}
	rc := &recorder{status: 200, ctype: "application/json", body: `{"status":"ok"}`}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	c, err := New(srv.URL+"/rein/", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rc.seen()[0].Path; got != "/rein/health" {
		t.Errorf("path %q, want the prefix kept: /rein/health", got)
	}
}

func TestEmptyID(t *testing.T) {
	rc := &recorder{status: 200}
	c := serve(t, rc, Options{})
	ctx := context.Background()
	calls := map[string]func() error{
		"Workspace":      func() error { _, err := c.Workspace(ctx, ""); return err },
		"Session":        func() error { _, err := c.Session(ctx, ""); return err },
		"DeleteSession":  func() error { return c.DeleteSession(ctx, "") },
		"Fork":           func() error { _, err := c.Fork(ctx, "", api.Fork{}); return err },
		"Export":         func() error { return c.Export(ctx, "", "", io.Discard) },
		"Send":           func() error { _, err := c.Send(ctx, "", api.Message{}); return err },
		"Runs":           func() error { _, err := c.Runs(ctx, ""); return err },
		"Jobs":           func() error { _, err := c.Jobs(ctx, ""); return err },
		"Run":            func() error { _, err := c.Run(ctx, ""); return err },
		"Cancel":         func() error { _, err := c.Cancel(ctx, ""); return err },
		"Answer":         func() error { return c.Answer(ctx, "r1", "", api.PermissionAnswer{}) },
		"AnswerQuestion": func() error { return c.AnswerQuestion(ctx, "r1", "", api.QuestionAnswer{Answer: "x"}) },
		"Wait":           func() error { _, err := c.Wait(ctx, ""); return err },
	}
	for name, call := range calls {
		if err := call(); err == nil || !strings.Contains(err.Error(), "empty") {
			t.Errorf("%s with an empty id: %v, want an error naming it", name, err)
		}
	}
	for ev, err := range c.Events(ctx, "", 0) {
		if err == nil {
			t.Errorf("Events with an empty id yielded %+v", ev)
		}
	}
	if n := len(rc.seen()); n != 0 {
		t.Errorf("%d requests sent for empty ids", n)
	}
}
