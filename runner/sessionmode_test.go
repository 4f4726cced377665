package runner_test

import (
	"context"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
)

// PERM-7, attack rows: a session's stored mode is checked at each run — a
// bypass or unknown mode written into the store behind the API's back
// (the API refuses both) fails the run with what to do and runs nothing,
// even on a server that allows bypass per message; a message's own mode
// still overrides the session's.
func TestSessionModeChecked_PERM7(t *testing.T) {
	for _, tc := range []struct{ stored, message, want string }{
		{"bypass", "", "bypass is not a session mode"},
		{"yolo", "", `permission mode "yolo"`},
		{"yolo", "default", ""},
	} {
		t.Run(tc.stored+"/"+tc.message, func(t *testing.T) {
			model := llmtest.NewScripted(llmtest.Reply{Text: "ran"})
			h := newHarness(t, model, runner.ServiceConfig{AllowBypass: true})
			s := h.newSession(t)
			s.PermissionMode = tc.stored
			if err := h.sessions.Update(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			r, err := h.svc.Submit(context.Background(), session.Submission{SessionID: s.ID, Caller: "alice", Text: "hi", PermissionMode: tc.message})
			if err != nil {
				t.Fatal(err)
			}
			r = h.wait(t, r.ID)
			if tc.want == "" {
				if r.Status != session.RunCompleted {
					t.Fatalf("a message's mode over a bad stored one: %s %s", r.Status, r.Error)
				}
				return
			}
			if r.Status != session.RunFailed || !strings.Contains(r.Error, tc.want) || !strings.Contains(r.Error, "PATCH /sessions/") {
				t.Errorf("run: %s %q, want failed with %q and how to fix it", r.Status, r.Error, tc.want)
			}
			if n := len(model.Requests()); n != 0 {
				t.Errorf("the model was called %d times", n)
			}
		})
	}
}
