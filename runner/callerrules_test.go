package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/server"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/postgres"
	"github.com/reinhq/rein/session/postgres/pgtest"
	"github.com/reinhq/rein/session/sqlite"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/workspace"
)

// toolCaller is a model that calls the tool its prompt names ("bash
// {...}": a tool and its JSON input) and then says done.
func toolCaller() llm.Provider {
	var calls atomic.Int64
	return &llmtest.Scripted{NoRecord: true, Repeat: &llmtest.Reply{Func: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		last := req.Messages[len(req.Messages)-1]
		if len(last.ToolResults()) > 0 {
			return llmtest.NewScripted(llmtest.Reply{Text: "done"}).Stream(ctx, req)
		}
		name, input, _ := strings.Cut(llmtest.LastUserText(req), " ")
		id := fmt.Sprint("call", calls.Add(1))
		return llmtest.NewScripted(llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call(id, name, input)}}).Stream(ctx, req)
	}}}
}

// bashCall is the prompt that makes toolCaller run command.
func bashCall(command string) string {
	b, _ := json.Marshal(map[string]string{"command": command})
	return "bash " + string(b)
}

// rulesEnv is a real server (JWT callers) over a real runner service and
// SQLite, as rein serve runs, in an operator's HOME that trusts the
// project directory.
type rulesEnv struct {
	root, dir, other string // the server's root and two project directories under it
	getenv           func(string) string
	db               *sqlite.Store
	bus              eventbus.Bus
	url              string
	secret           []byte
	trustFile        string
}

