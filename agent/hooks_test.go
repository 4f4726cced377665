package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// recorder registers a Go hook on every event and records what fired.
type recorder struct {
	mu    sync.Mutex
	fired []hook.Event
	ins   map[hook.Event][]hook.Input
}

func (rec *recorder) registry(t *testing.T, answers map[hook.Event]hook.Outcome) *hook.Registry {
	t.Helper()
	rec.ins = map[hook.Event][]hook.Input{}
	reg := hook.NewRegistry(hook.Options{})
	for _, ev := range hook.Events {
		out := answers[ev]
		err := reg.Register(hook.Registration{Event: ev, Name: "rec-" + string(ev), Matcher: "*",
			Hook: hook.Func(func(ctx context.Context, in hook.Input) (hook.Outcome, error) {
				rec.mu.Lock()
				defer rec.mu.Unlock()
				rec.fired = append(rec.fired, ev)
				rec.ins[ev] = append(rec.ins[ev], in)
				return out, nil
			})})
		if err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

func (rec *recorder) has(ev hook.Event) bool {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.ins[ev]) > 0
}

// HOOK-1: the loop fires its events.
func TestHookEventsFired(t *testing.T) {
	rec := &recorder{}
	reg := rec.registry(t, nil)
	p := llmtest.NewScripted(
		llmtest.Reply{ToolCalls: []llm.ToolUse{call("c1", "read", sleepIn{ID: "a"}), call("c2", "fail", struct{}{})}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{call("c3", "write", sleepIn{ID: "w"})}},
		llmtest.Reply{Text: "done"},
	)
	perms := &fakePerms{decision: Ask, answer: Answer{Allow: true, By: "user"}}
	res := drive(t, ctxb, newAgent(p, testTools(t, &probe{}), func(c *Config) { c.Hooks = reg; c.Permissions = perms }),
		Input{Prompt: prompt("go"), SessionID: "s1", WorkDir: "/w"})
	if res.done.Reason != ReasonCompleted {
		t.Fatalf("done = %+v", res.done)
	}
	for _, ev := range []hook.Event{hook.SessionStart, hook.UserPromptSubmit, hook.PreModelRequest, hook.PostModelResponse,
		hook.PreToolUse, hook.PostToolUse, hook.PostToolError, hook.PermissionRequest, hook.Notification, hook.Stop} {
		if !rec.has(ev) {
			t.Errorf("%s never fired", ev)
		}
	}
	in := rec.ins[hook.PreToolUse][0]
	if in.SessionID != "s1" || in.CWD != "/w" || in.ToolName == "" || len(in.ToolInput) == 0 {
		t.Errorf("pre_tool_use input = %+v", in)
	}
	newAgent(p, nil, func(c *Config) { c.Hooks = reg }).EndSession(ctxb, "s1", "/w", "exit")
	if !rec.has(hook.SessionEnd) {
		t.Error("session_end never fired")
	}
}

// HOOK-2: pre_tool_use blocks with a reason shown to the model, rewrites the
// input, or adds context.
func TestPreToolUseHook(t *testing.T) {
	tests := []struct {
		name string
		out  hook.Outcome
		want string // in the result the model gets
	}{
		{"block", hook.Outcome{Decision: hook.DecisionBlock, Reason: "no reading today"}, "blocked by a hook: no reading today"},
		{"rewrite", hook.Outcome{UpdatedInput: json.RawMessage(`{"id":"rewritten"}`)}, "read rewritten"},
		{"context", hook.Outcome{AdditionalContext: "remember the style guide"}, "remember the style guide"},
		{"invalid rewrite", hook.Outcome{UpdatedInput: json.RawMessage(`{"id":5}`)}, "invalid one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := hook.NewRegistry(hook.Options{})
			_ = reg.Register(hook.Registration{Event: hook.PreToolUse, Name: "h", Matcher: "read",
				Hook: hook.Func(func(ctx context.Context, in hook.Input) (hook.Outcome, error) { return tt.out, nil })})
			p := llmtest.NewScripted(llmtest.Reply{ToolCalls: []llm.ToolUse{call("c1", "read", sleepIn{ID: "orig"})}}, llmtest.Reply{Text: "ok"})
			res := drive(t, ctxb, newAgent(p, testTools(t, &probe{}), func(c *Config) { c.Hooks = reg }), Input{Prompt: prompt("go")})
			if got := resultsOf(res.msgs[2])["c1"]; !strings.Contains(got, tt.want) {
				t.Errorf("result = %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

// HOOK-2: user_prompt_submit can block or add context; a stop hook can keep
// the run going once.
func TestPromptAndStopHooks(t *testing.T) {
	rec := &recorder{}
	reg := rec.registry(t, map[hook.Event]hook.Outcome{hook.UserPromptSubmit: {Decision: hook.DecisionBlock, Reason: "secrets in prompt"}})
	res := drive(t, ctxb, newAgent(llmtest.NewScripted(), nil, func(c *Config) { c.Hooks = reg }), Input{Prompt: prompt("my key is x")})
	if res.done.Reason != ReasonPermissionDenied || !strings.Contains(res.done.Error, "secrets in prompt") {
		t.Errorf("blocked prompt: %+v", res.done)
	}

	rec = &recorder{}
	reg = rec.registry(t, map[hook.Event]hook.Outcome{
		hook.UserPromptSubmit: {AdditionalContext: "branch: main"},
		hook.Stop:             {ForceContinue: true, Reason: "run the tests first"},
	})
	// The hook forces the run on every time; the loop gives in after three.
	p := llmtest.NewScripted(llmtest.Reply{Text: "done"}, llmtest.Reply{Text: "tests pass"})
	p.Repeat = &llmtest.Reply{Text: "tests pass"}
	res = drive(t, ctxb, newAgent(p, nil, func(c *Config) { c.Hooks = reg }), Input{Prompt: prompt("fix it")})
	if res.done.Reason != ReasonCompleted || res.done.Text != "tests pass" {
		t.Fatalf("done = %+v", res.done)
	}
	reqs := p.Requests()
	if !strings.Contains(reqs[0].Messages[0].TextOf(), "branch: main") {
		t.Errorf("prompt context not added: %q", reqs[0].Messages[0].TextOf())
	}
	if len(reqs) != 4 {
		t.Errorf("%d model calls, want 4 (1 + 3 forced)", len(reqs))
	}
	if last := reqs[1].Messages[len(reqs[1].Messages)-1]; last.TextOf() != "run the tests first" {
		t.Errorf("stop hook reason not passed on: %q", last.TextOf())
	}
	if stops := rec.ins[hook.Stop]; len(stops) != 4 || stops[0].StopHookActive || !stops[1].StopHookActive {
		t.Errorf("stop_hook_active not set on the second stop: %+v", stops)
	}
}

// HOOK-2: pre_model_request may rewrite the request (system and messages)
// and add context; the history keeps what it had.
func TestPreModelRequestRewrite_HOOK2(t *testing.T) {
	tests := []struct {
		name       string
		out        hook.Outcome
		wantSystem string
		wantLast   string // the text of the request's last message
		wantN      int    // messages in the request
	}{
		{"replace system", hook.Outcome{UpdatedInput: json.RawMessage(`{"system":"be brief"}`)}, "be brief", "hi", 1},
		{"append system", hook.Outcome{UpdatedInput: json.RawMessage(`{"append_system":"no emojis"}`)}, "sys\n\nno emojis", "hi", 1},
		{"replace messages", hook.Outcome{UpdatedInput: json.RawMessage(`{"messages":[{"role":"user","content":[{"type":"text","text":"redacted"}]}]}`)}, "sys", "redacted", 1},
		{"append messages", hook.Outcome{UpdatedInput: json.RawMessage(`{"append_messages":[{"role":"assistant","content":[{"type":"text","text":"ok"}]},{"role":"user","content":[{"type":"text","text":"more"}]}]}`)}, "sys", "more", 3},
		{"context", hook.Outcome{AdditionalContext: "today is Friday"}, "sys", "hi<hook-context>\ntoday is Friday\n</hook-context>", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := hook.NewRegistry(hook.Options{})
			_ = reg.Register(hook.Registration{Event: hook.PreModelRequest, Name: "h",
				Hook: hook.Func(func(ctx context.Context, in hook.Input) (hook.Outcome, error) { return tt.out, nil })})
			p := llmtest.NewScripted(llmtest.Reply{Text: "ok"})
			res := drive(t, ctxb, newAgent(p, nil, func(c *Config) { c.Hooks = reg; c.System = "sys" }), Input{Prompt: prompt("hi")})
			if res.done.Reason != ReasonCompleted {
				t.Fatalf("done = %+v", res.done)
			}
			req := p.Requests()[0]
			if req.System != tt.wantSystem || len(req.Messages) != tt.wantN || req.Messages[len(req.Messages)-1].TextOf() != tt.wantLast {
				t.Errorf("request: system %q, %d messages, last %q", req.System, len(req.Messages), req.Messages[len(req.Messages)-1].TextOf())
			}
			if got := res.msgs[0].TextOf(); got != "hi" {
				t.Errorf("the history changed: %q", got)
			}
		})
	}
	// A rewrite that cannot be read blocks the call.
	reg := hook.NewRegistry(hook.Options{})
	_ = reg.Register(hook.Registration{Event: hook.PreModelRequest, Name: "h",
		Hook: hook.Func(func(ctx context.Context, in hook.Input) (hook.Outcome, error) {
			return hook.Outcome{UpdatedInput: json.RawMessage(`{"system":5}`)}, nil
		})})
	res := drive(t, ctxb, newAgent(llmtest.NewScripted(llmtest.Reply{Text: "ok"}), nil, func(c *Config) { c.Hooks = reg }), Input{Prompt: prompt("hi")})
	if res.done.Reason != ReasonError || !strings.Contains(res.done.Error, "cannot be read") {
		t.Errorf("bad rewrite: %+v", res.done)
	}
}

// HOOK-2: a permission_request hook may answer allow (with a rewritten
// input) or deny, and may add context; the decision says it was a hook.
func TestPermissionRequestHook_HOOK2(t *testing.T) {
	tests := []struct {
		name    string
		out     hook.Outcome
		asked   bool
		want    string // in the result the model gets
		outcome ToolOutcome
	}{
		{"allow", hook.Outcome{Permission: "allow"}, false, "wrote w", "ok"},
		{"allow rewritten", hook.Outcome{Permission: "allow", UpdatedInput: json.RawMessage(`{"id":"safer"}`)}, false, "wrote safer", "ok"},
		{"deny", hook.Outcome{Decision: hook.DecisionBlock, Reason: "not on Fridays"}, false, "permission denied by a hook: not on Fridays", "denied"},
		{"context only", hook.Outcome{AdditionalContext: "the user is away"}, true, "wrote w<hook-context>\nthe user is away\n</hook-context>", "ok"},
		{"deny with context", hook.Outcome{Decision: hook.DecisionBlock, Reason: "no", AdditionalContext: "ask again tomorrow"}, false, "ask again tomorrow", "denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := hook.NewRegistry(hook.Options{})
			_ = reg.Register(hook.Registration{Event: hook.PermissionRequest, Name: "h", Matcher: "write",
				Hook: hook.Func(func(ctx context.Context, in hook.Input) (hook.Outcome, error) { return tt.out, nil })})
			perms := &fakePerms{decision: Ask, answer: Answer{Allow: true, By: "user"}}
			p := llmtest.NewScripted(llmtest.Reply{ToolCalls: []llm.ToolUse{call("c1", "write", sleepIn{ID: "w"})}}, llmtest.Reply{Text: "ok"})
			res := drive(t, ctxb, newAgent(p, testTools(t, &probe{}), func(c *Config) { c.Hooks = reg; c.Permissions = perms }), Input{Prompt: prompt("go")})
			if got := resultsOf(res.msgs[2])["c1"]; !strings.Contains(got, tt.want) {
				t.Errorf("result = %q, want it to contain %q", got, tt.want)
			}
			if got := res.count(EventPermissionRequest) == 1; got != tt.asked {
				t.Errorf("asked the user: %v, want %v", got, tt.asked)
			}
			if len(perms.audits) != 1 || perms.audits[0].Outcome != tt.outcome {
				t.Fatalf("audits = %+v", perms.audits)
			}
			if by := perms.audits[0].By; (by == "hook") == tt.asked {
				t.Errorf("decided by %q", by)
			}
		})
	}
}
