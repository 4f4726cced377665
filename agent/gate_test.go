package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
)

type bashIn struct {
	Command string `json:"command"`
}

// fakeBash is an execute-category tool that records the commands it ran.
func fakeBash(ran *[]string) tool.Tool {
	return tool.New("bash", "Runs a command.", tool.Meta{Category: tool.CategoryExecute},
		func(ctx context.Context, c tool.Call, in bashIn) (tool.Result, error) {
			*ran = append(*ran, in.Command)
			return tool.Text("ran " + in.Command), nil
		})
}

// PERM-1 … PERM-4 through the loop: default mode asks for commands, an
// "always" answer persists as a rule that the next call matches, deny rules
// win, a question nobody answers is a deny, and every call is audited.
func TestGateWithPolicy_PERM1_PERM4(t *testing.T) {
	dir := t.TempDir()
	rulesFile := filepath.Join(dir, "settings.yaml")
	deny, _ := permission.ParseRule(permission.DecisionDeny, "bash(rm:*)")
	eng, err := permission.NewPolicy(permission.Settings{Mode: permission.ModeDefault, Rules: []permission.Rule{deny},
		Store: &permission.FileStore{Path: rulesFile}})
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	approver := permission.ApproverFunc(func(ctx context.Context, p permission.Prompt) (permission.Verdict, error) {
		asked = append(asked, string(p.Request.Input))
		return permission.Verdict{Answer: permission.AnswerAlways}, nil
	})
	audit := &permission.MemoryAuditor{}
	var ran []string
	tools, _ := tool.NewSet(tool.OriginBuiltin, fakeBash(&ran))
	p := llmtest.NewScripted(
		llmtest.Reply{ToolCalls: []llm.ToolUse{call("c1", "bash", bashIn{"git status"})}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{call("c2", "bash", bashIn{"git status --short"}), call("c3", "bash", bashIn{"rm -rf build"})}},
		llmtest.Reply{Text: "done"},
	)
	gate := &Gate{Policy: eng, Approver: approver, Rules: eng, Auditor: audit}
	res := drive(t, ctxb, newAgent(p, tools, func(c *Config) { c.Permissions = gate }), Input{Prompt: prompt("go"), WorkDir: dir})
	if res.done.Reason != ReasonCompleted {
		t.Fatalf("done = %+v", res.done)
	}
	if len(asked) != 1 {
		t.Errorf("asked %d times (%v); the always answer should cover the second git status", len(asked), asked)
	}
	if strings.Join(ran, "|") != "git status|git status --short" {
		t.Errorf("ran %v; rm must be denied", ran)
	}
	if got := resultsOf(res.msgs[4])["c3"]; !strings.Contains(got, "permission denied") {
		t.Errorf("rm result = %q", got)
	}
	saved, err := os.ReadFile(rulesFile)
	if err != nil || !strings.Contains(string(saved), "git status") {
		t.Errorf("always rule not persisted: %q, %v", saved, err)
	}
	recs := audit.Records()
	type row struct {
		Call     string
		Decision permission.Decision
		By       permission.DecidedBy
		Answer   permission.Answer
		Outcome  permission.CallOutcome
	}
	var got []row
	for _, r := range recs {
		got = append(got, row{r.CallID, r.Decision, r.DecidedBy, r.Answer, r.Outcome})
		if r.Reason == "" {
			t.Errorf("%s: audit record without a reason", r.CallID)
		}
	}
	want := []row{
		{"c1", permission.DecisionAllow, permission.DecidedByUser, permission.AnswerAlways, permission.OutcomeOK},
		{"c2", permission.DecisionAllow, permission.DecidedByPolicy, "", permission.OutcomeOK},
		{"c3", permission.DecisionDeny, permission.DecidedByPolicy, "", permission.OutcomeDenied},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
	var decisions int
	for _, e := range res.events {
		if e.Type == EventPermissionDecision {
			decisions++
		}
	}
	if res.count(EventPermissionRequest) != 1 || decisions != 1 {
		t.Errorf("permission events: %d requests, %d decisions", res.count(EventPermissionRequest), decisions)
	}
}

// PERM-3: an unanswered question is a deny after the timeout; with no
// approver at all, asks are denied with a message saying how to allow.
func TestGateTimeoutAndHeadless_PERM3_PERM4(t *testing.T) {
	eng, _ := permission.NewPolicy(permission.Settings{})
	hang := permission.ApproverFunc(func(ctx context.Context, p permission.Prompt) (permission.Verdict, error) {
		<-ctx.Done()
		return permission.Verdict{}, ctx.Err()
	})
	for _, tc := range []struct {
		name string
		gate *Gate
		want string
	}{
		{"timeout", &Gate{Policy: eng, Approver: hang, Timeout: 20 * time.Millisecond, Auditor: &permission.MemoryAuditor{}},
			"permission denied because nobody answered the permission request in time: no answer within 20ms"},
		{"headless", &Gate{Policy: eng, Auditor: &permission.MemoryAuditor{}}, "permission denied by the permission policy: no one can answer permission questions in this run; allow the tool with --allowed-tools"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran []string
			tools, _ := tool.NewSet(tool.OriginBuiltin, fakeBash(&ran))
			p := llmtest.NewScripted(llmtest.Reply{ToolCalls: []llm.ToolUse{call("c1", "bash", bashIn{"make"})}}, llmtest.Reply{Text: "ok"})
			res := drive(t, ctxb, newAgent(p, tools, func(c *Config) { c.Permissions = tc.gate }), Input{Prompt: prompt("go"), WorkDir: t.TempDir()})
			if len(ran) != 0 {
				t.Fatalf("ran %v", ran)
			}
			if got := resultsOf(res.msgs[2])["c1"]; !strings.Contains(got, tc.want) {
				t.Errorf("result = %q, want %q", got, tc.want)
			}
			// PERM-4: the record says who decided.
			recs := tc.gate.Auditor.(*permission.MemoryAuditor).Records()
			wantBy := map[string]permission.DecidedBy{"timeout": permission.DecidedByTimeout, "headless": permission.DecidedByPolicy}[tc.name]
			if len(recs) != 1 || recs[0].Decision != permission.DecisionDeny || recs[0].DecidedBy != wantBy || recs[0].Answer != "" || recs[0].Reason == "" {
				t.Errorf("audit = %+v, want a deny decided by %s", recs, wantBy)
			}
		})
	}
	// StopOnDeny ends the run.
	var ran []string
	tools, _ := tool.NewSet(tool.OriginBuiltin, fakeBash(&ran))
	p := llmtest.NewScripted(llmtest.Reply{ToolCalls: []llm.ToolUse{call("c1", "bash", bashIn{"make"})}})
	res := drive(t, ctxb, newAgent(p, tools, func(c *Config) { c.Permissions = &Gate{Policy: eng, StopOnDeny: true} }), Input{Prompt: prompt("go")})
	if res.done.Reason != ReasonPermissionDenied {
		t.Errorf("done = %+v", res.done)
	}
}

