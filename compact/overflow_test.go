package compact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// PROV-7: the prompt size and limit are read from the vendors' overflow
// messages.
func TestVendorCountPROV7(t *testing.T) {
	tests := []struct {
		msg           string
		prompt, limit int
	}{
		{"prompt is too long: 212345 tokens > 200000 maximum", 212345, 200000},
		{"This model's maximum context length is 128000 tokens. However, you requested 135000 tokens (130000 in the messages, 5000 in the completion). Please reduce the length of the messages or completion.", 130000, 128000},
		{"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.", 9000, 8192},
		{"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", 1200000, 1048576},
		{"Your input exceeds the context window of this model.", 0, 0},
		{"prompt is too long", 0, 0},
	}
	for _, tt := range tests {
		p, l := VendorCount(&llm.Error{Kind: llm.KindContextOverflow, Message: tt.msg})
		if p != tt.prompt || l != tt.limit {
			t.Errorf("VendorCount(%q) = %d, %d; want %d, %d", tt.msg, p, l, tt.prompt, tt.limit)
		}
	}
	if p, _ := VendorCount(&llm.Error{Kind: llm.KindBadRequest, Message: tests[0].msg}); p != 0 {
		t.Errorf("a bad request is no overflow: %d", p)
	}
}

// overflowRun resumes history with prompt against a provider that rejects the
// first request with overflow, then answers "done". It returns the done
// event, the compaction reports and the requests the provider saw.
func overflowRun(t *testing.T, cfg Config, history []llm.Message, prompt string, overflow *llm.Error) (*agent.DoneEvent, []*agent.CompactionEvent, []*llm.Request, string) {
	t.Helper()
	main := llmtest.NewScripted(llmtest.Reply{Err: overflow}, llmtest.Reply{Text: "done"})
	c := New(cfg)
	a := agent.New(agent.Config{Provider: c.Observe(main), Model: "m", Tools: catTools(t, 10), Compactor: c, NoRetry: true})
	var reports []*agent.CompactionEvent
	var done *agent.DoneEvent
	var errText string
	p := llm.UserText(prompt)
	for ev, err := range a.Run(ctxb, agent.Input{SessionID: "s1", RunID: "r1", History: history, Prompt: &p}) {
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		switch ev.Type {
		case agent.EventCompaction:
			reports = append(reports, ev.Compaction)
		case agent.EventError:
			errText = ev.Error.Message
		case agent.EventDone:
			done = ev.Done
		}
	}
	return done, reports, main.Requests(), errText
}

// bigWrite is a session whose only exchange wrote a file of size bytes.
func bigWrite(size int) []llm.Message {
	content := strings.Repeat("\tfmt.Println(\"hello, world\", i, j) // print the pair once\n", size/58)
	in, _ := json.Marshal(map[string]string{"path": "big.txt", "content": content})
	h := (&hist{}).user("write big.txt")
	h.tool("write_file", string(in), "wrote 10 MB to big.txt", false)
	return h.asst("Written.").msgs
}

