package compact

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

var ctxb = context.Background()

const reserve = 1_000

// smallPairs appends n tool calls with short outputs.
func smallPairs(h *hist, n int) *hist {
	for i := range n {
		h.tool("bash", `{"command":"go test ./pkg`+string(rune('a'+i%26))+`"}`, "ok\nPASS", false)
	}
	return h
}

// bigOld is a conversation whose old tool outputs are large (n lines) and
// whose recent tail is small.
func bigOld(n int) []llm.Message {
	h := (&hist{}).user("fix the build")
	for range 3 {
		h.tool("read_file", `{"path":"main.go"}`, lines(n, 60), false)
	}
	return smallPairs(h, 3).msgs
}

// smallMany is a long conversation of short exchanges.
func smallMany() []llm.Message {
	return smallPairs((&hist{}).user("run every test package"), 20).msgs
}

// bigTail is a conversation whose last six messages are large except the
// last two.
func bigTail(n int) []llm.Message {
	h := smallPairs((&hist{}).user("write the report"), 4)
	h.asst(words(n)).user("more").asst(words(n)).user("and more").asst("ok").user("thanks")
	return h.msgs
}

// layerCase is one case of TestLayers.
type layerCase struct {
	name       string
	msgs       []llm.Message
	frac       float64 // how full the budget is before
	cfg        Config
	replies    []llmtest.Reply
	wantLayers []string
	wantCalls  int
	wantLen    int // 0: not checked
	check      func(t *testing.T, out []llm.Message)
}

// layerCases set the thresholds and the history so that each layer runs
// alone, or the layers run in order as re-estimation requires (CTX-3).
func layerCases() []layerCase {
	return []layerCase{
		// Snip reaches its low watermark here (the old outputs are all but
		// the whole history), so it runs alone.
		{name: "snip alone: re-estimated under the watermark, no model call", msgs: bigOld(200), frac: 0.55, cfg: Config{SnipTarget: 0.2},
			wantLayers: []string{LayerSnip}, wantLen: len(bigOld(200)),
			check: func(t *testing.T, out []llm.Message) {
				if s := resultText(out[2]); !strings.Contains(s, "cut by compaction") || !strings.HasPrefix(s, "line 0001") {
					t.Errorf("old output not snipped: %.80q", s)
				}
				if s := resultText(out[len(out)-1]); s != "ok\nPASS" {
					t.Errorf("recent output changed: %q", s)
				}
			}},
		// CTX-5 (issue 30 item 5): snipping would leave the history above
		// the low watermark (12%), and a summary leaves less: one summary
		// instead, keeping the recent tail (TestSnipGivesWaySummaryPrefix:
		// the summary request is the unsnipped conversation).
		{name: "snip gives way to a summary below its low watermark", msgs: bigOld(200), frac: 0.55,
			replies: []llmtest.Reply{{Text: "SUMMARY"}}, wantLayers: []string{LayerSummarize}, wantCalls: 1, wantLen: 1 + DefaultKeepRecent,
			check: func(t *testing.T, out []llm.Message) {
				if got := out[0].TextOf(); got != SummaryHeader+"\n\nSUMMARY" {
					t.Errorf("summary message = %q", got)
				}
				in := bigOld(200)
				for i, m := range out[1:] {
					if m.TextOf() != in[len(in)-DefaultKeepRecent+i].TextOf() {
						t.Errorf("tail message %d changed: %q", i, m.TextOf())
					}
				}
			}},
		{name: "summarize alone", msgs: smallMany(), frac: 0.65,
			replies: []llmtest.Reply{{Text: "SUMMARY"}}, wantLayers: []string{LayerSummarize}, wantCalls: 1, wantLen: 1 + DefaultKeepRecent,
			check: func(t *testing.T, out []llm.Message) {
				if got := out[0].TextOf(); got != SummaryHeader+"\n\nSUMMARY" {
					t.Errorf("summary message = %q", got)
				}
			}},
		{name: "snip then summarize", msgs: append(bigOld(70)[:7], smallMany()[1:]...), frac: 0.95,
			replies: []llmtest.Reply{{Text: "SUMMARY"}}, wantLayers: []string{LayerSnip, LayerSummarize}, wantCalls: 1, wantLen: 1 + DefaultKeepRecent},
		{name: "summary planned as collapse when the tail is too big", msgs: bigTail(3000), frac: 0.95,
			cfg:     Config{SummaryMaxTokens: 200},
			replies: []llmtest.Reply{{Text: "SUMMARY"}}, wantLayers: []string{LayerSummarize, LayerCollapse}, wantCalls: 1, wantLen: 1 + DefaultCollapseKeep},
		{name: "collapse alone", msgs: smallMany(), frac: 0.7, cfg: Config{Snip: 0.99, Summarise: 0.99, Collapse: 0.5},
			replies: []llmtest.Reply{{Text: "SUMMARY"}}, wantLayers: []string{LayerSummarize, LayerCollapse}, wantCalls: 1, wantLen: 1 + DefaultCollapseKeep},
		{name: "collapse after a summary longer than planned", msgs: bigTail(1000), frac: 0.65, cfg: Config{SummaryMaxTokens: 100},
			replies: []llmtest.Reply{{Text: "SUMMARY " + words(1500)}}, wantLayers: []string{LayerSummarize, LayerCollapse}, wantCalls: 1, wantLen: 3,
			check: func(t *testing.T, out []llm.Message) {
				if s := out[0].TextOf(); !strings.Contains(s, "SUMMARY") || !strings.Contains(s, laterHeader+"\n\nUser requests:\n- more\n- and more") {
					t.Errorf("collapsed summary lacks the model summary or the extract of dropped messages: %.200q…", s)
				}
			}},
		{name: "extractive when the summary call fails", msgs: smallMany(), frac: 0.65,
			replies: []llmtest.Reply{{Err: &llm.Error{Kind: llm.KindServer, Status: 500}}}, wantLayers: []string{LayerExtractive}, wantCalls: 1,
			check: func(t *testing.T, out []llm.Message) {
				if s := out[0].TextOf(); !strings.Contains(s, "Commands run (last 10 of") || !strings.Contains(s, "run every test package") {
					t.Errorf("extractive summary = %q", s)
				}
			}},
		{name: "extractive when the summary is empty", msgs: smallMany(), frac: 0.65,
			replies: []llmtest.Reply{{Text: "  ", ToolCalls: []llm.ToolUse{llmtest.Call("x", "bash", `{}`)}}}, wantLayers: []string{LayerExtractive}, wantCalls: 1},
		{name: "extractive without a provider", msgs: smallMany(), frac: 0.65, cfg: Config{Provider: nil},
			wantLayers: []string{LayerExtractive}, wantCalls: 0},
	}
}

