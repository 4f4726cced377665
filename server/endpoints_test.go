package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/server"
	"github.com/reinhq/rein/session"
)

func TestHealth(t *testing.T) {
	e := newEnv(t)
	got := decode[api.Health](t, e.do(t, "GET", "/health", "", nil), http.StatusOK)
	if d := cmp.Diff(api.Health{Status: "ok", Version: "test"}, got); d != "" {
		t.Error(d)
	}
}

func TestMetrics(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte("rein_runs_total 3\n"))
	})
	for _, public := range []bool{false, true} {
		e := newEnv(t, func(c *server.Config) { c.Metrics, c.MetricsPublic = metrics, public })
		r := e.do(t, "GET", "/metrics", "", nil)
		if want := map[bool]int{false: 401, true: 200}[public]; r.status != want {
			t.Errorf("public=%v: anonymous /metrics: %d, want %d", public, r.status, want)
		}
		r = e.do(t, "GET", "/metrics", token(t, "ada"), nil)
		if r.status != 200 || string(r.body) != "rein_runs_total 3\n" || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
			t.Errorf("public=%v: /metrics: %d %q %q", public, r.status, r.header.Get("Content-Type"), r.body)
		}
	}
	// Without a handler there is no /metrics.
	if r := newEnv(t).do(t, "GET", "/metrics", token(t, "ada"), nil); r.status != http.StatusNotFound {
		t.Errorf("no metrics handler: %d", r.status)
	}
}

func TestWorkspaces(t *testing.T) {
	e := newEnv(t)
	tok := token(t, "ada")
	proj := filepath.Join(e.root, "proj")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	p := decode[api.Workspace](t, e.do(t, "POST", "/workspaces", tok, api.CreateWorkspace{Kind: "project", Dir: proj, Name: "p"}), http.StatusCreated)
	resolvedProj, _ := filepath.EvalSymlinks(proj)
	if p.ID == "" || p.Kind != "project" || p.Dir != resolvedProj || p.Name != "p" || p.CreatedAt.IsZero() {
		t.Errorf("project workspace: %+v", p)
	}
	c := decode[api.Workspace](t, e.do(t, "POST", "/workspaces", tok, map[string]string{"kind": "chat"}), http.StatusCreated)
	if c.Kind != "chat" || c.Dir != "" {
		t.Errorf("chat workspace: %+v", c)
	}
	stored, err := e.ledger.GetWorkspace(bg, p.ID)
	if err != nil || stored.Caller != "ada" {
		t.Fatalf("stored workspace: %+v, %v", stored, err)
	}
	list := decode[api.WorkspaceList](t, e.do(t, "GET", "/workspaces", tok, nil), http.StatusOK)
	if len(list.Items) != 2 {
		t.Errorf("list: %+v", list)
	}
	got := decode[api.Workspace](t, e.do(t, "GET", "/workspaces/"+p.ID, tok, nil), http.StatusOK)
	if d := cmp.Diff(p, got); d != "" {
		t.Errorf("get (-created +got):\n%s", d)
	}
	// Another caller sees none of them.
	other := decode[api.WorkspaceList](t, e.do(t, "GET", "/workspaces", token(t, "bob"), nil), http.StatusOK)
	if other.Items == nil || len(other.Items) != 0 {
		t.Errorf("bob's list: %#v", other)
	}
	if strings.Contains(string(e.do(t, "GET", "/workspaces/"+p.ID, tok, nil).body), "caller") {
		t.Error("a workspace's JSON names its caller")
	}
}

