package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/client"
	"github.com/reinhq/rein/compact"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/permission"
)

const testPlan = "# Plan\n\n1. Change src/a.go to return 2.\n2. Run go test ./..."

func planCall(id, plan string) llm.ToolUse {
	b, _ := json.Marshal(map[string]string{"plan": plan})
	return llmtest.Call(id, "exit_plan_mode", string(b))
}

// SPEC PERM-7: a headless plan-mode run — its writes are denied, the
// model is told why, and the run stops at its plan: exit code 10, the plan
// on stdout, how to approve it on stderr; --output json carries the plan.
// Resuming in accept-edits mode carries it out.
func TestHeadlessPlanStops_PERM7(t *testing.T) {
	te := newTestEnv(t)
	te.write("src/a.go", "package a\n")
	s := te.script("m",
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "write_file", `{"path":"src/a.go","content":"pwned"}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c2", "bash", `{"command":"echo pwned > src/b.go"}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c3", "bash", `{"command":"sed -i s/a/b/ src/a.go"}`)}},
		llmtest.Reply{Text: "Here is my plan.", ToolCalls: []llm.ToolUse{planCall("c4", testPlan)}},
		llmtest.Reply{Text: "not reached"},
	)
	out, errs := te.mustRun(ExitPlanReady, "run", "--permission-mode", "plan", "--model", "scripted/m", "plan the change")
	if out != testPlan+"\n" {
		t.Errorf("stdout %q, want the plan", out)
	}
	if !strings.Contains(errs, "waits for your approval") || !strings.Contains(errs, "--permission-mode accept-edits") {
		t.Errorf("stderr does not say how to approve:\n%s", errs)
	}
	if b, _ := os.ReadFile(filepath.Join(te.ws, "src/a.go")); string(b) != "package a\n" {
		t.Errorf("src/a.go changed in plan mode: %q", b)
	}
	if _, err := os.Stat(filepath.Join(te.ws, "src/b.go")); err == nil {
		t.Error("src/b.go written in plan mode")
	}
	reqs := s.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model calls, want 4 (the run stops at the plan)", len(reqs))
	}
	if !hasTool(reqs[0], "exit_plan_mode") {
		t.Error("a plan-mode run does not offer exit_plan_mode")
	}
	if last := reqs[0].Messages[len(reqs[0].Messages)-1].TextOf(); !strings.Contains(last, "# Plan mode") {
		t.Errorf("the model is not told it is in plan mode: %q", last)
	}
	for i, want := range []string{"plan mode: write_file can change things", "plan mode: it writes to", "plan mode: sed -i"} {
		msgs := reqs[i+1].Messages
		got := msgs[len(msgs)-1].ToolResults()[0].Content[0].(*llm.Text).Text
		if !strings.Contains(got, want) {
			t.Errorf("call %d: the model read %q, want %q", i+1, got, want)
		}
	}

	// --output json carries the reason, the code and the plan.
	te.script("j", llmtest.Reply{ToolCalls: []llm.ToolUse{planCall("c1", testPlan)}})
	out, _ = te.mustRun(ExitPlanReady, "run", "--permission-mode", "plan", "--model", "scripted/j", "--output", "json", "plan")
	var res struct {
		SessionID string `json:"session_id"`
		Reason    string `json:"reason"`
		ExitCode  int    `json:"exit_code"`
		Plan      string `json:"plan"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json output %q: %v", out, err)
	}
	if res.Reason != "plan_ready" || res.ExitCode != ExitPlanReady || res.Plan != testPlan || res.SessionID == "" {
		t.Errorf("json result %+v", res)
	}

	// Approve by resuming in accept-edits: the edit runs.
	te.script("k", llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "write_file", `{"path":"src/new.go","content":"package a // 2\n"}`)}},
		llmtest.Reply{Text: "done"})
	k := te.models["scripted/k"]
	te.mustRun(ExitOK, "run", "--resume", res.SessionID, "--permission-mode", "accept-edits", "--model", "scripted/k", "The plan is approved: carry it out.")
	if hasTool(k.Requests()[0], "exit_plan_mode") {
		t.Error("exit_plan_mode is offered outside plan mode: every session's tool list would change")
	}
	for _, m := range k.Requests()[0].Messages {
		if strings.Contains(m.TextOf(), "# Plan mode") {
			t.Error("the plan-mode reminder reached a run in accept-edits mode, or was stored")
		}
	}
	if b, _ := os.ReadFile(filepath.Join(te.ws, "src/new.go")); string(b) != "package a // 2\n" {
		t.Errorf("after approval src/new.go is %q", b)
	}
}

// planApprover answers plans with the given verdicts in turn and every
// other question with once.
func planApprover(t *testing.T, verdicts ...permission.Verdict) (permission.Approver, *int) {
	asked := 0
	return permission.ApproverFunc(func(ctx context.Context, p permission.Prompt) (permission.Verdict, error) {
		if !permission.IsPlanApproval(p.Request) {
			return permission.Verdict{Answer: permission.AnswerOnce}, nil
		}
		if len(p.Suggested) != 0 {
			t.Errorf("a plan question suggests rules %v", p.Suggested)
		}
		if asked >= len(verdicts) {
			t.Fatalf("plan asked %d times", asked+1)
		}
		asked++
		return verdicts[asked-1], nil
	}), &asked
}

// submitEvents runs a prompt and returns its events.
func submitEvents(t *testing.T, ctx context.Context, b tui.Backend, prompt string, ap permission.Approver) []agent.Event {
	t.Helper()
	var evs []agent.Event
	for ev, err := range b.Submit(ctx, tui.Prompt{Text: prompt}, ap) {
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// SPEC PERM-7, CLI-6: in the interactive session a plan is sent back with
// feedback (the model reads it and stays in plan mode), then approved into
// accept-edits: the session leaves plan mode, the plan is kept in the
// session's plan file, and the edit that follows runs without a question.
// A compaction afterwards keeps the plan word for word. The mode cycle
// reaches plan mode and back.
func TestInteractivePlanApproval_PERM7(t *testing.T) {
	te := newTestEnv(t)
	te.write("src/a.go", "package a\n")
	first := "# Plan\n\n1. Edit src/a.go."
	s := te.script("m",
		llmtest.Reply{ToolCalls: []llm.ToolUse{planCall("c1", first)}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{planCall("c2", testPlan)}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c3", "write_file", `{"path":"src/new.go","content":"package a // 2\n"}`)}},
		llmtest.Reply{Text: "done"},
		llmtest.Reply{Text: "Summary: we planned and edited src/a.go."},
	)
	drive(t, te, func(ctx context.Context, b tui.Backend, _ tui.Options) {
		if m := b.Info().PermissionMode; m != "plan" {
			t.Fatalf("mode %s, want plan", m)
		}
		ap, asked := planApprover(t,
			permission.Verdict{Answer: permission.AnswerDeny, Message: "add a step that runs the tests"},
			permission.Verdict{Answer: permission.AnswerAlways, Rules: []permission.Rule{{Action: permission.DecisionAllow, Tool: "bash", Pattern: "*"}}})
		evs := submitEvents(t, ctx, b, "make a return 2", ap)
		var plans []agent.PlanEvent
		var done *agent.DoneEvent
		for _, ev := range evs {
			if ev.Type == agent.EventPlan {
				plans = append(plans, *ev.Plan)
			}
			if ev.Type == agent.EventDone {
				done = ev.Done
			}
		}
		if *asked != 2 || done == nil || done.Reason != agent.ReasonCompleted {
			t.Fatalf("asked %d, done %+v", *asked, done)
		}
		want := []agent.PlanEvent{
			{CallID: "c1", Status: agent.PlanProposed, Plan: first},
			{CallID: "c1", Status: agent.PlanRejected, Plan: first, Feedback: "the user sent the plan back; you are still in plan mode: revise the plan and present it again with exit_plan_mode. The user's feedback: add a step that runs the tests"},
			{CallID: "c2", Status: agent.PlanProposed, Plan: testPlan},
			{CallID: "c2", Status: agent.PlanApproved, Plan: testPlan, Mode: "accept-edits"},
		}
		if len(plans) != len(want) {
			t.Fatalf("plan events %+v", plans)
		}
		for i := range want {
			if plans[i] != want[i] {
				t.Errorf("plan event %d: %+v, want %+v", i, plans[i], want[i])
			}
		}
		reqs := s.Requests()
		if got := lastResultOf(reqs[1]); !strings.Contains(got, "add a step that runs the tests") {
			t.Errorf("the model read %q after the rejection", got)
		}
		if got := lastResultOf(reqs[2]); !strings.Contains(got, "accept-edits") || !strings.Contains(got, "Carry it out") {
			t.Errorf("the model read %q after the approval", got)
		}
		if m := b.Info().PermissionMode; m != "accept-edits" {
			t.Errorf("mode after approval %s", m)
		}
		if bs, _ := os.ReadFile(filepath.Join(te.ws, "src/new.go")); string(bs) != "package a // 2\n" {
			t.Errorf("src/new.go is %q after the approved edit: %s", bs, lastResultOf(reqs[3]))
		}
		if done.Focus == nil || done.Focus.Plan != testPlan {
			t.Errorf("focus %+v does not keep the plan", done.Focus)
		}
		// The always answer kept no rule: the approver's rules are dropped.
		e := b.(*engine)
		for _, r := range e.Policy().Rules() {
			if r.Tool == "bash" && r.Pattern == "*" {
				t.Errorf("a plan approval kept the rule %s", r)
			}
		}
		pf := e.PlanFile()
		if bs, err := os.ReadFile(pf); err != nil || strings.TrimSpace(string(bs)) != testPlan {
			t.Errorf("plan file %s: %q, %v", pf, bs, err)
		}
		// Compaction keeps the plan verbatim (CTX-5).
		if out, err := b.Command(ctx, "compact", ""); err != nil || !strings.Contains(out, "Compacted") {
			t.Fatalf("/compact: %q, %v", out, err)
		}
		if h := e.History(); len(h) == 0 || !strings.Contains(h[0].TextOf(), compact.PlanHeader+"\n\n"+testPlan) {
			t.Errorf("the compacted history does not keep the plan: %q", h[0].TextOf())
		}
		// The mode cycle: accept-edits → plan → default → accept-edits.
		for _, want := range []string{"plan", "default", "accept-edits"} {
			if _, err := b.Command(ctx, "permission-mode", "next"); err != nil || b.Info().PermissionMode != want {
				t.Errorf("cycle: %s, %v; want %s", b.Info().PermissionMode, err, want)
			}
		}
		if _, err := b.Command(ctx, "plan", ""); err != nil || b.Info().PermissionMode != "plan" {
			t.Errorf("/plan: %s, %v", b.Info().PermissionMode, err)
		}
		if _, err := b.Command(ctx, "permission-mode", "bypass"); err == nil {
			t.Error("/permission-mode bypass accepted")
		}
		if _, err := b.Command(ctx, "permission-mode", "yolo"); err == nil || !strings.Contains(err.Error(), "valid modes") {
			t.Errorf("/permission-mode yolo: %v", err)
		}
	}, "--permission-mode", "plan", "--model", "scripted/m")
}

// lastResultOf is the text of the tool results in the last message of req.
func lastResultOf(req *llm.Request) string {
	var b strings.Builder
	for _, r := range req.Messages[len(req.Messages)-1].ToolResults() {
		for _, c := range r.Content {
			if t, ok := c.(*llm.Text); ok {
				b.WriteString(t.Text)
			}
		}
	}
	return b.String()
}

func hasTool(req *llm.Request, name string) bool {
	for _, t := range req.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// SPEC PERM-7, PERM-3, API-2: over the API a message asks for plan mode;
// the plan arrives on the session's event stream as a plan event with its
// permission_request, and answering it (always) approves it into
// accept-edits: the edit that follows runs and the plan event says so.
func TestPlanOverAPI_PERM7(t *testing.T) {
	te := newTestEnv(t)
	s := te.script("m",
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "bash", `{"command":"touch pwned"}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{planCall("c2", testPlan)}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c3", "write_file", `{"path":"new.go","content":"package a\n"}`)}},
		llmtest.Reply{Text: "done"})
	url := serveFor(t, te)
	c, err := client.New(url, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ws, err := c.CreateWorkspace(ctx, api.CreateWorkspace{Kind: "project", Dir: te.ws})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := c.CreateSession(ctx, api.CreateSession{WorkspaceID: ws.ID})
	if err != nil {
		t.Fatal(err)
	}
	acc, err := c.Send(ctx, sess.ID, api.Message{Text: "plan, then do it", Model: "scripted/m", PermissionMode: "plan"})
	if err != nil {
		t.Fatal(err)
	}
	var plans []agent.PlanEvent
	var done *agent.DoneEvent
	for ev, err := range c.Events(ctx, sess.ID, 0) {
		if err != nil {
			t.Fatalf("events: %v", err)
		}
		var a agent.Event
		if err := json.Unmarshal(ev.Data, &a); err != nil {
			t.Fatal(err)
		}
		if ev.Type != string(a.Type) {
			t.Errorf("SSE event %q carries a %q", ev.Type, a.Type)
		}
		switch a.Type {
		case agent.EventPlan:
			plans = append(plans, *a.Plan)
		case agent.EventPermissionRequest:
			if a.Permission.Tool != "exit_plan_mode" {
				t.Errorf("question about %s in plan mode", a.Permission.Tool)
			}
			if err := c.Answer(ctx, acc.RunID, a.Permission.CallID, api.PermissionAnswer{Answer: "always"}); err != nil {
				t.Fatalf("answer: %v", err)
			}
		case agent.EventDone:
			done = a.Done
		}
		if done != nil {
			break
		}
	}
	if done == nil || done.Reason != agent.ReasonCompleted {
		t.Fatalf("done %+v", done)
	}
	if len(plans) != 2 || plans[0].Status != agent.PlanProposed || plans[0].Plan != testPlan ||
		plans[1].Status != agent.PlanApproved || plans[1].Mode != "accept-edits" || plans[1].CallID != "c2" {
		t.Errorf("plan events %+v", plans)
	}
	if got := lastResultOf(s.Requests()[1]); !strings.Contains(got, "plan mode: touch is not a command that only reads") {
		t.Errorf("the model read %q about touch", got)
	}
	if _, err := os.Stat(filepath.Join(te.ws, "pwned")); err == nil {
		t.Error("touch ran in plan mode")
	}
	if b, err := os.ReadFile(filepath.Join(te.ws, "new.go")); err != nil || string(b) != "package a\n" {
		t.Errorf("new.go after the approval: %q, %v", b, err)
	}
}

