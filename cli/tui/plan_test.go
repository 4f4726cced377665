package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/permission"
)

// planScript asks about a plan and reports the verdict.
func planScript(verdicts chan<- permission.Verdict) func(context.Context, string, permission.Approver, func(agent.Event) bool) {
	return func(ctx context.Context, _ string, ap permission.Approver, emit func(agent.Event) bool) {
		in, _ := json.Marshal(map[string]string{"plan": "# Plan\n\n1. Cache the **config**.\n2. Run the tests."})
		req := permission.Request{Tool: permission.ExitPlanModeTool, Input: in, CallID: "c1"}
		emit(agent.Event{Type: agent.EventPlan, Plan: &agent.PlanEvent{CallID: "c1", Status: agent.PlanProposed, Plan: "x"}})
		v, err := ap.Approve(ctx, permission.Prompt{Request: req, Reason: "plan mode: the plan needs the user's approval"})
		if err != nil {
			v.Message = "error: " + err.Error()
		}
		verdicts <- v
		emit(doneEvent(agent.ReasonCompleted))
	}
}

// SPEC PERM-7, CLI-6: a plan is shown rendered with its three choices; y
// approves into default, a into accept-edits, n sends it back telling the
// model to wait for the user's next message.
func TestPlanApprovalKeys_PERM7(t *testing.T) {
	for _, tc := range []struct {
		key, echo string
		want      permission.Answer
	}{
		{"y", "plan approved: edits ask", permission.AnswerOnce},
		{"a", "plan approved: edits run", permission.AnswerAlways},
		{"n", "plan sent back", permission.AnswerDeny},
	} {
		t.Run(tc.key, func(t *testing.T) {
			verdicts := make(chan permission.Verdict, 1)
			h := newHarness(t, &fakeBackend{script: planScript(verdicts)})
			h.submit("plan it")
			h.viewHas("Plan ready for your approval", "Cache the config", "Run the tests",
				"approve, confirm each edit (y) / approve, accept edits (a) / keep planning (n)")
			if strings.Contains(h.view(), "**config**") || strings.Contains(h.view(), `"plan"`) {
				t.Errorf("the plan is not rendered:\n%s", h.view())
			}
			h.typeText(tc.key)
			var v permission.Verdict
			h.until("the verdict", func() bool {
				select {
				case v = <-verdicts:
					return true
				default:
					return false
				}
			})
			if v.Answer != tc.want || (tc.want == permission.AnswerDeny && v.Message != planRejected) {
				t.Fatalf("verdict %+v", v)
			}
			h.idle()
			h.printedHas(tc.echo)
		})
	}
}

// CLI-6: Shift+Tab at the prompt asks the backend for the next mode.
func TestShiftTabCyclesMode_PERM7(t *testing.T) {
	b := &fakeBackend{cmdOut: map[string]string{"permission-mode": "Permission mode: accept-edits."}}
	h := newHarness(t, b)
	h.send(tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift})
	h.until("the command", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.commands) == 1
	})
	b.mu.Lock()
	got := b.commands[0]
	b.mu.Unlock()
	if !strings.Contains(got, "permission-mode") || !strings.Contains(got, "next") {
		t.Errorf("Shift+Tab ran %q", got)
	}
	h.printedHas("Permission mode: accept-edits.")
}

// CLI-6, PERM-7: /plan TEXT switches to plan mode, then sends TEXT.
func TestPlanCommandSendsPrompt_PERM7(t *testing.T) {
	b := &fakeBackend{cmdOut: map[string]string{"plan": "Permission mode: plan."},
		script: func(ctx context.Context, _ string, _ permission.Approver, emit func(agent.Event) bool) {
			emit(doneEvent(agent.ReasonCompleted))
		}}
	h := newHarness(t, b)
	h.submit("/plan fix the flaky test")
	h.until("the prompt", func() bool { return len(b.gotPrompts()) == 1 })
	b.mu.Lock()
	cmds := strings.Join(b.commands, "|")
	b.mu.Unlock()
	if cmds != "plan" || b.gotPrompts()[0] != "fix the flaky test" {
		t.Errorf("commands %q, prompts %q", cmds, b.gotPrompts())
	}
	h.printedHas("Permission mode: plan.")
}