func TestSessions(t *testing.T) {
	e := newEnv(t)
	tok := token(t, "ada")
	w := decode[api.Workspace](t, e.do(t, "POST", "/workspaces", tok, api.CreateWorkspace{Kind: "project", Dir: e.root}), http.StatusCreated)
	w2 := decode[api.Workspace](t, e.do(t, "POST", "/workspaces", tok, api.CreateWorkspace{Kind: "chat"}), http.StatusCreated)

	s1 := decode[api.Session](t, e.do(t, "POST", "/sessions", tok, api.CreateSession{WorkspaceID: w.ID, Title: "first"}), http.StatusCreated)
	if s1.WorkspaceID != w.ID || s1.Title != "first" || s1.ID == "" {
		t.Errorf("created: %+v", s1)
	}
	stored, err := e.store.Get(bg, s1.ID)
	if err != nil || stored.Caller != "ada" || stored.Workspace != w.ID || stored.WorkDir != w.Dir {
		t.Fatalf("stored session: %+v, %v", stored, err)
	}
	s2 := decode[api.Session](t, e.do(t, "POST", "/sessions", tok, api.CreateSession{WorkspaceID: w2.ID}), http.StatusCreated)
	// A foreign or unknown workspace is not found.
	bw := decode[api.Workspace](t, e.do(t, "POST", "/workspaces", token(t, "bob"), api.CreateWorkspace{Kind: "chat"}), http.StatusCreated)
	if r := e.do(t, "POST", "/sessions", tok, api.CreateSession{WorkspaceID: bw.ID}); r.status != http.StatusNotFound {
		t.Errorf("session in bob's workspace: %d %s", r.status, r.body)
	}

	got := decode[api.Session](t, e.do(t, "GET", "/sessions/"+s1.ID, tok, nil), http.StatusOK)
	if d := cmp.Diff(s1, got); d != "" {
		t.Errorf("get (-created +got):\n%s", d)
	}

	// Listing: all, by workspace, by page.
	all := decode[api.SessionList](t, e.do(t, "GET", "/sessions", tok, nil), http.StatusOK)
	if len(all.Items) != 2 || all.NextCursor != "" {
		t.Errorf("all: %+v", all)
	}
	byW := decode[api.SessionList](t, e.do(t, "GET", "/sessions?workspace_id="+w2.ID, tok, nil), http.StatusOK)
	if len(byW.Items) != 1 || byW.Items[0].ID != s2.ID {
		t.Errorf("by workspace: %+v", byW)
	}
	page1 := decode[api.SessionList](t, e.do(t, "GET", "/sessions?limit=1", tok, nil), http.StatusOK)
	page2 := decode[api.SessionList](t, e.do(t, "GET", "/sessions?limit=1&cursor="+page1.NextCursor, tok, nil), http.StatusOK)
	if len(page1.Items) != 1 || page1.NextCursor == "" || len(page2.Items) != 1 || page2.Items[0].ID == page1.Items[0].ID {
		t.Errorf("pages: %+v %+v", page1, page2)
	}
	if r := e.do(t, "GET", "/sessions?cursor=garbage", tok, nil); r.status != http.StatusUnprocessableEntity {
		t.Errorf("bad cursor: %d %s", r.status, r.body)
	}
	if r := e.do(t, "GET", "/sessions?workspace_id="+bw.ID, tok, nil); r.status != http.StatusNotFound {
		t.Errorf("list in bob's workspace: %d", r.status)
	}

	// Fork: everything, or up to a seq.
	if _, err := e.store.Append(bg, s1.ID, userMsg("one"), userMsg("two")); err != nil {
		t.Fatal(err)
	}
	f := decode[api.Session](t, e.do(t, "POST", "/sessions/"+s1.ID+"/fork", tok, nil), http.StatusCreated)
	if f.ParentID != s1.ID || f.ForkSeq != 2 || f.WorkspaceID != w.ID {
		t.Errorf("fork: %+v", f)
	}
	f1 := decode[api.Session](t, e.do(t, "POST", "/sessions/"+s1.ID+"/fork", tok, api.Fork{AtSeq: 1}), http.StatusCreated)
	if f1.ForkSeq != 1 {
		t.Errorf("fork at 1: %+v", f1)
	}
	fs, err := e.store.Get(bg, f1.ID)
	if err != nil || fs.Caller != "ada" || fs.Workspace != w.ID || fs.WorkDir != w.Dir {
		t.Errorf("stored fork: %+v %v", fs, err)
	}
	if r := e.do(t, "GET", "/sessions/"+f1.ID, tok, nil); r.status != http.StatusOK {
		t.Errorf("get fork: %d", r.status)
	}

	// Delete: refused while a run is live, then done.
	acc := decode[api.Accepted](t, e.do(t, "POST", "/sessions/"+s2.ID+"/messages", tok, api.Message{Text: "hi"}), http.StatusAccepted)
	r := e.do(t, "DELETE", "/sessions/"+s2.ID, tok, nil)
	if p := r.problem(t); r.status != http.StatusConflict || !strings.Contains(p.Detail, "cancel run "+acc.RunID+" first") {
		t.Errorf("delete with a queued run: %d %+v", r.status, p)
	}
	if r := e.do(t, "POST", "/runs/"+acc.RunID+"/cancel", tok, nil); r.status != http.StatusOK {
		t.Fatalf("cancel: %d %s", r.status, r.body)
	}
	if err := e.ledger.AppendEvents(bg, session.Event{SessionID: s2.ID, ID: 1 << 20, Type: "done", Data: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if r := e.do(t, "DELETE", "/sessions/"+s2.ID, tok, nil); r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	if r := e.do(t, "GET", "/sessions/"+s2.ID, tok, nil); r.status != http.StatusNotFound {
		t.Errorf("get deleted: %d", r.status)
	}
	if evs, _ := e.ledger.Events(bg, s2.ID, 0, 0); len(evs) != 0 {
		t.Errorf("deleted session's events stay: %v", evs)
	}
}

func userMsg(text string) session.Entry {
	m := llm.UserText(text)
	return session.Entry{Kind: session.KindMessage, Message: &m}
}

func TestExport(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t, "ada")
	if _, err := e.store.Append(bg, f.session, userMsg("hello there")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		query, ctype, contains string
	}{
		{"", "application/x-ndjson", `"kind":"message"`},
		{"?format=jsonl", "application/x-ndjson", `"text":"hello there"`},
		{"?format=markdown", "text/markdown; charset=utf-8", "## User\n\nhello there"},
	} {
		r := e.do(t, "GET", "/sessions/"+f.session+"/export"+tc.query, f.tok, nil)
		if r.status != http.StatusOK || r.header.Get("Content-Type") != tc.ctype || !strings.Contains(string(r.body), tc.contains) {
			t.Errorf("export%s: %d %q %s", tc.query, r.status, r.header.Get("Content-Type"), r.body)
		}
	}
	if r := e.do(t, "GET", "/sessions/"+f.session+"/export?format=pdf", f.tok, nil); r.status != http.StatusUnprocessableEntity {
		t.Errorf("format=pdf: %d", r.status)
	}
}

func TestRuns(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t, "ada")
	acc := decode[api.Accepted](t, e.do(t, "POST", "/sessions/"+f.session+"/messages", f.tok,
		api.Message{Text: "fix it", Model: "anthropic/claude-sonnet-4-5", MaxTurns: 7, PermissionMode: "accept-edits"}), http.StatusAccepted)
	if acc.SessionID != f.session || acc.Status != "queued" || acc.RunID == "" {
		t.Errorf("accepted: %+v", acc)
	}
	want := []session.Submission{{SessionID: f.session, Caller: "ada", Text: "fix it", Model: "anthropic/claude-sonnet-4-5", MaxTurns: 7, PermissionMode: "accept-edits"}}
	if d := cmp.Diff(want, e.rt.subs()); d != "" {
		t.Errorf("submissions (-want +got):\n%s", d)
	}
	// An empty text continues the conversation; the explicit defaults are fine.
	decode[api.Accepted](t, e.do(t, "POST", "/sessions/"+f.session+"/messages", f.tok,
		`{"text":"","model":"","max_turns":0,"permission_mode":""}`), http.StatusAccepted)

	runs := decode[api.RunList](t, e.do(t, "GET", "/sessions/"+f.session+"/runs", f.tok, nil), http.StatusOK)
	if len(runs.Items) != 3 || runs.Items[1].ID != acc.RunID || runs.Items[1].Prompt != "fix it" {
		t.Errorf("runs: %+v", runs)
	}
	run := decode[api.Run](t, e.do(t, "GET", "/runs/"+acc.RunID, f.tok, nil), http.StatusOK)
	if d := cmp.Diff(runs.Items[1], run); d != "" {
		t.Errorf("get run (-listed +got):\n%s", d)
	}
	cancelled := decode[api.Run](t, e.do(t, "POST", "/runs/"+acc.RunID+"/cancel", f.tok, nil), http.StatusOK)
	if cancelled.Status != "cancelled" {
		t.Errorf("cancelled: %+v", cancelled)
	}
	r := e.do(t, "POST", "/runs/"+acc.RunID+"/cancel", f.tok, nil)
	if p := r.problem(t); r.status != http.StatusConflict || !strings.Contains(p.Detail, "already ended") {
		t.Errorf("cancel twice: %d %+v", r.status, p)
	}
}

