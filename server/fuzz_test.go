package server_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/server"
	"github.com/reinhq/rein/session"
)

// snapshot is everything a request could write: the stores' contents and
// what reached the runtime.
func (e *env) snapshot(t testing.TB) string {
	t.Helper()
	var snap struct {
		Workspaces [][]*session.Workspace
		Sessions   []*session.Session
		Runs       []*session.Run
		Subs, Ans  int
	}
	for _, c := range []string{"ada", "bob", server.DefaultLocalCaller} {
		ws, err := e.ledger.ListWorkspaces(bg, c)
		if err != nil {
			t.Fatal(err)
		}
		snap.Workspaces = append(snap.Workspaces, ws)
	}
	var err error
	if snap.Sessions, _, err = e.store.List(bg, session.ListOptions{Limit: 100000}); err != nil {
		t.Fatal(err)
	}
	if snap.Runs, err = e.ledger.ListRuns(bg, session.RunFilter{}); err != nil {
		t.Fatal(err)
	}
	snap.Subs, snap.Ans = len(e.rt.subs()), len(e.rt.verdicts())
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fuzzBody sends body to method path as ada: a 2xx or a 4xx, never a 5xx,
// and a refused request leaves everything as it was. before runs ahead of
// each request. "{ws}" in a body becomes ada's workspace id, so seeds can
// name it.
func fuzzBody(f *testing.F, method string, path func(fixture) string, before func(*env, fixture), seeds ...string) {
	e := newEnv(f)
	ada := e.fixture(f, "ada")
	e.fixture(f, "bob")
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if before != nil {
			before(e, ada)
		}
		body = bytes.ReplaceAll(body, []byte("{ws}"), []byte(ada.workspace))
		was := e.snapshot(t)
		r := e.serve(t, method, path(ada), ada.tok, body, "127.0.0.1:4000")
		switch {
		case r.status >= 500:
			t.Fatalf("%s → %d: %s", body, r.status, r.body)
		case r.status >= 300:
			r.problem(t) // a problem, with its content type
			if d := cmp.Diff(was, e.snapshot(t)); d != "" {
				t.Fatalf("%s → %d changed the stores:\n%s", body, r.status, d)
			}
		}
	})
}

func FuzzCreateWorkspace(f *testing.F) {
	fuzzBody(f, "POST", func(fixture) string { return "/workspaces" }, nil,
		`{"kind":"chat"}`, `{"kind":"chat","name":"x"}`, `{"kind":"project","dir":"/"}`, `{"kind":"project","dir":"/tmp/../etc"}`,
		`{"kind":"chat","dir":"/tmp"}`, `{"kind":"project"}`, `{"kind":"office"}`, `{"kind":"chat","x":1}`, `{"KIND":"chat"}`,
		`[]`, `null`, `""`, `{`, ``, `{"kind":"chat","name":"\u0000"}`)
}

func FuzzCreateSession(f *testing.F) {
	fuzzBody(f, "POST", func(fixture) string { return "/sessions" }, nil,
		`{"workspace_id":"{ws}"}`, `{"workspace_id":"{ws}","title":"t"}`, `{"workspace_id":""}`, `{"workspace_id":"../x"}`,
		`{"workspace_id":"0000missing"}`, `{"title":"t"}`, `{"workspace_id":1}`, `{"workspace_id":"{ws}","extra":true}`,
		`{"workspace_id":"{ws}","title":"`+strings.Repeat("t", 201)+`"}`)
}

func FuzzSendMessage(f *testing.F) {
	fuzzBody(f, "POST", func(a fixture) string { return "/sessions/" + a.session + "/messages" }, nil,
		`{"text":"hi"}`, `{"text":""}`, `{"text":"x","model":"","max_turns":0,"permission_mode":""}`,
		`{"text":"x","max_turns":5,"permission_mode":"strict"}`, `{"text":"x","max_turns":-1}`, `{"text":"x","max_turns":1e9}`,
		`{"text":"x","max_turns":1.5}`, `{"text":"x","permission_mode":"yolo"}`, `{"text":null}`, `{}`, `{"text":"x","MAX_TURNS":-5}`)
}

func FuzzAnswerPermission(f *testing.F) {
	fuzzBody(f, "POST", func(a fixture) string { return "/runs/" + a.run + "/permissions/" + a.callID },
		func(e *env, a fixture) { e.rt.ask(a.run, a.callID) },
		`{"answer":"once"}`, `{"answer":"always"}`, `{"answer":"deny","message":"no"}`, `{"answer":"once","message":"m"}`,
		`{"answer":"maybe"}`, `{"answer":"deny","message":"`+string(make([]byte, 10))+`"}`, `{}`, `{"answer":"deny","rules":[]}`)
}
