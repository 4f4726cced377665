package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
)

// PERM-3 for ask_user on a server: the question reaches the stream as a
// question event, stored with the durable events (a client connecting
// later sees it), the answer posted over the API reaches the model, a
// second answer finds nothing pending, a question nobody answers ends
// with a result saying so once the ask timeout passed, and a declined one
// tells the model the user declined.
func TestAskUserOverServer_PERM3(t *testing.T) {
	p := llmtest.NewScripted(
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("q1", "ask_user", `{"question":"Which database?","options":["SQLite","PostgreSQL"]}`)}},
		llmtest.Reply{Text: "using it"},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("q2", "ask_user", `{"question":"Anyone there?"}`)}},
		llmtest.Reply{Text: "went on"},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("q3", "ask_user", `{"question":"Tabs or spaces?","options":["tabs","spaces"]}`)}},
		llmtest.Reply{Text: "chose myself"})
	h := newHarness(t, p, runner.ServiceConfig{Getenv: askTimeoutEnv("1s")})
	s := h.newSession(t)
	ctx := context.Background()
	sub, err := h.bus.Subscribe(ctx, s.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	r, err := h.svc.Submit(ctx, session.Submission{SessionID: s.ID, Caller: "alice", Text: "set up the tests"})
	if err != nil {
		t.Fatal(err)
	}
	answers := map[string]struct {
		text     string
		declined bool
	}{"q1": {text: "PostgreSQL"}, "q3": {declined: true}}
	toolEnd := func() string {
		for ev := range sub.Events() {
			var a agent.Event
			if err := json.Unmarshal(ev.Data, &a); err != nil {
				t.Fatal(err)
			}
			switch a.Type {
			case agent.EventQuestion:
				if !ev.Durable {
					t.Error("the question event is not durable")
				}
				if a.CallID == "q1" && (a.Question != "Which database?" || !slices.Equal(a.Options, []string{"SQLite", "PostgreSQL"}) || a.RunID != r.ID) {
					t.Errorf("question event %+v", a)
				}
				if ans, ok := answers[a.CallID]; ok {
					if err := h.svc.AnswerQuestion(ctx, a.RunID, a.CallID, ans.text, ans.declined); err != nil {
						t.Errorf("answer: %v", err)
					}
				}
			case agent.EventToolEnd:
				return a.Tool.Output
			}
		}
		t.Fatal("stream ended without a tool_end")
		return ""
	}
	if out := toolEnd(); out != "The user answered: PostgreSQL" {
		t.Errorf("answered question: the model read %q", out)
	}
	h.wait(t, r.ID)
	if err := h.svc.AnswerQuestion(ctx, r.ID, "q1", "again", false); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("answering an ended run's question: %v, want ErrNotFound", err)
	}
	stored, err := h.ledger.Events(ctx, s.ID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(stored, func(e session.Event) bool {
		return e.Type == "question" && strings.Contains(string(e.Data), `"call_id":"q1"`)
	}) {
		t.Error("the question event was not stored for clients connecting later")
	}
	// Nobody answers the second run's question.
	r2, err := h.svc.Submit(ctx, session.Submission{SessionID: s.ID, Caller: "alice", Text: "go on"})
	if err != nil {
		t.Fatal(err)
	}
	if out := toolEnd(); !strings.Contains(out, "nobody answered the question within 1s") {
		t.Errorf("unanswered question: the model read %q", out)
	}
	if run := h.wait(t, r2.ID); run.Status != session.RunCompleted {
		t.Errorf("run after the timeout: %s %s", run.Status, run.Error)
	}
	// The user declines the third run's question.
	r3, err := h.svc.Submit(ctx, session.Submission{SessionID: s.ID, Caller: "alice", Text: "format it"})
	if err != nil {
		t.Fatal(err)
	}
	if out := toolEnd(); !strings.Contains(out, "declined to answer") {
		t.Errorf("declined question: the model read %q", out)
	}
	if run := h.wait(t, r3.ID); run.Status != session.RunCompleted {
		t.Errorf("run after the decline: %s %s", run.Status, run.Error)
	}
}