func TestPermissionAnswer(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t, "ada")
	path := "/runs/" + f.run + "/permissions/" + f.callID
	if r := e.do(t, "POST", path, f.tok, api.PermissionAnswer{Answer: "deny", Message: "use the test script"}); r.status != http.StatusNoContent {
		t.Fatalf("answer: %d %s", r.status, r.body)
	}
	if d := cmp.Diff([]permission.Verdict{{Answer: permission.AnswerDeny, Message: "use the test script"}}, e.rt.verdicts()); d != "" {
		t.Errorf("answers (-want +got):\n%s", d)
	}
	r := e.do(t, "POST", path, f.tok, api.PermissionAnswer{Answer: "once"})
	if p := r.problem(t); r.status != http.StatusNotFound || !strings.Contains(p.Detail, "no pending permission question") {
		t.Errorf("answer again: %d %+v", r.status, p)
	}
	e.rt.ask(f.run, "call_2")
	for _, body := range []string{`{"answer":"maybe"}`, `{"answer":"once","message":"why"}`, `{}`} {
		if r := e.do(t, "POST", "/runs/"+f.run+"/permissions/call_2", f.tok, body); r.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s", body, r.status, r.body)
		}
	}
	if r := e.do(t, "POST", "/runs/"+f.run+"/permissions/call_2", f.tok, `{"answer":"always"}`); r.status != http.StatusNoContent {
		t.Errorf("always: %d %s", r.status, r.body)
	}
}

