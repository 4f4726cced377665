package compact

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/tokens"
)

// CTX-2: the budget is the window minus the reserved output, the system
// prompt and the tool definitions.
func TestBudget(t *testing.T) {
	sys := "You are rein. " + words(200)
	tools := []llm.ToolSpec{{Name: "read_file", Description: "Reads a file.", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	sysTokens := tokens.Estimate(sys)
	toolTokens := specOverhead + tokens.Estimate("read_file") + tokens.Estimate("Reads a file.") + tokens.Estimate(`{"type":"object"}`)
	tests := []struct {
		name      string
		cfg       Config
		maxTokens int
		reserve   int
	}{
		{"default window, no output limit", Config{}, 0, DefaultContextWindow / 5},
		{"request max tokens", Config{ContextWindow: 100_000}, 8_000, 8_000},
		{"model max output capped at 20%", Config{ContextWindow: 100_000, MaxOutput: 64_000}, 8_000, 20_000},
		{"model max output", Config{ContextWindow: 100_000, MaxOutput: 4_000}, 8_000, 4_000},
		{"explicit reserve", Config{ContextWindow: 100_000, ReserveOutput: 1_234}, 8_000, 1_234},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(tt.cfg)
			msgs := []llm.Message{llm.UserText("hello")}
			got := c.Measure(&llm.Request{System: sys, Tools: tools, Messages: msgs, MaxTokens: tt.maxTokens})
			window := c.cfg.ContextWindow
			want := Budget{Window: window, Reserve: tt.reserve, System: sysTokens, Tools: toolTokens,
				Budget: window - tt.reserve - sysTokens - toolTokens, Messages: messageOverhead + blockOverhead + tokens.Estimate("hello")}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("budget (-want +got):\n%s", diff)
			}
		})
	}
}

// CTX-1: every kind of block is counted; images at a fixed cost.
func TestEstimateBlocks(t *testing.T) {
	input := `{"path":"main.go","offset":10}`
	tests := []struct {
		name  string
		block llm.Block
		want  int
	}{
		{"text", &llm.Text{Text: "hello world"}, blockOverhead + tokens.Estimate("hello world")},
		{"image", &llm.Image{MediaType: "image/png", Data: []byte("png")}, DefaultImageTokens},
		{"thinking", &llm.Thinking{Text: "let me see", Signature: "sig"}, blockOverhead + tokens.Estimate("let me see")},
		{"redacted thinking", &llm.Thinking{Redacted: true, Signature: "0123456789abcdef"}, blockOverhead + 4},
		{"tool use", &llm.ToolUse{ID: "c1", Name: "read_file", Input: json.RawMessage(input)},
			toolOverhead + tokens.Estimate("c1") + tokens.Estimate("read_file") + tokens.Estimate(input)},
		{"tool result with image", &llm.ToolResult{ToolUseID: "c1", Content: []llm.Block{&llm.Text{Text: "out"}, &llm.Image{URL: "u"}}},
			toolOverhead + tokens.Estimate("c1") + blockOverhead + tokens.Estimate("out") + DefaultImageTokens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := measureAll([]llm.Message{{Role: llm.RoleUser, Content: []llm.Block{tt.block}}}, 1).Messages
			if want := messageOverhead + tt.want; got != want {
				t.Errorf("estimate = %d, want %d", got, want)
			}
		})
	}
}

// The cache stays correct when the history is replaced: another history of
// the same length, a rewritten message, a shorter history.
func TestEstimateCacheReplacedHistory(t *testing.T) {
	a := (&hist{}).user("first question").tool("bash", `{"command":"ls"}`, lines(50, 40), false).asst("done").msgs
	b := (&hist{}).user(words(300)).tool("read_file", `{"path":"x"}`, lines(5, 10), false).asst(words(100)).msgs
	rewritten := append([]llm.Message(nil), a...)
	rewritten[2] = llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.ToolResult{ToolUseID: "call_1", Content: []llm.Block{&llm.Text{Text: "short"}}}}}
	c := New(Config{ContextWindow: 1 << 30})
	for _, msgs := range [][]llm.Message{a, b, a, rewritten, a[:2], b, append(b[:3:3], a...)} {
		got := c.Measure(&llm.Request{Messages: msgs}).Messages
		want := New(Config{ContextWindow: 1 << 30}).Measure(&llm.Request{Messages: msgs}).Messages
		if got != want {
			t.Fatalf("cached estimate %d, fresh estimate %d", got, want)
		}
	}
}