// PROV-7, CTX-5: the provider's count is the truth. An overflow the estimate
// did not foresee is compacted with the vendor's count and the retry
// completes; a 10 MB write_file input of a call that already ran is shrunk,
// so resuming such a session completes instead of exiting 5 every time.
func TestOverflowCompactsAndCompletesPROV7(t *testing.T) {
	many := smallPairs((&hist{}).user("start"), 30).msgs
	tests := []struct {
		name     string
		cfg      Config
		history  []llm.Message
		err      *llm.Error
		wantLast func(*llm.Request) string
	}{
		{"vendor count above the estimate", Config{ContextWindow: 200_000, Provider: llmtest.NewScripted(llmtest.Reply{Text: "SUMMARY"})},
			many, &llm.Error{Kind: llm.KindContextOverflow, Status: 400, Message: "prompt is too long: 250000 tokens > 200000 maximum"}, nil},
		{"no count in the message", Config{ContextWindow: 200_000, Provider: llmtest.NewScripted(llmtest.Reply{Text: "SUMMARY"})},
			many, &llm.Error{Kind: llm.KindContextOverflow, Status: 400, Message: "prompt is too long"}, nil},
		{"10 MB write_file input, vendor limit below the configured window", Config{ContextWindow: 1 << 30},
			bigWrite(10 << 20), &llm.Error{Kind: llm.KindContextOverflow, Status: 400, Message: "prompt is too long: 2700000 tokens > 200000 maximum"}, nil},
		{"10 MB write_file input, no count, window configured too large", Config{ContextWindow: 10_000_000, Provider: llmtest.NewScripted(llmtest.Reply{Text: "SUMMARY"})},
			bigWrite(10 << 20), &llm.Error{Kind: llm.KindContextOverflow, Status: 400, Message: "prompt is too long"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done, reports, reqs, errText := overflowRun(t, tt.cfg, tt.history, "now summarise what you did", tt.err)
			if done.Reason != agent.ReasonCompleted || errText != "" {
				t.Fatalf("done %s: %s", done.Reason, errText)
			}
			if len(reports) != 1 || reports[0].Trigger != "overflow" || len(reports[0].Layers) == 0 {
				t.Fatalf("reports %+v", reports)
			}
			last := reqs[len(reqs)-1]
			if err := llm.CheckPairing(last.Messages); err != nil {
				t.Fatal(err)
			}
			size := 0
			for _, m := range last.Messages {
				for _, b := range m.Content {
					if u, ok := b.(*llm.ToolUse); ok {
						size += len(u.Input)
						if !json.Valid(u.Input) {
							t.Errorf("shrunk input is not JSON: %.200s", u.Input)
						}
					}
				}
			}
			if size > 64<<10 {
				t.Errorf("the retried request still carries %d bytes of tool input", size)
			}
			if got := last.Messages[len(last.Messages)-1].TextOf(); got != "now summarise what you did" {
				t.Errorf("newest message %q", got)
			}
			t.Logf("layers %v, %d → %d tokens", reports[0].Layers, reports[0].TokensBefore, reports[0].TokensAfter)
		})
	}
}

// PROV-7, CTX-6: when the newest message alone cannot fit, the run stops
// with context_overflow, says exactly that, and compacts nothing.
func TestOverflowNewestMessageTooBigPROV7(t *testing.T) {
	summaries := llmtest.NewScripted()
	summaries.Repeat = &llmtest.Reply{Text: "SUMMARY"}
	cfg := Config{ContextWindow: 200_000, Provider: summaries}
	history := smallPairs((&hist{}).user("start"), 10).msgs
	done, reports, reqs, errText := overflowRun(t, cfg, history, words(400_000),
		&llm.Error{Kind: llm.KindContextOverflow, Status: 400, Message: "prompt is too long: 402000 tokens > 200000 maximum"})
	if done.Reason != agent.ReasonContextOverflow {
		t.Fatalf("done %s", done.Reason)
	}
	if !strings.Contains(errText, "the newest message alone is") || strings.Contains(errText, "after compaction") {
		t.Errorf("error %q", errText)
	}
	if len(reports) != 0 || len(summaries.Requests()) != 0 || len(reqs) > 1 {
		t.Errorf("%d compactions, %d summary calls, %d model calls; want 0, 0, at most 1", len(reports), len(summaries.Requests()), len(reqs))
	}
}

// PROV-7: the retry after compaction is the only one; a second overflow
// ends the run saying compaction already ran.
func TestOverflowTwicePROV7(t *testing.T) {
	overflow := &llm.Error{Kind: llm.KindContextOverflow, Status: 400, Message: "prompt is too long"}
	main := llmtest.NewScripted(llmtest.Reply{Err: overflow}, llmtest.Reply{Err: overflow})
	c := New(Config{ContextWindow: 200_000})
	a := agent.New(agent.Config{Provider: main, Model: "m", Compactor: c, NoRetry: true})
	history := smallPairs((&hist{}).user("start"), 10).msgs
	p := llm.UserText("go on")
	var done *agent.DoneEvent
	for ev := range a.Run(ctxb, agent.Input{History: history, Prompt: &p}) {
		if ev.Type == agent.EventDone {
			done = ev.Done
		}
	}
	if done.Reason != agent.ReasonContextOverflow || !strings.Contains(done.Error, "still too long after compacting") {
		t.Errorf("done %s: %s", done.Reason, done.Error)
	}
	if n := len(main.Requests()); n != 2 {
		t.Errorf("%d model calls, want 2", n)
	}
}