func TestAudit(t *testing.T) {
	e := newEnv(t)
	a, b := e.fixture(t, "ada"), e.fixture(t, "bob")
	t0 := time.Date(2026, 11, 21, 7, 0, 0, 0, time.UTC)
	recs := []session.AuditRecord{
		{Time: t0, Caller: "ada", SessionID: a.session, RunID: a.run, Kind: session.AuditRun, Data: json.RawMessage(`{"reason":"completed"}`)},
		{Time: t0.Add(time.Minute), Caller: "bob", SessionID: b.session, Kind: session.AuditRun, Data: json.RawMessage(`{}`)},
		{Time: t0.Add(2 * time.Minute), Caller: "ada", SessionID: a.session, RunID: a.run, Kind: session.AuditToolCall, Data: json.RawMessage(`{"tool":"bash"}`)},
		{Time: t0.Add(3 * time.Minute), Caller: "ada", SessionID: a.session, Kind: session.AuditPermission, Data: json.RawMessage(`{"decided_by":"user"}`)},
	}
	if err := e.ledger.AppendAudit(bg, recs...); err != nil {
		t.Fatal(err)
	}
	ids := func(query string) []int64 {
		t.Helper()
		l := decode[api.AuditList](t, e.do(t, "GET", "/audit"+query, a.tok, nil), http.StatusOK)
		out := []int64{}
		for _, r := range l.Items {
			out = append(out, r.ID)
		}
		return out
	}
	for _, tc := range []struct {
		query string
		want  []int64
	}{
		{"", []int64{1, 3, 4}},
		{"?kind=tool_call", []int64{3}},
		{"?run_id=" + a.run, []int64{1, 3}},
		{"?session_id=" + b.session, []int64{}},
		{"?since=2026-11-21T07:01:00Z&until=2026-11-21T07:03:00Z", []int64{3}},
		{"?after_id=1&limit=1", []int64{3}},
	} {
		if d := cmp.Diff(tc.want, ids(tc.query)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.query, d)
		}
	}
	l := decode[api.AuditList](t, e.do(t, "GET", "/audit?kind=tool_call", a.tok, nil), http.StatusOK)
	want := api.AuditRecord{ID: 3, Time: t0.Add(2 * time.Minute), SessionID: a.session, RunID: a.run, Kind: "tool_call", Data: json.RawMessage(`{"tool":"bash"}`)}
	if d := cmp.Diff([]api.AuditRecord{want}, l.Items, cmpopts.EquateComparable()); d != "" {
		t.Errorf("record (-want +got):\n%s", d)
	}
	for _, q := range []string{"?kind=other", "?since=yesterday", "?limit=5000", "?after_id=-1"} {
		if r := e.do(t, "GET", "/audit"+q, a.tok, nil); r.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s", q, r.status, r.body)
		}
	}
}

