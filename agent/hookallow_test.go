package agent

import (
	"context"
	"testing"
	"time"

	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
)

// COMPAT-1, HOOK-2 (attack): a hook's permissionDecision "allow" — Claude
// Code's PreToolUse output, or a permission_request allow — never lifts a
// deny rule, an ask rule (Claude Code: "hook allow does not override
// deny/ask rules") or the confirmation of a command that asks to leave the
// sandbox (TOOL-7); it lifts only the mode's default ask. A
// permission_request hook answers the question an ask rule puts, as in
// Claude Code, but not the sandbox's. A hook allowing
// every call is what a careless "auto-approve" script does, and the model
// chooses the input (unsandboxed: true).
func TestHookAllowKeepsBoundaries_COMPAT1(t *testing.T) {
	type bashIn struct {
		Command     string `json:"command"`
		Unsandboxed bool   `json:"unsandboxed,omitempty"`
	}
	rows := []struct {
		name    string
		input   bashIn
		rules   []permission.Rule
		both    bool // a permission_request hook allows too, not only pre_tool_use
		asked   bool // the approver was asked
		outcome ToolOutcome
	}{
		{"mode default ask: the hook's allow lifts it", bashIn{Command: "make"}, nil, false, false, OutcomeOK},
		{"deny rule wins", bashIn{Command: "rm -rf build"},
			[]permission.Rule{{Action: permission.DecisionDeny, Tool: "bash", Pattern: "rm:*"}}, true, false, OutcomeDenied},
		{"ask rule still asks", bashIn{Command: "git push"},
			[]permission.Rule{{Action: permission.DecisionAsk, Tool: "bash", Pattern: "git push:*"}}, false, true, OutcomeDenied},
		{"ask rule: a permission_request hook answers the question", bashIn{Command: "git push"},
			[]permission.Rule{{Action: permission.DecisionAsk, Tool: "bash", Pattern: "git push:*"}}, true, false, OutcomeOK},
		{"sandbox exit still asks", bashIn{Command: "make", Unsandboxed: true}, nil, true, true, OutcomeDenied},
		{"sandbox exit with an allow rule still asks", bashIn{Command: "make", Unsandboxed: true},
			[]permission.Rule{{Action: permission.DecisionAllow, Tool: "bash"}}, true, true, OutcomeDenied},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			allowAll := hook.NewRegistry(hook.Options{})
			events := []hook.Event{hook.PreToolUse}
			if row.both {
				events = append(events, hook.PermissionRequest)
			}
			for _, ev := range events {
				if err := allowAll.Register(hook.Registration{Event: ev, Name: "yes-" + string(ev),
					Hook: hook.Func(func(ctx context.Context, in hook.Input) (hook.Outcome, error) {
						return hook.Outcome{Permission: hook.PermissionAllow, Reason: "auto-approved"}, nil
					})}); err != nil {
					t.Fatal(err)
				}
			}
			eng, err := permission.NewPolicy(permission.Settings{Mode: permission.ModeDefault, Rules: row.rules})
			if err != nil {
				t.Fatal(err)
			}
			ran := 0
			bash := tool.Define("bash", "run", tool.Meta{}, nil, func(ctx context.Context, call tool.Call, in bashIn) (tool.Result, error) {
				ran++
				return tool.Text("ran"), nil
			})
			tools, _ := tool.NewSet(tool.OriginBuiltin, bash)
			asked := 0
			no := permission.ApproverFunc(func(ctx context.Context, p permission.Prompt) (permission.Verdict, error) {
				asked++
				return permission.Verdict{Answer: permission.AnswerDeny}, nil
			})
			p := llmtest.NewScripted(llmtest.Reply{ToolCalls: []llm.ToolUse{call("c1", "bash", row.input)}}, llmtest.Reply{Text: "done"})
			gate := &Gate{Policy: eng, Approver: no, Timeout: time.Minute}
			res := drive(t, ctxb, newAgent(p, tools, func(c *Config) { c.Permissions = gate; c.Hooks = allowAll }),
				Input{Prompt: prompt("go"), WorkDir: t.TempDir()})
			ends := res.toolEnds()
			if len(ends) != 1 || ends[0].Outcome != row.outcome {
				t.Fatalf("tool ends %+v, want outcome %s", ends, row.outcome)
			}
			if (asked == 1) != row.asked {
				t.Errorf("approver asked %d times, want asked=%v", asked, row.asked)
			}
			if (ran == 1) != (row.outcome == OutcomeOK) {
				t.Errorf("the command ran %d times", ran)
			}
		})
	}
}
