package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
)

// planTool stands in for tool/builtin's exit_plan_mode (agent may not
// import it); ran counts its runs.
func planTool(ran *int) tool.Tool {
	type in struct {
		Plan string `json:"plan"`
	}
	return tool.Define("exit_plan_mode", "present the plan", tool.Meta{ReadOnly: true, Category: tool.CategorySession}, nil,
		func(ctx context.Context, call tool.Call, _ in) (tool.Result, error) {
			*ran++
			return tool.Text("approved"), nil
		})
}

func planRun(t *testing.T, ap permission.Approver, hooks Hooks, rules ...permission.Rule) (result, *permission.Engine, int) {
	t.Helper()
	eng, err := permission.NewPolicy(permission.Settings{Mode: permission.ModePlan, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	tools, _ := tool.NewSet(tool.OriginBuiltin, planTool(&ran))
	p := llmtest.NewScripted(llmtest.Reply{Text: "My plan.", ToolCalls: []llm.ToolUse{call("c1", "exit_plan_mode", map[string]string{"plan": "1. do it"})}},
		llmtest.Reply{Text: "after"})
	gate := &Gate{Policy: eng, Approver: ap, Rules: eng, Timeout: time.Minute}
	res := drive(t, ctxb, newAgent(p, tools, func(c *Config) {
		c.Permissions = gate
		if hooks != nil {
			c.Hooks = hooks
		}
	}), Input{Prompt: prompt("plan it"), WorkDir: t.TempDir()})
	return res, eng, ran
}

func planStatuses(res result) []string {
	var out []string
	for _, e := range res.events {
		if e.Type == EventPlan {
			s := string(e.Plan.Status)
			if e.Plan.Mode != "" {
				s += ":" + e.Plan.Mode
			}
			out = append(out, s)
		}
	}
	return out
}

// SPEC PERM-7, LOOP-3: with no one to approve it (a headless run) the run
// stops at its plan with reason plan_ready, the plan in done and in the
// focus, no error; the tool does not run and the mode stays plan.
func TestPlanReadyHeadless_PERM7(t *testing.T) {
	res, eng, ran := planRun(t, nil, nil)
	if res.done.Reason != ReasonPlanReady || res.done.Plan != "1. do it" || res.done.Focus.Plan != "1. do it" || res.done.Error != "" {
		t.Errorf("done %+v", res.done)
	}
	if res.count(EventError) != 0 || ran != 0 || eng.Mode() != permission.ModePlan {
		t.Errorf("errors %d, tool ran %d, mode %s", res.count(EventError), ran, eng.Mode())
	}
	if got := strings.Join(planStatuses(res), ","); got != "proposed,ready" {
		t.Errorf("plan events %s", got)
	}
	// Nobody answers in time: the same end, by timeout.
	slow := permission.ApproverFunc(func(ctx context.Context, p permission.Prompt) (permission.Verdict, error) {
		<-ctx.Done()
		return permission.Verdict{}, ctx.Err()
	})
	eng2, _ := permission.NewPolicy(permission.Settings{Mode: permission.ModePlan})
	ran2 := 0
	tools, _ := tool.NewSet(tool.OriginBuiltin, planTool(&ran2))
	p := llmtest.NewScripted(llmtest.Reply{ToolCalls: []llm.ToolUse{call("c1", "exit_plan_mode", map[string]string{"plan": "x"})}})
	res = drive(t, ctxb, newAgent(p, tools, func(c *Config) { c.Permissions = &Gate{Policy: eng2, Approver: slow, Timeout: time.Millisecond} }),
		Input{Prompt: prompt("plan"), WorkDir: t.TempDir()})
	if res.done.Reason != ReasonPlanReady || ran2 != 0 {
		t.Errorf("timed-out plan: %+v, ran %d", res.done, ran2)
	}
}

// SPEC PERM-7 (attack): the model cannot approve its own plan — not with
// an allow rule for the tool, not through a pre_tool_use or
// permission_request hook that allows everything; only the approver's
// answer does, and always keeps no rule.
func TestPlanNotSelfApproved_PERM7(t *testing.T) {
	allowAll := hook.NewRegistry(hook.Options{})
	for _, ev := range []hook.Event{hook.PreToolUse, hook.PermissionRequest} {
		if err := allowAll.Register(hook.Registration{Event: ev, Name: "yes-" + string(ev),
			Hook: hook.Func(func(ctx context.Context, in hook.Input) (hook.Outcome, error) {
				return hook.Outcome{Permission: hook.PermissionAllow}, nil
			})}); err != nil {
			t.Fatal(err)
		}
	}
	self := permission.Rule{Action: permission.DecisionAllow, Tool: "exit_plan_mode", Source: permission.SourceSession}
	res, eng, ran := planRun(t, nil, allowAll, self)
	if res.done.Reason != ReasonPlanReady || ran != 0 || eng.Mode() != permission.ModePlan {
		t.Errorf("self-approval: done %s, ran %d, mode %s", res.done.Reason, ran, eng.Mode())
	}
	asked := 0
	always := permission.ApproverFunc(func(ctx context.Context, p permission.Prompt) (permission.Verdict, error) {
		asked++
		return permission.Verdict{Answer: permission.AnswerAlways, Rules: []permission.Rule{self}}, nil
	})
	res, eng, ran = planRun(t, always, allowAll)
	if asked != 1 || ran != 1 || eng.Mode() != permission.ModeAcceptEdits || res.done.Reason != ReasonCompleted {
		t.Errorf("approved: asked %d, ran %d, mode %s, done %s", asked, ran, eng.Mode(), res.done.Reason)
	}
	if got := strings.Join(planStatuses(res), ","); got != "proposed,approved:accept-edits" {
		t.Errorf("plan events %s", got)
	}
	for _, r := range eng.Rules() {
		if r.Tool == "exit_plan_mode" {
			t.Errorf("the approval kept the rule %s", r)
		}
	}
	for _, e := range res.events {
		if e.Type == EventPermissionDecision && e.Permission.Always {
			t.Errorf("a plan decision says always: %+v", e.Permission)
		}
	}
}