// OBS-2: every answered request is reported with its route pattern, never
// its raw path, and with a bounded method.
func TestOnRequest(t *testing.T) {
	type call struct {
		method, route string
		status        int
	}
	var got []call
	e := newEnv(t, func(c *server.Config) {
		c.OnRequest = func(method, route string, status int, _ time.Duration) {
			got = append(got, call{method, route, status})
		}
	})
	e.do(t, "GET", "/sessions/nosuch", token(t, "ada"), nil)
	e.do(t, "BREW", "/health", "", nil)
	want := []call{{"GET", "/sessions/{id}", 404}, {"other", "", 405}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(call{})); d != "" {
		t.Errorf("reported requests (-want +got):\n%s", d)
	}
}

// API-6: creating, forking and deleting a session through the API is
// told to OnSessionChange (the history mirror), once each; a refused
// request tells nothing.
func TestSessionChangesTold_API6(t *testing.T) {
	var mu sync.Mutex
	var told []string
	e := newEnv(t, func(c *server.Config) {
		c.OnSessionChange = func(id string) {
			mu.Lock()
			told = append(told, id)
			mu.Unlock()
		}
	})
	tok := token(t, "ada")
	w := decode[api.Workspace](t, e.do(t, "POST", "/workspaces", tok, api.CreateWorkspace{Kind: "project", Dir: e.root}), http.StatusCreated)
	s := decode[api.Session](t, e.do(t, "POST", "/sessions", tok, api.CreateSession{WorkspaceID: w.ID}), http.StatusCreated)
	f := decode[api.Session](t, e.do(t, "POST", "/sessions/"+s.ID+"/fork", tok, nil), http.StatusCreated)
	if r := e.do(t, "DELETE", "/sessions/"+s.ID, token(t, "bob"), nil); r.status != http.StatusNotFound {
		t.Errorf("bob deleting ada's session: %d", r.status)
	}
	if r := e.do(t, "DELETE", "/sessions/"+f.ID, tok, nil); r.status != http.StatusNoContent {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	mu.Lock()
	defer mu.Unlock()
	if d := cmp.Diff([]string{s.ID, f.ID, f.ID}, told); d != "" {
		t.Errorf("sessions told (-want +got):\n%s", d)
	}
}
