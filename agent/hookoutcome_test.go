package agent

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// COMPAT-1, HOOK-2: Claude Code's outputs as the loop honours them —
// SessionStart's additionalContext and the front end's (Input.HookContext,
// a resumed session's) reach the prompt; Stop's additionalContext
// continues the run as feedback; continue: false on post_tool_use ends the
// run after the call; on session_start it ends it before the model is
// called.
func TestClaudeOutcomes_COMPAT1(t *testing.T) {
	t.Run("context to the prompt", func(t *testing.T) {
		rec := &recorder{}
		reg := rec.registry(t, map[hook.Event]hook.Outcome{hook.SessionStart: {AdditionalContext: "branch: main"}})
		p := llmtest.NewScripted(llmtest.Reply{Text: "ok"})
		res := drive(t, ctxb, newAgent(p, testTools(t, &probe{}), func(c *Config) { c.Hooks = reg }),
			Input{Prompt: prompt("go"), HookContext: "resumed: 3 open todos"})
		got := p.Requests()[0].Messages[0].TextOf()
		if !strings.Contains(got, "branch: main") || !strings.Contains(got, "resumed: 3 open todos") {
			t.Errorf("prompt %q lacks the hooks' context", got)
		}
		if res.done.Reason != ReasonCompleted {
			t.Errorf("done %+v", res.done)
		}
	})
	t.Run("stop context continues, bounded", func(t *testing.T) {
		rec := &recorder{}
		reg := rec.registry(t, map[hook.Event]hook.Outcome{hook.Stop: {AdditionalContext: "tests not run"}})
		p := llmtest.NewScripted(llmtest.Reply{Text: "done"}, llmtest.Reply{Text: "ran them"}, llmtest.Reply{Text: "really"},
			llmtest.Reply{Text: "x"}, llmtest.Reply{Text: "y"})
		res := drive(t, ctxb, newAgent(p, testTools(t, &probe{}), func(c *Config) { c.Hooks = reg }), Input{Prompt: prompt("go")})
		reqs := p.Requests()
		if len(reqs) != 1+maxStopForces {
			t.Fatalf("%d model calls, want %d (the stop hook's context continues, bounded)", len(reqs), 1+maxStopForces)
		}
		if last := reqs[1].Messages[len(reqs[1].Messages)-1].TextOf(); !strings.Contains(last, "tests not run") {
			t.Errorf("continued with %q", last)
		}
		ins := rec.ins[hook.Stop]
		if len(ins) < 2 || ins[0].StopHookActive || !ins[1].StopHookActive || ins[0].LastAssistantMessage != "done" {
			t.Errorf("stop inputs %+v", ins)
		}
		if res.done.Reason != ReasonCompleted {
			t.Errorf("done %+v", res.done)
		}
	})
	t.Run("post_tool_use continue false ends the run", func(t *testing.T) {
		rec := &recorder{}
		reg := rec.registry(t, map[hook.Event]hook.Outcome{hook.PostToolUse: {Stop: true, StopReason: "budget reached"}})
		p := llmtest.NewScripted(llmtest.Reply{ToolCalls: []llm.ToolUse{call("c1", "read", sleepIn{ID: "r"})}}, llmtest.Reply{Text: "never"})
		res := drive(t, ctxb, newAgent(p, testTools(t, &probe{}), func(c *Config) { c.Hooks = reg }), Input{Prompt: prompt("go")})
		if len(p.Requests()) != 1 || res.done.Reason != ReasonPermissionDenied || !strings.Contains(res.done.Error, "budget reached") {
			t.Errorf("%d model calls, done %+v", len(p.Requests()), res.done)
		}
	})
	t.Run("session_start continue false ends the run", func(t *testing.T) {
		rec := &recorder{}
		reg := rec.registry(t, map[hook.Event]hook.Outcome{hook.SessionStart: {Stop: true, StopReason: "outside office hours"}})
		p := llmtest.NewScripted(llmtest.Reply{Text: "never"})
		res := drive(t, ctxb, newAgent(p, testTools(t, &probe{}), func(c *Config) { c.Hooks = reg }), Input{Prompt: prompt("go")})
		if len(p.Requests()) != 0 || !strings.Contains(res.done.Error, "outside office hours") {
			t.Errorf("%d model calls, done %+v", len(p.Requests()), res.done)
		}
	})
}