// CTX-1: a provider-reported prompt size replaces the estimate for the
// prefix it covered; messages added since are estimated; a replaced history
// falls back to estimates.
func TestObserveUsage(t *testing.T) {
	msgs := (&hist{}).user("question").tool("bash", `{"command":"ls"}`, "a\nb", false).msgs
	c := New(Config{ContextWindow: 100_000, ReserveOutput: 1_000})
	req := &llm.Request{Messages: msgs}
	estimated := c.Measure(req)
	c.ObserveUsage(msgs[:2], llm.Usage{InputTokens: 100, CacheReadTokens: 5_000, CacheWriteTokens: 900})
	got := c.Measure(req)
	last := measureAll(msgs[2:], 1).Messages
	if !got.Reported || got.Messages != 6_000+last {
		t.Errorf("with usage: %+v, want 6000 + %d reported", got, last)
	}
	other := (&hist{}).user("question").tool("bash", `{"command":"ls"}`, "a\nb", false).msgs
	if got := c.Measure(&llm.Request{Messages: other}); got.Reported || got.Messages != estimated.Messages {
		t.Errorf("another history: %+v, want the estimate %d", got, estimated.Messages)
	}
	c.ObserveUsage(msgs, llm.Usage{}) // no count: ignored
	if got := c.Measure(req); !got.Reported {
		t.Errorf("a usage without counts replaced the observation: %+v", got)
	}
}

// Observe wires reported usage: a history whose estimate is small but whose
// reported size is over the watermark is compacted.
func TestObserveTriggersCompaction(t *testing.T) {
	h := &hist{}
	h.user("fix the bug")
	for range 6 {
		h.tool("bash", `{"command":"go test"}`, "ok", false)
	}
	summaries := llmtest.NewScripted(llmtest.Reply{Text: "SUMMARY"})
	c := New(Config{ContextWindow: 100_000, ReserveOutput: 1_000, KeepRecent: 2, Provider: summaries})
	main := llmtest.NewScripted(llmtest.Reply{Text: "ok", Usage: llm.Usage{InputTokens: 80_000}})
	req := &llm.Request{Messages: h.msgs}
	if out, rep, err := c.Fit(context.Background(), req, nil); err != nil || rep != nil || !sameSlice(out, h.msgs) {
		t.Fatalf("before usage: report %+v, err %v", rep, err)
	}
	if _, err := llm.Complete(context.Background(), c.Observe(main), req); err != nil {
		t.Fatal(err)
	}
	out, rep, err := c.Fit(context.Background(), req, nil)
	if err != nil || rep == nil {
		t.Fatalf("after usage: report %+v, err %v", rep, err)
	}
	if rep.TokensBefore < 80_000 || !IsSummary(out[0]) {
		t.Errorf("report %+v; first message %+v", rep, out[0])
	}
	checkCompacted(t, h.msgs, out)
}

// CTX-1: usage an adapter estimated (the vendor sent none) does not
// replace the estimate as a provider count would.
func TestObserveUsageIgnoresEstimates(t *testing.T) {
	msgs := (&hist{}).user("question").msgs
	c := New(Config{ContextWindow: 100_000, ReserveOutput: 1_000})
	req := &llm.Request{Messages: msgs}
	c.ObserveUsage(msgs, llm.Usage{InputTokens: 50_000, Estimated: true})
	if got := c.Measure(req); got.Reported {
		t.Errorf("an estimated usage was taken as reported: %+v", got)
	}
}
