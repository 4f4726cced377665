package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/gatewaytest"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

const chatPlan = "# Plan\n\n1. Write out.txt.\n2. Check it."

// planModel plays a plan-mode conversation: it tries a command (denied in
// plan mode), presents the plan, and once approved writes out.txt.
func planModel() func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	var n atomic.Int64
	return func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		id := fmt.Sprintf("call_%d", n.Add(1))
		last := req.Messages[len(req.Messages)-1]
		out := ""
		for _, r := range last.ToolResults() {
			for _, b := range r.Content {
				if t, ok := b.(*llm.Text); ok {
					out += t.Text
				}
			}
		}
		plan, _ := json.Marshal(map[string]string{"plan": chatPlan})
		var r llmtest.Reply
		switch {
		case out == "":
			r = llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call(id, "bash", `{"command":"touch pwned"}`)}}
		case strings.Contains(out, "plan mode: touch"):
			r = llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call(id, "exit_plan_mode", string(plan))}}
		case strings.Contains(out, "approved the plan") && strings.Contains(out, "accept-edits"):
			r = llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call(id, "write_file", `{"path":"out.txt","content":"planned"}`)}}
		case strings.Contains(out, "keep planning"):
			r = llmtest.Reply{Text: "What should I change?"}
		default:
			r = llmtest.Reply{Text: "done: " + clip(out, 60)}
		}
		return llmtest.NewScripted(r).Stream(ctx, req)
	}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// SPEC PERM-7, GW-2: /plan TEXT runs TEXT in plan mode from a chat: the
// model's command is refused, the plan arrives with its three buttons,
// and "Approve, accept edits" lets the edit that follows run. /plan alone
// says how to use it; "Keep planning" sends the plan back.
func TestPlanCommand_PERM7(t *testing.T) {
	e := gatewaytest.Start(t, hook(0), gatewaytest.Options{Model: planModel()})
	e.P.Send(t, gatewaytest.Chat, gatewaytest.Owner, "/plan")
	e.WaitText(t, gatewaytest.Chat, "Usage: /plan")

	e.P.Send(t, gatewaytest.Chat, gatewaytest.Owner, "/plan write out.txt")
	q := e.WaitText(t, gatewaytest.Chat, "📋 Plan ready for your approval")
	if !strings.Contains(q.Text, "1. Write out.txt.") {
		t.Errorf("the question does not show the plan: %q", q.Text)
	}
	var labels []string
	for _, b := range q.Buttons {
		labels = append(labels, b.Label)
	}
	if strings.Join(labels, "|") != "Approve (confirm edits)|Approve, accept edits|Keep planning" {
		t.Errorf("buttons %v", labels)
	}
	if _, err := os.Stat(filepath.Join(e.Dir, "out.txt")); err == nil {
		t.Fatal("out.txt written before the plan was approved")
	}
	e.P.Press(t, gateway.MessageRef{ChatID: gatewaytest.Chat, ID: q.ID}, gatewaytest.Owner, q.Buttons[1].Data)
	e.WaitText(t, gatewaytest.Chat, "✅ Plan approved (edits run)")
	e.WaitText(t, gatewaytest.Chat, "done: ")
	if b, err := os.ReadFile(filepath.Join(e.Dir, "out.txt")); err != nil || string(b) != "planned" {
		t.Errorf("out.txt after the approval: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(e.Dir, "pwned")); err == nil {
		t.Error("touch ran in plan mode")
	}

	// Sent back: the model is told to wait for the user's next message.
	e.P.Send(t, gatewaytest.Chat2, gatewaytest.Owner, "/plan write out.txt again")
	q = e.WaitText(t, gatewaytest.Chat2, "📋 Plan ready for your approval")
	e.P.Press(t, gateway.MessageRef{ChatID: gatewaytest.Chat2, ID: q.ID}, gatewaytest.Owner, q.Buttons[2].Data)
	e.WaitText(t, gatewaytest.Chat2, "↩️ Sent back")
	e.WaitText(t, gatewaytest.Chat2, "What should I change?")
}
