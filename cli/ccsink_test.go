package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// COMPAT-1: the sink's own arithmetic, on events built by hand:
// duration_api_ms sums the waits for the model (from the run's start or
// the last tool results to each reply), modelUsage adds the calls' costs,
// and retries and compactions are system lines of Claude Code's shapes.
func TestCCSinkEvents_COMPAT1(t *testing.T) {
	at := func(s int) time.Time { return fixedNow.Add(time.Duration(s) * time.Second) }
	reply := func(text string, calls ...llm.ToolUse) *llm.Message {
		m := &llm.Message{Role: llm.RoleAssistant, Model: "m", Content: []llm.Block{&llm.Text{Text: text}}}
		for i := range calls {
			m.Content = append(m.Content, &calls[i])
		}
		return m
	}
	events := []agent.Event{
		{Type: agent.EventRunStart, Time: at(0), RunStart: &agent.RunStart{Model: "m"}},
		{Type: agent.EventRetry, Time: at(1), Retry: &agent.RetryEvent{Attempt: 1, DelayMS: 500, Kind: "overloaded", Status: 529, Message: "overloaded"}},
		{Type: agent.EventUsage, Time: at(2), Usage: &agent.UsageEvent{Turn: llm.Usage{InputTokens: 10, OutputTokens: 2, CacheReadTokens: 5}, CostUSD: 0.5}},
		{Type: agent.EventMessage, Time: at(2), Message: reply("a", llmtest.Call("c1", "bash", `{"command":"x"}`))},
		{Type: agent.EventMessage, Time: at(7), Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{
			&llm.ToolResult{ToolUseID: "c1", IsError: true, Content: []llm.Block{&llm.Text{Text: "no"}, &llm.Image{MediaType: "image/png", Data: []byte{1}}}}}}},
		{Type: agent.EventCompaction, Time: at(8), Compaction: &agent.CompactionEvent{TokensBefore: 9000, TokensAfter: 100, Trigger: agent.TriggerBudget}},
		{Type: agent.EventUsage, Time: at(10), Usage: &agent.UsageEvent{Turn: llm.Usage{InputTokens: 20, OutputTokens: 3}, CostUSD: 0.75}},
		{Type: agent.EventMessage, Time: at(10), Message: reply("done")},
		{Type: agent.EventDone, Time: at(10), Done: &agent.DoneEvent{Reason: agent.ReasonCompleted, Text: "done", Turns: 2,
			Usage: llm.Usage{InputTokens: 30, OutputTokens: 5, CacheReadTokens: 5}, CostUSD: 0.75, DurationMS: 10_000}},
	}
	var buf strings.Builder
	s := newCCSink(&buf, "stream-json", false, func() ccInitInfo { return ccInitInfo{model: "m", contextWindow: 1000, maxOutput: 10} })
	for _, ev := range events {
		ev.SessionID = "s1"
		if err := s.event(ev); err != nil {
			t.Fatal(err)
		}
	}
	by := checkCCLines(t, buf.String())
	r := checkResult(t, by["result"][0])
	if *r.DurationAPIMS != 5000 || *r.DurationMS != 10_000 {
		t.Errorf("duration_api_ms %d (want 2 s + 3 s), duration_ms %d", *r.DurationAPIMS, *r.DurationMS)
	}
	if mu := r.ModelUsage["m"]; mu.CostUSD != 0.75 || mu.InputTokens != 30 || mu.CacheReadInputTokens != 5 || mu.ContextWindow != 1000 {
		t.Errorf("modelUsage %+v", mu)
	}
	var retry, compact struct {
		Type, Subtype, UUID string
		SessionID           string `json:"session_id"`
		Attempt             int
		MaxRetries          int   `json:"max_retries"`
		RetryDelayMS        int64 `json:"retry_delay_ms"`
		ErrorStatus         *int  `json:"error_status"`
		Error               string
		CompactMetadata     *struct {
			Trigger   string `json:"trigger"`
			PreTokens int    `json:"pre_tokens"`
		} `json:"compact_metadata"`
	}
	if len(by["system"]) != 3 {
		t.Fatalf("system lines: %q", by["system"])
	}
	strictDecode(t, by["system"][1], &retry)
	strictDecode(t, by["system"][2], &compact)
	if retry.Subtype != "api_retry" || retry.MaxRetries != 9 || retry.RetryDelayMS != 500 || retry.ErrorStatus == nil || *retry.ErrorStatus != 529 || retry.Error != "overloaded" {
		t.Errorf("api_retry: %s", by["system"][1])
	}
	if compact.Subtype != "compact_boundary" || compact.CompactMetadata == nil || compact.CompactMetadata.Trigger != "auto" || compact.CompactMetadata.PreTokens != 9000 {
		t.Errorf("compact_boundary: %s", by["system"][2])
	}
	var u wantUser
	strictDecode(t, by["user"][0], &u)
	if b := u.Message.Content[0]; !*b.IsError || !strings.HasPrefix(string(b.Content), `[{"type":"text","text":"no"},{"type":"image","source":{"type":"base64","media_type":"image/png"`) {
		t.Errorf("a result with an image: %s", by["user"][0])
	}
}

// BenchmarkCCSinkTurn writes one tool round in stream-json with partial
// messages: the cost per model turn of Claude Code's shapes.
func BenchmarkCCSinkTurn(b *testing.B) {
	call := llmtest.Call("c1", "bash", `{"command":"go test ./..."}`)
	events := []agent.Event{
		{Type: agent.EventRunStart, RunStart: &agent.RunStart{Model: "m"}},
		{Type: agent.EventTextDelta, Text: "Let me run the tests."},
		{Type: agent.EventUsage, Usage: &agent.UsageEvent{Turn: llm.Usage{InputTokens: 1000, OutputTokens: 20}, CostUSD: 0.01}},
		{Type: agent.EventMessage, Message: &llm.Message{Role: llm.RoleAssistant, Model: "m", Content: []llm.Block{&llm.Text{Text: "Let me run the tests."}, &call}}},
		{Type: agent.EventMessage, Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.ToolResult{ToolUseID: "c1", Content: []llm.Block{&llm.Text{Text: "ok  \tpkg\t0.1s\n"}}}}}},
		{Type: agent.EventDone, Done: &agent.DoneEvent{Reason: agent.ReasonCompleted, Text: "ok", Turns: 1}},
	}
	var buf strings.Builder
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		s := newCCSink(&buf, "stream-json", true, func() ccInitInfo { return ccInitInfo{model: "m", tools: []string{"bash"}} })
		for _, ev := range events {
			ev.SessionID = "s1"
			if err := s.event(ev); err != nil {
				b.Fatal(err)
			}
		}
	}
}
