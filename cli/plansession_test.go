package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/client"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// apiSession is a session over a served API (SQLite) for the plan tests.
type apiSession struct {
	c    *client.Client
	ctx  context.Context
	id   string
	seen int64 // the newest event id read
}

func newAPISession(t *testing.T, te *testEnv, mode string) *apiSession {
	t.Helper()
	c, err := client.New(serveFor(t, te), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	ws, err := c.CreateWorkspace(ctx, api.CreateWorkspace{Kind: "project", Dir: te.ws})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := c.CreateSession(ctx, api.CreateSession{WorkspaceID: ws.ID, PermissionMode: mode})
	if err != nil {
		t.Fatal(err)
	}
	if sess.PermissionMode != mode {
		t.Fatalf("created with mode %q: %+v", mode, sess)
	}
	return &apiSession{c: c, ctx: ctx, id: sess.ID}
}

// send posts msg and reads the run's events to its done; answer, when
// set, answers each permission question.
func (s *apiSession) send(t *testing.T, msg api.Message, answer func(agent.PermissionEvent) string) (*agent.DoneEvent, []agent.PlanEvent, []string) {
	t.Helper()
	msg.Model = "scripted/m"
	acc, err := s.c.Send(s.ctx, s.id, msg)
	if err != nil {
		t.Fatal(err)
	}
	var plans []agent.PlanEvent
	var asked []string
	for ev, err := range s.c.Events(s.ctx, s.id, s.seen) {
		if err != nil {
			t.Fatalf("events: %v", err)
		}
		s.seen = ev.ID
		var a agent.Event
		if err := json.Unmarshal(ev.Data, &a); err != nil {
			t.Fatal(err)
		}
		switch a.Type {
		case agent.EventPlan:
			plans = append(plans, *a.Plan)
		case agent.EventPermissionRequest:
			asked = append(asked, a.Permission.Tool)
			if answer != nil {
				if err := s.c.Answer(s.ctx, acc.RunID, a.Permission.CallID, api.PermissionAnswer{Answer: answer(*a.Permission)}); err != nil {
					t.Fatalf("answer: %v", err)
				}
			}
		case agent.EventDone:
			return a.Done, plans, asked
		}
	}
	t.Fatal("the event stream ended before the run")
	return nil, nil, nil
}

// mode returns the session's stored permission mode.
func (s *apiSession) mode(t *testing.T) string {
	t.Helper()
	got, err := s.c.Session(s.ctx, s.id)
	if err != nil {
		t.Fatal(err)
	}
	return got.PermissionMode
}

// offers reports whether req offered the tool.
func offers(req *llm.Request, tool string) bool {
	return slices.ContainsFunc(req.Tools, func(s llm.ToolSpec) bool { return s.Name == tool })
}

// SPEC PERM-7 on the API, per session: a session created in plan mode runs
// every message in plan mode (a write is refused, exit_plan_mode offered);
// approving its plan (always) switches the stored session to accept-edits,
// so the next message edits without a question; a message's own mode
// overrides the session's for that run only; PATCH puts it back in plan.
func TestPlanSessionModeOverAPI_PERM7(t *testing.T) {
	te := newTestEnv(t)
	m := te.script("m",
		// run 1, in the session's plan mode
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "write_file", `{"path":"early.go","content":"package a\n"}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{planCall("c2", testPlan)}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c3", "write_file", `{"path":"a.go","content":"package a\n"}`)}},
		llmtest.Reply{Text: "done"},
		// run 2: accept-edits, stored
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c4", "write_file", `{"path":"b.go","content":"package a\n"}`)}},
		llmtest.Reply{Text: "b done"},
		// run 3: back in plan mode, but the message says accept-edits
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c5", "write_file", `{"path":"c.go","content":"package a\n"}`)}},
		llmtest.Reply{Text: "c done"},
		// run 4: plan mode again, from the session
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c6", "write_file", `{"path":"d.go","content":"package a\n"}`)}},
		llmtest.Reply{Text: "refused"},
	)
	s := newAPISession(t, te, "plan")
	done, plans, asked := s.send(t, api.Message{Text: "plan, then do it"}, func(agent.PermissionEvent) string { return "always" })
	if done.Reason != agent.ReasonCompleted || len(plans) != 2 || plans[1].Status != agent.PlanApproved || plans[1].Mode != "accept-edits" {
		t.Fatalf("run 1: %+v, plans %+v", done, plans)
	}
	if !slices.Equal(asked, []string{"exit_plan_mode"}) {
		t.Errorf("run 1 asked about %v", asked)
	}
	if _, err := os.Stat(filepath.Join(te.ws, "early.go")); err == nil {
		t.Error("a write ran in the session's plan mode")
	}
	if !offers(m.Requests()[0], "exit_plan_mode") {
		t.Error("a run in the session's plan mode was not offered exit_plan_mode")
	}
	if got := s.mode(t); got != "accept-edits" {
		t.Fatalf("after the plan was approved, the session's mode is %q", got)
	}

	done, _, asked = s.send(t, api.Message{Text: "and b"}, nil)
	if done.Reason != agent.ReasonCompleted || len(asked) != 0 {
		t.Fatalf("run 2 in accept-edits: %+v, asked %v", done, asked)
	}
	if offers(m.Requests()[4], "exit_plan_mode") || strings.Contains(lastUserText(m.Requests()[4]), "Plan mode") {
		t.Error("run 2 still looks like plan mode")
	}

	patched, err := s.c.UpdateSession(s.ctx, s.id, api.UpdateSession{PermissionMode: ptr("plan")})
	if err != nil || patched.PermissionMode != "plan" {
		t.Fatalf("PATCH: %+v %v", patched, err)
	}
	done, _, asked = s.send(t, api.Message{Text: "and c", PermissionMode: "accept-edits"}, nil)
	if done.Reason != agent.ReasonCompleted || len(asked) != 0 {
		t.Fatalf("run 3 with the message's accept-edits: %+v, asked %v", done, asked)
	}
	if got := s.mode(t); got != "plan" {
		t.Errorf("a message's mode changed the session's to %q", got)
	}
	s.send(t, api.Message{Text: "and d"}, nil)
	for _, f := range []string{"a.go", "b.go", "c.go"} {
		if _, err := os.Stat(filepath.Join(te.ws, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(te.ws, "d.go")); err == nil {
		t.Error("a write ran after PATCH put the session back in plan mode")
	}
}

// SPEC PERM-7: a session in plan mode whose plan nobody answers stops at
// it (plan_ready) and stays in plan mode; PATCH to accept-edits and a
// message approve it: that run edits, with no plan-mode reminder.
func TestPlanReadyApprovedByPatch_PERM7(t *testing.T) {
	te := newTestEnv(t)
	te.env["REIN_ASK_TIMEOUT"] = "1ms"
	m := te.script("m",
		llmtest.Reply{ToolCalls: []llm.ToolUse{planCall("c1", testPlan)}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c2", "write_file", `{"path":"a.go","content":"package a\n"}`)}},
		llmtest.Reply{Text: "done"},
	)
	s := newAPISession(t, te, "plan")
	done, plans, _ := s.send(t, api.Message{Text: "plan it"}, nil)
	if done.Reason != agent.ReasonPlanReady || len(plans) != 2 || plans[1].Status != agent.PlanReady {
		t.Fatalf("unanswered plan: %+v, plans %+v", done, plans)
	}
	if got := s.mode(t); got != "plan" {
		t.Fatalf("after plan_ready the session's mode is %q", got)
	}
	if _, err := s.c.UpdateSession(s.ctx, s.id, api.UpdateSession{PermissionMode: ptr("accept-edits")}); err != nil {
		t.Fatal(err)
	}
	done, _, asked := s.send(t, api.Message{Text: "The plan is approved: carry it out."}, nil)
	if done.Reason != agent.ReasonCompleted || len(asked) != 0 {
		t.Fatalf("the approved run: %+v, asked %v", done, asked)
	}
	if b, err := os.ReadFile(filepath.Join(te.ws, "a.go")); err != nil || string(b) != "package a\n" {
		t.Errorf("a.go: %q %v", b, err)
	}
	if req := m.Requests()[1]; offers(req, "exit_plan_mode") || strings.Contains(lastUserText(req), "# Plan mode") {
		t.Error("the approved run was still told it is in plan mode")
	}
}

func ptr[T any](v T) *T { return &v }

// lastUserText is the text of the last message of req.
func lastUserText(req *llm.Request) string {
	return req.Messages[len(req.Messages)-1].TextOf()
}
