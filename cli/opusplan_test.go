package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// sentModels are the models the requests to the mock vendor named, in order.
func sentModels(t *testing.T, srv *mockserver.Server) []string {
	t.Helper()
	var out []string
	for _, r := range srv.Requests() {
		var body struct {
			Model string `json:"model"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		out = append(out, body.Model)
	}
	return out
}

func opusplanEnv(t *testing.T) (*testEnv, *mockserver.Server) {
	t.Helper()
	srv := mockserver.New()
	t.Cleanup(srv.Close)
	te := newTestEnv(t)
	te.env["ANTHROPIC_API_KEY"] = "k"
	te.env["ANTHROPIC_BASE_URL"] = srv.URL
	return te, srv
}

func planTurn(id string) mockserver.Turn {
	b, _ := json.Marshal(map[string]string{"plan": testPlan})
	return mockserver.Turn{ToolCalls: []mockserver.ToolCall{{ID: id, Name: "exit_plan_mode", Input: string(b)}}}
}

// SPEC PERM-7, COMPAT-1: rein run --model opusplan sends plan mode's calls
// to the opus model and the others to the sonnet one; the session keeps
// opusplan, so resuming it in accept-edits to carry the plan out runs on
// sonnet.
func TestOpusplanCLI_PERM7(t *testing.T) {
	te, srv := opusplanEnv(t)
	srv.Enqueue(mockserver.Turn{ToolCalls: []mockserver.ToolCall{{ID: "c1", Name: "list_dir", Input: `{}`}}}, planTurn("c2"))
	out, _ := te.mustRun(ExitPlanReady, "run", "--permission-mode", "plan", "--model", "opusplan", "--output", "json", "plan it")
	var res struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.SessionID == "" {
		t.Fatalf("json output %q: %v", out, err)
	}
	if got := sentModels(t, srv); len(got) != 2 || got[0] != "claude-opus-5" || got[1] != "claude-opus-5" {
		t.Fatalf("plan mode sent %v, want claude-opus-5 twice", got)
	}
	srv.Enqueue(mockserver.Turn{ToolCalls: []mockserver.ToolCall{{ID: "c3", Name: "write_file", Input: `{"path":"a.go","content":"package a\n"}`}}},
		mockserver.Turn{Text: "done"})
	te.mustRun(ExitOK, "run", "--resume", res.SessionID, "--permission-mode", "accept-edits", "The plan is approved: carry it out.")
	if got := sentModels(t, srv)[2:]; len(got) != 2 || got[0] != "claude-sonnet-5" || got[1] != "claude-sonnet-5" {
		t.Errorf("after the approval opusplan sent %v, want claude-sonnet-5 twice", got)
	}
	if _, err := os.Stat(filepath.Join(te.ws, "a.go")); err != nil {
		t.Errorf("the approved edit: %v", err)
	}
	// Without plan mode, opusplan is sonnet from the first call.
	srv.Reset()
	srv.Enqueue(mockserver.Turn{Text: "hi"})
	te.mustRun(ExitOK, "run", "--model", "opusplan", "hello")
	if got := sentModels(t, srv); len(got) != 1 || got[0] != "claude-sonnet-5" {
		t.Errorf("opusplan outside plan mode sent %v", got)
	}
}

// SPEC PERM-7: on the server, a session in plan mode running opusplan
// calls opus until its plan is approved in the run, then sonnet for the
// rest of that run.
func TestOpusplanServer_PERM7(t *testing.T) {
	te, srv := opusplanEnv(t)
	srv.Enqueue(planTurn("c1"),
		mockserver.Turn{ToolCalls: []mockserver.ToolCall{{ID: "c2", Name: "write_file", Input: `{"path":"a.go","content":"package a\n"}`}}},
		mockserver.Turn{Text: "done"})
	s := newAPISession(t, te, "plan")
	c, ctx := s.c, s.ctx
	acc, err := c.Send(ctx, s.id, api.Message{Text: "plan, then do it", Model: "opusplan"})
	if err != nil {
		t.Fatal(err)
	}
	var done *agent.DoneEvent
	for ev, err := range c.Events(ctx, s.id, 0) {
		if err != nil {
			t.Fatal(err)
		}
		var a agent.Event
		if err := json.Unmarshal(ev.Data, &a); err != nil {
			t.Fatal(err)
		}
		if a.Type == agent.EventPermissionRequest {
			if err := c.Answer(ctx, acc.RunID, a.Permission.CallID, api.PermissionAnswer{Answer: "always"}); err != nil {
				t.Fatal(err)
			}
		}
		if a.Type == agent.EventDone {
			done = a.Done
			break
		}
	}
	if done == nil || done.Reason != agent.ReasonCompleted {
		t.Fatalf("done %+v", done)
	}
	want := []string{"claude-opus-5", "claude-sonnet-5", "claude-sonnet-5"}
	if got := sentModels(t, srv); len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("requests named %v, want %v", got, want)
	}
	if m := s.mode(t); m != "accept-edits" {
		t.Errorf("the session's mode after the approval: %q", m)
	}
}
