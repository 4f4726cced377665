package jsonevents

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tokens"
)

// TestEstimateUsagePROV2: a reply whose vendor reported no usage is
// estimated from what was sent and what came back, and marked so.
func TestEstimateUsagePROV2(t *testing.T) {
	prose := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40)
	req := &llm.Request{
		System: prose,
		Tools:  []llm.ToolSpec{{Name: "read_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		Messages: []llm.Message{
			llm.UserText(prose),
			{Role: llm.RoleAssistant, Content: []llm.Block{&llm.ToolUse{ID: "c1", Name: "read_file", Input: json.RawMessage(`{"path":"a"}`)}}},
			{Role: llm.RoleUser, Content: []llm.Block{&llm.ToolResult{ToolUseID: "c1", Content: []llm.Block{&llm.Text{Text: prose}}}}},
		},
	}
	msg := &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.Thinking{Text: prose}, &llm.Text{Text: prose}}}
	u := EstimateUsage(req, msg)
	p := int64(tokens.Estimate(prose))
	if !u.Estimated {
		t.Error("not marked estimated")
	}
	if u.InputTokens < 3*p || u.InputTokens > 3*p+100 {
		t.Errorf("input %d, want about %d (three copies of the prose and framing)", u.InputTokens, 3*p)
	}
	if u.OutputTokens < 2*p || u.OutputTokens > 2*p+20 || u.ReasoningTokens != p {
		t.Errorf("output %d (reasoning %d), want about %d (%d)", u.OutputTokens, u.ReasoningTokens, 2*p, p)
	}
	if got := EstimateUsage(nil, nil); got != (llm.Usage{Estimated: true}) {
		t.Errorf("nothing sent or received: %+v", got)
	}
}