// PERM-4: calls refused before the permission check (an unknown tool, an
// invalid input, a hook's block) are audited with a decision, a reason and
// who decided; a user's deny tells the model it was the user.
func TestAuditRefusedCalls_PERM4(t *testing.T) {
	eng, _ := permission.NewPolicy(permission.Settings{})
	audit := &permission.MemoryAuditor{}
	no := permission.ApproverFunc(func(ctx context.Context, p permission.Prompt) (permission.Verdict, error) {
		return permission.Verdict{Answer: permission.AnswerDeny, Message: "use the test script"}, nil
	})
	reg := hook.NewRegistry(hook.Options{})
	_ = reg.Register(hook.Registration{Event: hook.PreToolUse, Name: "guard", Matcher: "bash",
		Hook: hook.Func(func(ctx context.Context, in hook.Input) (hook.Outcome, error) {
			if strings.Contains(string(in.ToolInput), "deploy") {
				return hook.Outcome{Decision: hook.DecisionBlock, Reason: "no deploys"}, nil
			}
			return hook.Outcome{}, nil
		})})
	var ran []string
	tools, _ := tool.NewSet(tool.OriginBuiltin, fakeBash(&ran))
	p := llmtest.NewScripted(llmtest.Reply{ToolCalls: []llm.ToolUse{
		call("c1", "nope", struct{}{}),
		call("c2", "bash", map[string]int{"command": 5}),
		call("c3", "bash", bashIn{"deploy"}),
		call("c4", "bash", bashIn{"make"}),
	}}, llmtest.Reply{Text: "ok"})
	gate := &Gate{Policy: eng, Approver: no, Auditor: audit}
	res := drive(t, ctxb, newAgent(p, tools, func(c *Config) { c.Permissions = gate; c.Hooks = reg }), Input{Prompt: prompt("go"), WorkDir: t.TempDir()})
	if len(ran) != 0 {
		t.Fatalf("ran %v", ran)
	}
	type row struct {
		Call     string
		Decision permission.Decision
		By       permission.DecidedBy
		Answer   permission.Answer
		Outcome  permission.CallOutcome
	}
	var got []row
	reasons := map[string]string{}
	for _, r := range audit.Records() {
		got = append(got, row{r.CallID, r.Decision, r.DecidedBy, r.Answer, r.Outcome})
		reasons[r.CallID] = r.Reason
	}
	want := []row{
		{"c1", permission.DecisionDeny, permission.DecidedByPolicy, "", permission.OutcomeDenied},
		{"c2", permission.DecisionDeny, permission.DecidedByPolicy, "", permission.OutcomeDenied},
		{"c3", permission.DecisionDeny, permission.DecidedByHook, "", permission.OutcomeDenied},
		{"c4", permission.DecisionDeny, permission.DecidedByUser, permission.AnswerDeny, permission.OutcomeDenied},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
	for id, sub := range map[string]string{"c1": "unknown tool", "c2": "invalid input", "c3": "no deploys", "c4": "use the test script"} {
		if !strings.Contains(reasons[id], sub) {
			t.Errorf("%s: reason %q, want %q", id, reasons[id], sub)
		}
	}
	if got := resultsOf(res.msgs[2])["c4"]; got != "permission denied by the user: use the test script" {
		t.Errorf("c4 result = %q", got)
	}
}
