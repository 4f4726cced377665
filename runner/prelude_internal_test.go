package runner

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
)

// TestGrantPolicy_COMPAT1: a slash command's allowed-tools allow, without
// asking, what the policy would ask about and they cover; they never
// undo a deny, an ask rule, nor plan mode, and the plan is still left
// through the policy beneath.
func TestGrantPolicy_COMPAT1(t *testing.T) {
	ctx := context.Background()
	grant := []permission.Rule{{Action: permission.DecisionAllow, Tool: "bash", Pattern: "git status:*", Source: permission.SourceRun}}
	bash := func(cmd string) permission.Request {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		return permission.Request{Tool: "bash", Input: in, WorkDir: t.TempDir(), Meta: tool.Meta{Category: tool.CategoryExecute}}
	}
	for _, tc := range []struct {
		name  string
		mode  permission.Mode
		rules []permission.Rule
		cmd   string
		want  permission.Decision
	}{
		{"covered: allowed", permission.ModeDefault, nil, "git status --short", permission.DecisionAllow},
		{"not covered: still asks", permission.ModeDefault, nil, "git push", permission.DecisionAsk},
		{"chained: every part must be covered", permission.ModeDefault, nil, "git status && rm -rf x", permission.DecisionAsk},
		{"a deny rule wins", permission.ModeDefault, []permission.Rule{{Action: permission.DecisionDeny, Tool: "bash", Pattern: "git status:*"}},
			"git status", permission.DecisionDeny},
		{"an ask rule wins", permission.ModeDefault, []permission.Rule{{Action: permission.DecisionAsk, Tool: "bash", Pattern: "git:*"}},
			"git status", permission.DecisionAsk},
		{"strict mode still asks", permission.ModeStrict, nil, "git status", permission.DecisionAsk},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, err := permission.NewPolicy(permission.Settings{Mode: tc.mode, Rules: tc.rules})
			if err != nil {
				t.Fatal(err)
			}
			with, err := permission.NewPolicy(permission.Settings{Mode: tc.mode, Rules: append(append([]permission.Rule{}, tc.rules...), grant...)})
			if err != nil {
				t.Fatal(err)
			}
			o, err := (&grantPolicy{base: base, with: with}).Decide(ctx, bash(tc.cmd))
			if err != nil || o.Decision != tc.want {
				t.Fatalf("Decide(%q) = %s (%s), %v; want %s", tc.cmd, o.Decision, o.Reason, err, tc.want)
			}
		})
	}
	plan, _ := permission.NewPolicy(permission.Settings{Mode: permission.ModePlan})
	g := &grantPolicy{base: plan, with: plan}
	var _ agent.PlanApprover = g
	if m, err := g.ApprovePlan(permission.AnswerOnce); err != nil || plan.Mode() == permission.ModePlan {
		t.Errorf("ApprovePlan = %s, %v; the engine is still in plan mode", m, err)
	}
}