func newRulesEnv(t *testing.T) *rulesEnv {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &rulesEnv{root: root, dir: filepath.Join(root, "project"), other: filepath.Join(root, "other"),
		secret: []byte("0123456789abcdef0123456789abcdef")}
	env := map[string]string{"HOME": filepath.Join(root, "home"), "PATH": os.Getenv("PATH"), "REIN_SANDBOX": "off"}
	e.getenv = func(k string) string { return env[k] }
	for _, d := range []string{env["HOME"], filepath.Join(e.dir, ".rein"), e.other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The workspace denies rm; the operator trusted it (trust.json holds
	// its fingerprint).
	if err := os.WriteFile(filepath.Join(e.dir, ".rein", "settings.yaml"), []byte("permissions:\n  deny: [\"bash(rm:*)\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, ".env"), []byte("KEY=secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := workspace.Load(workspace.Options{WorkDir: e.dir, Getenv: e.getenv})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.TrustNow(time.Now()); err != nil {
		t.Fatal(err)
	}
	e.trustFile = l.Paths.TrustFile()

	if e.db, err = sqlite.Open(filepath.Join(root, "rein.db"), sqlite.Options{}); err != nil {
		t.Fatal(err)
	}
	e.bus = eventbus.NewMemory(eventbus.Options{})
	svc := newRulesService(t, e.db, e.db, e.bus, e.getenv)
	srv, err := server.New(server.Config{Runtime: svc, Sessions: e.db, Ledger: e.db, Bus: e.bus,
		Auth: server.Auth{HS256Secret: e.secret}, Roots: []string{root}, RateLimit: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	e.url = hs.URL
	t.Cleanup(func() {
		hs.Close()
		e.bus.Close()
		e.db.Close()
	})
	return e
}

// newRulesService is a runner service over the store and ledger with the
// toolCaller model, shut down when the test ends.
func newRulesService(t *testing.T, st session.Store, l session.Ledger, bus eventbus.Bus, getenv func(string) string) *runner.Service {
	t.Helper()
	return startService(t, runner.ServiceConfig{Sessions: st, Ledger: l, Bus: bus, DataDir: t.TempDir(), Getenv: getenv,
		Resolve: scriptedModel(toolCaller())})
}

// token is a bearer token for the caller sub.
func (e *rulesEnv) token(t *testing.T, sub string) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": sub, "exp": time.Now().Add(time.Hour).Unix()}).SignedString(e.secret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// do sends a request as the caller of tok and decodes a JSON answer into
// out; the status must be want.
func (e *rulesEnv) do(t *testing.T, method, path, tok string, body, out any, want int) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, e.url+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, res.StatusCode, data, want)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
}

// session opens a project workspace on dir and a session in it as the
// caller of tok, and returns the session's id.
func (e *rulesEnv) session(t *testing.T, tok, dir string) string {
	t.Helper()
	var ws api.Workspace
	e.do(t, "POST", "/workspaces", tok, api.CreateWorkspace{Kind: "project", Dir: dir}, &ws, http.StatusCreated)
	var s api.Session
	e.do(t, "POST", "/sessions", tok, api.CreateSession{WorkspaceID: ws.ID}, &s, http.StatusCreated)
	return s.ID
}

// outcome is what a run did about its one tool call: whether it asked,
// and the permission decision its audit record holds.
type outcome struct {
	asked    bool
	decision permission.AuditRecord
}

// run posts prompt to the session as the caller of tok; a permission
// question is answered with answer over the API. It returns once the run
// ended.
func (e *rulesEnv) run(t *testing.T, tok, sessionID, prompt, answer string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sub, err := e.bus.Subscribe(ctx, sessionID, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var acc api.Accepted
	e.do(t, "POST", "/sessions/"+sessionID+"/messages", tok, api.Message{Text: prompt}, &acc, http.StatusAccepted)
	return follow(t, ctx, sub, e.db, acc.RunID, func(callID string) {
		e.do(t, "POST", "/runs/"+acc.RunID+"/permissions/"+callID, tok, api.PermissionAnswer{Answer: answer}, nil, http.StatusNoContent)
	})
}

// follow reads the run's events until it is done, answering its
// permission question with answer(callID), and returns the run's last
// permission decision as the ledger's audit trail holds it.
func follow(t *testing.T, ctx context.Context, sub eventbus.Subscription, l session.Ledger, runID string, answer func(callID string)) outcome {
	t.Helper()
	var o outcome
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				t.Fatalf("run %s: the stream ended before the run did", runID)
			}
			var a agent.Event
			if err := json.Unmarshal(ev.Data, &a); err != nil || a.RunID != runID {
				continue
			}
			switch a.Type {
			case agent.EventPermissionRequest:
				o.asked = true
				answer(a.Permission.CallID)
			case agent.EventDone:
				recs, err := l.Audit(ctx, session.AuditFilter{RunID: runID, Kind: session.AuditPermission})
				if err != nil || len(recs) == 0 {
					t.Fatalf("run %s: permission records %v, %v", runID, recs, err)
				}
				if err := json.Unmarshal(recs[len(recs)-1].Data, &o.decision); err != nil {
					t.Fatal(err)
				}
				return o
			}
		case <-ctx.Done():
			t.Fatalf("run %s did not end within a minute", runID)
		}
	}
}

// cliDecision is what the operator's own rein (rein run in dir, the CLI's
// configuration) decides about running command.
func cliDecision(t *testing.T, getenv func(string) string, dir, command string) permission.Decision {
	t.Helper()
	l, err := workspace.Load(workspace.Options{WorkDir: dir, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	e, err := runner.NewSetup(runner.Config{Loaded: l, Store: session.NewMemStore(), Getenv: getenv,
		Resolve: func(*registry.Registry, string) (*runner.Model, error) { return nil, fmt.Errorf("no model") }})
	if err != nil {
		t.Fatal(err)
	}
	input, _ := json.Marshal(map[string]string{"command": command})
	o, err := e.Policy().Decide(context.Background(), permission.Request{Tool: "bash", Input: input,
		Meta: tool.Meta{Category: tool.CategoryExecute}, WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return o.Decision
}

// API-9, PERM-3, PERM-5: an "always" answer caller bob gives over the API
// is bob's rule in that directory, kept in the server's ledger: bob's next
// run there is not asked; nobody else gains anything from it.
func TestAlwaysIsTheCallersRule_API9(t *testing.T) {
	e := newRulesEnv(t)
	bob, alice := e.token(t, "bob"), e.token(t, "alice")
	touch := bashCall("touch made.txt")
	trustBefore, err := os.ReadFile(e.trustFile)
	if err != nil {
		t.Fatalf("the operator's trust file: %v", err)
	}
	if d := cliDecision(t, e.getenv, e.dir, "touch made.txt"); d != permission.DecisionAsk {
		t.Fatalf("before any answer the CLI decides %s about touch, want ask (the test needs a command that asks)", d)
	}

	bobSession := e.session(t, bob, e.dir)
	if o := e.run(t, bob, bobSession, touch, "always"); !o.asked || o.decision.Decision != permission.DecisionAllow || o.decision.DecidedBy != permission.DecidedByUser {
		t.Fatalf("bob's first run: %+v, want asked and allowed by bob", o)
	}
	rules, err := e.db.ListCallerRules(context.Background(), "bob", e.dir)
	if err != nil || len(rules) != 1 || rules[0].Action != string(permission.DecisionAllow) {
		t.Fatalf("bob's kept rules: %+v, %v; want the one allow rule of the answer", rules, err)
	}

	// The answer is bob's: his next run, in this session, another session
	// and another workspace of his on the same directory, is not asked.
	if o := e.run(t, bob, bobSession, touch, "deny"); o.asked || o.decision.Decision != permission.DecisionAllow || !strings.Contains(o.decision.Reason, "caller rule") {
		t.Errorf("bob's next run: %+v, want allowed by his caller rule without asking", o)
	}
	if o := e.run(t, bob, e.session(t, bob, e.dir), touch, "deny"); o.asked || o.decision.Decision != permission.DecisionAllow {
		t.Errorf("bob's run in another workspace on the same directory: %+v, want allowed without asking", o)
	}

	// Kept rules that would weaken a deny or a built-in protection, as if
	// bob's answers had stored them.
	for _, r := range []session.CallerRule{
		{Caller: "bob", Dir: e.dir, Action: string(permission.DecisionAllow), Rule: "bash(rm:*)"},
		{Caller: "bob", Dir: e.dir, Action: string(permission.DecisionAllow), Rule: "read_file(.env)"},
		{Caller: "bob", Dir: e.dir, Action: string(permission.DecisionAllow), Rule: "bash(echo:*)"},
	} {
		if err := e.db.AddCallerRule(context.Background(), &r); err != nil {
			t.Fatal(err)
		}
	}

	attacks := []struct {
		name string
		// try makes the attempt; it returns what went wrong when the
		// attempt succeeded, "" when it failed as it must.
		try func(t *testing.T) string
	}{
		{"another caller's run of the same command in its own workspace on the same directory", func(t *testing.T) string {
			if o := e.run(t, alice, e.session(t, alice, e.dir), touch, "deny"); !o.asked {
				return fmt.Sprintf("alice was not asked: %+v", o)
			}
			return ""
		}},
		{"a caller whose id differs from bob's only in case", func(t *testing.T) string {
			tok := e.token(t, "Bob")
			if o := e.run(t, tok, e.session(t, tok, e.dir), touch, "deny"); !o.asked {
				return fmt.Sprintf("Bob was not asked: %+v", o)
			}
			return ""
		}},
		{"a caller id that is a prefix of bob's", func(t *testing.T) string {
			tok := e.token(t, "bo")
			if o := e.run(t, tok, e.session(t, tok, e.dir), touch, "deny"); !o.asked {
				return fmt.Sprintf("bo was not asked: %+v", o)
			}
			return ""
		}},
		{"a caller id that is a SQL wildcard (b%)", func(t *testing.T) string {
			tok := e.token(t, "b%")
			if o := e.run(t, tok, e.session(t, tok, e.dir), touch, "deny"); !o.asked {
				return fmt.Sprintf("b%% was not asked: %+v", o)
			}
			return ""
		}},
		{"bob's rule used in another directory", func(t *testing.T) string {
			if o := e.run(t, bob, e.session(t, bob, e.other), touch, "deny"); !o.asked {
				return fmt.Sprintf("bob was not asked in %s: %+v", e.other, o)
			}
			return ""
		}},
		{"the operator's CLI run in the directory (rein run there)", func(t *testing.T) string {
			if d := cliDecision(t, e.getenv, e.dir, "touch made.txt"); d != permission.DecisionAsk {
				return fmt.Sprintf("the CLI decides %s, want ask", d)
			}
			return ""
		}},
		{"the answer written into the workspace's .rein/settings.local.yaml", func(t *testing.T) string {
			if _, err := os.Stat(filepath.Join(e.dir, ".rein", "settings.local.yaml")); !os.IsNotExist(err) {
				return fmt.Sprintf("settings.local.yaml exists (%v)", err)
			}
			return ""
		}},
		{"the operator's trust.json re-fingerprinted or given the rule", func(t *testing.T) string {
			after, err := os.ReadFile(e.trustFile)
			if err != nil || !bytes.Equal(after, trustBefore) {
				return fmt.Sprintf("trust.json changed (%v):\nbefore %s\nafter  %s", err, trustBefore, after)
			}
			return ""
		}},
		{"bob's kept allow against the workspace's deny rule (rm)", func(t *testing.T) string {
			if o := e.run(t, bob, bobSession, bashCall("rm -f made.txt"), "always"); o.decision.Decision != permission.DecisionDeny {
				return fmt.Sprintf("rm was %+v, want denied", o)
			}
			return ""
		}},
		{"bob's kept allow against the sensitive-file protection (.env)", func(t *testing.T) string {
			if o := e.run(t, bob, bobSession, `read_file {"path":".env"}`, "always"); o.decision.Decision != permission.DecisionDeny {
				return fmt.Sprintf("reading .env was %+v, want denied", o)
			}
			return ""
		}},
		{"bob's kept allow (echo) against the built-in ask for a redirect outside the workspace", func(t *testing.T) string {
			o := e.run(t, bob, bobSession, bashCall("echo x > "+filepath.Join(e.root, "outside.txt")), "deny")
			if !o.asked || o.decision.Decision == permission.DecisionAllow {
				return fmt.Sprintf("a redirect outside the workspace was %+v, want asked and (answered) denied", o)
			}
			return ""
		}},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			if msg := a.try(t); msg != "" {
				t.Errorf("the attack succeeded: %s", msg)
			}
		})
	}
}

// API-9, API-5: in the production split every process reads the rules
// from the shared PostgreSQL ledger: a rule kept while one worker ran
// bob's run applies when another worker runs bob's next one, and never
// to alice.
func TestCallerRulesSharedByWorkers_API9(t *testing.T) {
	u, _ := pgtest.Schema(t)
	ctx := context.Background()
	db, err := postgres.Open(ctx, u, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	home, dir := t.TempDir(), t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	env := map[string]string{"HOME": home, "PATH": os.Getenv("PATH"), "REIN_SANDBOX": "off"}
	getenv := func(k string) string { return env[k] }
	bus := eventbus.NewMemory(eventbus.Options{})
	t.Cleanup(func() { bus.Close() })
	first, second := newRulesService(t, db, db, bus, getenv), newRulesService(t, db, db, bus, getenv)

	newSession := func(caller string) string {
		ws := &session.Workspace{Caller: caller, Kind: session.WorkspaceProject, Dir: dir}
		if err := db.CreateWorkspace(ctx, ws); err != nil {
			t.Fatal(err)
		}
		s := &session.Session{Caller: caller, Workspace: ws.ID, WorkDir: dir}
		if err := db.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		return s.ID
	}
	run := func(svc *runner.Service, caller, sessionID, answer string) outcome {
		t.Helper()
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		sub, err := bus.Subscribe(rctx, sessionID, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		r, err := svc.Submit(rctx, session.Submission{SessionID: sessionID, Caller: caller, Text: bashCall("touch made.txt")})
		if err != nil {
			t.Fatal(err)
		}
		return follow(t, rctx, sub, db, r.ID, func(callID string) {
			if err := svc.Answer(rctx, r.ID, callID, permission.Verdict{Answer: permission.Answer(answer)}); err != nil {
				t.Errorf("answer: %v", err)
			}
		})
	}
	if o := run(first, "bob", newSession("bob"), "always"); !o.asked || o.decision.Decision != permission.DecisionAllow {
		t.Fatalf("bob's first run on the first worker: %+v, want asked and allowed", o)
	}
	if o := run(second, "bob", newSession("bob"), "deny"); o.asked || o.decision.Decision != permission.DecisionAllow {
		t.Errorf("bob's next run on the second worker: %+v, want allowed by his kept rule without asking", o)
	}
	if o := run(second, "alice", newSession("alice"), "deny"); !o.asked {
		t.Errorf("alice's run on the second worker was not asked: %+v", o)
	}
	if _, err := os.Stat(filepath.Join(dir, ".rein", "settings.local.yaml")); !os.IsNotExist(err) {
		t.Errorf("a worker wrote the workspace's settings.local.yaml (%v)", err)
	}
}
