package runner_test

import (
	"context"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
)

// API-10: the context of a session is what its next run offers the model —
// the system prompt and the tools a run of that workspace gets — and
// building it calls no model and stores nothing.
func TestSessionContext_API10(t *testing.T) {
	p := llmtest.NewScripted() // no turn scripted: a model call would fail the test's run
	h := newHarness(t, p, runner.ServiceConfig{})
	ctx := context.Background()
	s := h.newSession(t)
	d, err := h.svc.SessionContext(ctx, s, s.Caller)
	if err != nil {
		t.Fatal(err)
	}
	if d.Request == nil || d.Request.System == "" {
		t.Fatalf("no system prompt: %+v", d)
	}
	names := map[string]bool{}
	for _, tl := range d.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"bash", "read_file", "edit_file"} {
		if !names[want] {
			t.Errorf("the project's run offers no %s: %v", want, names)
		}
	}
	if n := len(p.Requests()); n != 0 {
		t.Errorf("building the context called the model %d time(s)", n)
	}
	if runs, err := h.ledger.ListRuns(ctx, session.RunFilter{SessionID: s.ID}); err != nil || len(runs) != 0 {
		t.Errorf("building the context stored runs: %v, %v", runs, err)
	}
	if evs, _ := h.ledger.LastEventID(ctx, s.ID); evs != 0 {
		t.Errorf("building the context stored events up to %d", evs)
	}
	if _, err := h.svc.SessionContext(ctx, &session.Session{ID: "nosuchsession", Caller: "alice"}, "alice"); err == nil ||
		!strings.Contains(err.Error(), "nosuchsession") {
		t.Errorf("an unknown session: %v", err)
	}
}
