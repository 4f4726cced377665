package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/permission"
)

// TOOL-8, CLI-6: /jobs lists the session's background jobs; /jobs kill ID
// stops one, and the model is told at its next turn.
func TestJobsCommand_TOOL8(t *testing.T) {
	te := newTestEnv(t)
	model := te.script("m",
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "bash", `{"command":"echo up; sleep 1000","run_in_background":true}`)}},
		llmtest.Reply{Text: "started"},
		llmtest.Reply{Text: "ok"},
	)
	allow := permission.ApproverFunc(func(ctx context.Context, p permission.Prompt) (permission.Verdict, error) {
		return permission.Verdict{Answer: permission.AnswerOnce}, nil
	})
	drive(t, te, func(ctx context.Context, b tui.Backend, opts tui.Options) {
		if out, err := b.Command(ctx, "jobs", ""); err != nil || !strings.Contains(out, "No background jobs") {
			t.Errorf("/jobs before a session: %q %v", out, err)
		}
		submit(t, ctx, b, "start a server", allow)
		out, err := b.Command(ctx, "jobs", "")
		if err != nil || !strings.Contains(out, "- 1  running for") || !strings.Contains(out, "echo up; sleep 1000") {
			t.Errorf("/jobs: %q %v", out, err)
		}
		for _, bad := range []string{"kill", "stop 1", "kill 1 2"} {
			if _, err := b.Command(ctx, "jobs", bad); err == nil || !strings.Contains(err.Error(), "/jobs kill 2") {
				t.Errorf("/jobs %s: %v", bad, err)
			}
		}
		if _, err := b.Command(ctx, "jobs", "kill 7"); err == nil || !strings.Contains(err.Error(), `no job "7"`) {
			t.Errorf("/jobs kill 7: %v", err)
		}
		if out, err := b.Command(ctx, "jobs", "kill 1"); err != nil || !strings.Contains(out, "Stopped job 1") {
			t.Errorf("/jobs kill 1: %q %v", out, err)
		}
		if out, _ := b.Command(ctx, "jobs", ""); !strings.Contains(out, "killed") {
			t.Errorf("/jobs after kill: %q", out)
		}
		submit(t, ctx, b, "what now?", nil)
	}, "--model", "scripted/m")
	reqs := model.Requests()
	last := reqs[len(reqs)-1].Messages
	if text := (llm.Message{Content: last[len(last)-1].Content}).TextOf(); !strings.Contains(text, "Background job 1 (`echo up; sleep 1000`) was stopped by the user") {
		t.Errorf("the model was not told: %q", text)
	}
}