// SPEC PERM-7: rein run --server in plan mode without a terminal stops at
// the plan as a local headless run does: exit 10, the plan on stdout.
func TestRemoteHeadlessPlanStops_PERM7(t *testing.T) {
	te := newTestEnv(t)
	te.script("m", llmtest.Reply{ToolCalls: []llm.ToolUse{planCall("c1", testPlan)}}, llmtest.Reply{Text: "not reached"})
	url := serveFor(t, te)
	out, _ := te.mustRun(ExitPlanReady, "run", "--server", url, "--permission-mode", "plan", "--model", "scripted/m", "plan it")
	if out != testPlan+"\n" {
		t.Errorf("stdout %q, want the plan", out)
	}
}

// SPEC PERM-7: rein run on a terminal shows the plan and reads the answer:
// y approves into default, a into accept-edits, anything else sends it
// back with the next line as the feedback.
func TestLinePlanApproval_PERM7(t *testing.T) {
	in, _ := json.Marshal(map[string]string{"plan": testPlan})
	p := permission.Prompt{Request: permission.Request{Tool: "exit_plan_mode", Input: in, CallID: "c1"}}
	for _, tc := range []struct {
		typed string
		want  permission.Verdict
	}{
		{"y\n", permission.Verdict{Answer: permission.AnswerOnce}},
		{"a\n", permission.Verdict{Answer: permission.AnswerAlways}},
		{"n\nalso update the docs\n", permission.Verdict{Answer: permission.AnswerDeny, Message: "also update the docs"}},
		{"\n\n", permission.Verdict{Answer: permission.AnswerDeny, Message: ""}},
	} {
		var out strings.Builder
		v, err := newLineApprover(strings.NewReader(tc.typed), &out).Approve(context.Background(), p)
		if err != nil || v.Answer != tc.want.Answer || v.Message != tc.want.Message {
			t.Errorf("%q: %+v, %v; want %+v", tc.typed, v, err, tc.want)
		}
		if !strings.Contains(out.String(), "1. Change src/a.go to return 2.") || !strings.Contains(out.String(), "[a]ccept edits") {
			t.Errorf("%q: the terminal showed %q", tc.typed, out.String())
		}
	}
}