func TestLayers(t *testing.T) {
	for _, tt := range layerCases() {
		t.Run(tt.name, func(t *testing.T) {
			p := llmtest.NewScripted(tt.replies...)
			cfg := tt.cfg
			cfg.ContextWindow, cfg.ReserveOutput = windowAt(tt.msgs, tt.frac, reserve), reserve
			if tt.replies != nil {
				cfg.Provider = p
			}
			c := New(cfg)
			out, rep, err := c.Fit(ctxb, &llm.Request{Model: "m", Messages: tt.msgs}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep == nil {
				t.Fatal("no compaction")
			}
			if diff := cmp.Diff(tt.wantLayers, rep.Layers); diff != "" {
				t.Errorf("layers (-want +got):\n%s", diff)
			}
			if got := len(p.Requests()); got != tt.wantCalls {
				t.Errorf("summary calls = %d, want %d", got, tt.wantCalls)
			}
			if tt.wantLen != 0 && len(out) != tt.wantLen {
				t.Errorf("compacted to %d messages, want %d", len(out), tt.wantLen)
			}
			after := c.Measure(&llm.Request{Messages: out})
			if rep.TokensAfter >= rep.TokensBefore || after.Messages > after.Budget || rep.Trigger != "budget" {
				t.Errorf("report %+v; after: %+v", rep, after)
			}
			if !sameSlice(rep.History, out) {
				t.Errorf("report history is not the returned history")
			}
			checkCompacted(t, tt.msgs, out)
			if tt.check != nil {
				tt.check(t, out)
			}
		})
	}
}

func resultText(m llm.Message) string {
	rs := m.ToolResults()
	if len(rs) == 0 {
		return ""
	}
	return llm.Message{Content: rs[0].Content}.TextOf()
}

// CTX-5: under the first threshold, Fit returns the very same slice and
// calls no model.
func TestFitUnderThreshold(t *testing.T) {
	msgs := bigOld(200)
	p := llmtest.NewScripted()
	c := New(Config{ContextWindow: windowAt(msgs, 0.49, reserve), ReserveOutput: reserve, Provider: p})
	for range 3 {
		out, rep, err := c.Fit(ctxb, &llm.Request{Messages: msgs}, nil)
		if err != nil || rep != nil || !sameSlice(out, msgs) {
			t.Fatalf("Fit = %d messages, %+v, %v; want the same slice", len(out), rep, err)
		}
	}
	// Between the snip and summarize thresholds with nothing to snip: still
	// untouched.
	small := smallMany()
	c = New(Config{ContextWindow: windowAt(small, 0.55, reserve), ReserveOutput: reserve, Provider: p})
	if out, rep, err := c.Fit(ctxb, &llm.Request{Messages: small}, nil); err != nil || rep != nil || !sameSlice(out, small) {
		t.Fatalf("Fit = %+v, %v; want the same slice", rep, err)
	}
	if n := len(p.Requests()); n != 0 {
		t.Errorf("%d model calls", n)
	}
}

// CTX-5: the summary request is the conversation itself — system prompt,
// tools and messages byte for byte, in order — plus one instruction; the
// model, thinking and cache key are the conversation's.
func TestSummaryRequestPrefix(t *testing.T) {
	msgs := append(bigOld(70)[:7], smallMany()[1:]...) // snip runs first
	req := &llm.Request{Model: "claude-x", System: "You are rein.", CacheKey: "sess-1", MaxTokens: 8192,
		Thinking: &llm.ThinkingConfig{BudgetTokens: 2048},
		Tools:    []llm.ToolSpec{{Name: "bash", Description: "Runs.", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		Messages: msgs}
	p := llmtest.NewScripted(llmtest.Reply{Text: "SUMMARY"})
	m := measureAll(msgs, reserve)
	c := New(Config{ContextWindow: int(float64(m.Messages)/0.95) + reserve + 40, ReserveOutput: reserve, Provider: p,
		Focus: func() agent.Focus { return agent.Focus{Goal: "green tests", FilesChanged: []string{"main.go"}} }})
	out, rep, err := c.Fit(ctxb, req, nil)
	if err != nil || rep == nil {
		t.Fatalf("Fit: %+v, %v", rep, err)
	}
	if diff := cmp.Diff([]string{LayerSnip, LayerSummarize}, rep.Layers); diff != "" {
		t.Fatalf("layers (-want +got):\n%s", diff)
	}
	sreq := p.Requests()[0]
	cut := len(msgs) - (len(out) - 1)
	js := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if js(sreq.System) != js(req.System) || js(sreq.Tools) != js(req.Tools) {
		t.Errorf("system or tools differ from the conversation's")
	}
	if len(sreq.Messages) != cut+1 || js(sreq.Messages[:cut]) != js(req.Messages[:cut]) {
		t.Fatalf("summary messages are not the conversation's first %d messages byte for byte", cut)
	}
	for i := range cut {
		if &sreq.Messages[i].Content[0] != &req.Messages[i].Content[0] {
			t.Fatalf("message %d was copied: the summary saw the snipped history, not what the model saw", i)
		}
	}
	last := sreq.Messages[cut]
	if last.Role != llm.RoleUser || !strings.HasPrefix(last.TextOf(), SummaryInstruction) || !strings.Contains(last.TextOf(), "green tests") {
		t.Errorf("instruction = %q", last.TextOf())
	}
	if sreq.Model != req.Model || sreq.CacheKey != req.CacheKey || sreq.Thinking != req.Thinking || sreq.MaxTokens != c.cfg.SummaryMaxTokens {
		t.Errorf("summary request settings: %+v", sreq)
	}
}

// When the conversation is too big for a summary request, the summary sees
// its tool outputs snipped, head and tail both.
func TestSummaryInputSnippedWhenTooBig(t *testing.T) {
	msgs := append(bigOld(200)[:7], smallMany()[1:]...)
	p := llmtest.NewScripted(llmtest.Reply{Text: "SUMMARY"})
	window := windowAt(msgs, 0.9, reserve)
	c := New(Config{ContextWindow: window, ReserveOutput: reserve, Provider: p, Snip: 0.99, SummaryMaxTokens: window / 2})
	if _, rep, err := c.Fit(ctxb, &llm.Request{Messages: msgs}, nil); err != nil || rep == nil {
		t.Fatalf("Fit: %+v, %v", rep, err)
	}
	if len(p.Requests()) != 1 {
		t.Fatalf("%d summary calls, want 1", len(p.Requests()))
	}
	sreq := p.Requests()[0]
	s := resultText(sreq.Messages[2])
	if !strings.HasPrefix(s, "line 0001") || !strings.Contains(s, "line 0200") || !strings.Contains(s, "cut by compaction") {
		t.Errorf("summary input:\n%s", s)
	}
}

// A single huge tool result right before the request triggers compaction.
func TestHugeToolResultTriggers(t *testing.T) {
	base := smallMany()
	tests := []struct {
		name  string
		share float64 // the result's share of the budget
	}{
		{"most of the budget", 0.7},
		{"more than the whole budget", 1.3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			window := windowAt(base, 0.2, reserve)
			c := New(Config{ContextWindow: window, ReserveOutput: reserve, Provider: llmtest.NewScripted(llmtest.Reply{Text: "SUMMARY"})})
			if _, rep, err := c.Fit(ctxb, &llm.Request{Messages: base}, nil); rep != nil || err != nil {
				t.Fatalf("before the result: %+v, %v", rep, err)
			}
			budget := window - reserve
			perLine := float64(measureAll([]llm.Message{llm.UserText(lines(100, 80))}, 1).Messages) / 100
			n := int(tt.share * float64(budget) / perLine)
			msgs := (&hist{msgs: append([]llm.Message(nil), base...), n: 100}).tool("bash", `{"command":"cat big.log"}`, lines(n, 80), false).msgs
			out, rep, err := c.Fit(ctxb, &llm.Request{Messages: msgs}, nil)
			if err != nil || rep == nil {
				t.Fatalf("Fit = %+v, %v", rep, err)
			}
			if b := c.Measure(&llm.Request{Messages: out}); b.Messages > b.Budget {
				t.Errorf("still over: %+v", b)
			}
			checkCompacted(t, msgs, out)
		})
	}
}

// CTX-6: when nothing can make the history fit, compaction fails with a
// context overflow instead of looping.
func TestCircuitBreaker(t *testing.T) {
	huge := smallPairs((&hist{}).user("start"), 10).user(words(20_000)).msgs
	tests := []struct {
		name string
		req  *llm.Request
		cfg  Config
	}{
		{"a last message bigger than the budget", &llm.Request{Messages: huge}, Config{ContextWindow: 8_000, ReserveOutput: reserve}},
		{"system prompt bigger than the window", &llm.Request{System: words(20_000), Messages: smallMany()}, Config{ContextWindow: 8_000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := llmtest.NewScripted()
			p.Repeat = &llmtest.Reply{Text: "SUMMARY"}
			tt.cfg.Provider = p
			for _, fn := range []func(context.Context, *llm.Request, *agent.Focus) ([]llm.Message, *agent.CompactionEvent, error){
				New(tt.cfg).Fit, New(tt.cfg).Overflow, New(tt.cfg).Compact,
			} {
				out, rep, err := fn(ctxb, tt.req, nil)
				if llm.KindOf(err) != llm.KindContextOverflow || out != nil || rep != nil {
					t.Fatalf("got %d messages, %+v, %v; want a context overflow", len(out), rep, err)
				}
			}
			if n := len(p.Requests()); n > 3 {
				t.Errorf("%d summary calls for 3 compactions", n)
			}
		})
	}
}

// PROV-7: after a context-overflow error, Overflow summarises whatever the
// estimate says, and collapses when the undercount it implies requires it.
func TestOverflow(t *testing.T) {
	tests := []struct {
		name       string
		msgs       []llm.Message
		frac       float64
		wantLayers []string
	}{
		{"estimate far under", smallMany(), 0.2, []string{LayerSummarize}},
		{"big tail", bigTail(600), 0.55, []string{LayerSummarize, LayerCollapse}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := llmtest.NewScripted(llmtest.Reply{Text: "SUMMARY"})
			c := New(Config{ContextWindow: windowAt(tt.msgs, tt.frac, reserve), ReserveOutput: reserve, Provider: p})
			req := &llm.Request{Messages: tt.msgs, MaxTokens: reserve}
			if _, rep, _ := c.Fit(ctxb, req, nil); rep != nil {
				t.Fatalf("Fit compacted: %+v", rep)
			}
			out, rep, err := c.Overflow(ctxb, req, nil)
			if err != nil || rep == nil {
				t.Fatalf("Overflow = %+v, %v", rep, err)
			}
			if diff := cmp.Diff(tt.wantLayers, rep.Layers); diff != "" || rep.Trigger != "overflow" {
				t.Errorf("trigger %q, layers (-want +got):\n%s", rep.Trigger, diff)
			}
			checkCompacted(t, tt.msgs, out)
		})
	}
	short := []llm.Message{llm.UserText(words(100))}
	c := New(Config{ContextWindow: 100_000, Provider: llmtest.NewScripted()})
	if _, _, err := c.Overflow(ctxb, &llm.Request{Messages: short}, nil); llm.KindOf(err) != llm.KindContextOverflow {
		t.Errorf("Overflow with nothing to compact: %v, want a context overflow", err)
	}
}

// CTX-5: /compact summarises even under the thresholds.
func TestCompactManual(t *testing.T) {
	msgs := smallMany()
	p := llmtest.NewScripted(llmtest.Reply{Text: "SUMMARY"})
	c := New(Config{ContextWindow: 1_000_000, Provider: p})
	out, rep, err := c.Compact(ctxb, &llm.Request{Messages: msgs}, nil)
	if err != nil || rep == nil {
		t.Fatalf("Compact = %+v, %v", rep, err)
	}
	if diff := cmp.Diff([]string{LayerSummarize}, rep.Layers); diff != "" || rep.Trigger != "manual" || len(out) != 1+DefaultKeepRecent {
		t.Errorf("trigger %q, %d messages, layers (-want +got):\n%s", rep.Trigger, len(out), diff)
	}
	checkCompacted(t, msgs, out)
	short := msgs[:3]
	if out, rep, err := c.Compact(ctxb, &llm.Request{Messages: short}, nil); err != nil || rep != nil || !sameSlice(out, short) {
		t.Errorf("Compact of a short history = %+v, %v; want it unchanged", rep, err)
	}
}

// A cancelled summary call cancels the compaction; it does not fall back.
func TestSummaryCancelled(t *testing.T) {
	msgs := smallMany()
	ctx, cancel := context.WithCancel(ctxb)
	p := llmtest.NewScripted(llmtest.Reply{Text: "SUMMARY", Hang: true})
	c := New(Config{ContextWindow: windowAt(msgs, 0.7, reserve), ReserveOutput: reserve, Provider: p})
	cancel()
	if _, rep, err := c.Fit(ctx, &llm.Request{Messages: msgs}, nil); err == nil || rep != nil {
		t.Fatalf("Fit = %+v, %v; want the cancellation", rep, err)
	}
}

// CTX-4: the cut moves back to a clean boundary.
func TestCleanCut(t *testing.T) {
	msgs := smallPairs((&hist{}).user("go"), 3).msgs // u, a, r, a, r, a, r
	tests := []struct{ keep, want int }{
		{1, 5}, {2, 5}, {3, 3}, {4, 3}, {6, 1}, {7, 0}, {10, 0},
	}
	for _, tt := range tests {
		if got := cleanCut(msgs, tt.keep); got != tt.want {
			t.Errorf("cleanCut(keep %d) = %d, want %d", tt.keep, got, tt.want)
		}
	}
}

// CTX-5 (issue 30 item 5): when snip gives way to a summary, the summary
// request carries the messages as the model last saw them — the very same
// blocks, none snipped — so a prompt cache serves all but the instruction.
func TestSnipGivesWaySummaryPrefix(t *testing.T) {
	msgs := bigOld(200)
	p := llmtest.NewScripted(llmtest.Reply{Text: "SUMMARY"})
	c := New(Config{ContextWindow: windowAt(msgs, 0.55, reserve), ReserveOutput: reserve, Provider: p})
	out, rep, err := c.Fit(ctxb, &llm.Request{Model: "m", Messages: msgs}, nil)
	if err != nil || rep == nil {
		t.Fatalf("Fit: %+v, %v", rep, err)
	}
	reqs := p.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d summary requests, want 1", len(reqs))
	}
	sent := reqs[0].Messages
	cut := len(msgs) - (len(out) - 1)
	if len(sent) != cut+1 {
		t.Fatalf("summary request of %d messages, want %d and the instruction", len(sent), cut)
	}
	if msg, blk := firstRewrite(msgs[:cut], sent[:cut]); msg >= 0 {
		t.Errorf("the summary request differs from the conversation at message %d, block %d", msg, blk)
	}
	for i := range cut {
		for j, b := range sent[i].Content {
			if b != msgs[i].Content[j] {
				t.Errorf("message %d block %d is a copy, not the block sent before", i, j)
			}
		}
	}
}
