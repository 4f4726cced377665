package compact

import (
	"fmt"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// CTX-5: snip trims down to a low watermark, so after a compaction the next
// turns only append: most requests extend the one before, and snips are
// few for many large outputs.
func TestSnipHysteresisCTX5(t *testing.T) {
	const turns = 40
	main := llmtest.NewScripted()
	for i := range turns {
		main.Push(llmtest.Reply{Text: fmt.Sprintf("Part %d.", i), ToolCalls: []llm.ToolUse{llmtest.Call(fmt.Sprintf("c%d", i), "cat", fmt.Sprintf(`{"file":"part%d.txt"}`, i))}})
	}
	main.Push(llmtest.Reply{Text: "All parts read."})
	c := New(Config{ContextWindow: 60_000, ReserveOutput: 4_000})
	a := agent.New(agent.Config{Provider: c.Observe(main), Model: "m", Tools: catTools(t, 200), Compactor: c, NoRetry: true})
	var reports []*agent.CompactionEvent
	done := runAgent(t, a, "read every part", func(e *agent.CompactionEvent) { reports = append(reports, e) })
	if done.Reason != agent.ReasonCompleted {
		t.Fatalf("done = %+v", done)
	}
	reqs := main.Requests()
	appendOnly := 0
	for i := 1; i < len(reqs); i++ {
		prev, cur := reqs[i-1].Messages, reqs[i].Messages
		if prefixKept(prev, cur) {
			appendOnly++
		}
	}
	if len(reports) == 0 || len(reports) > turns/4 {
		t.Errorf("%d compactions in %d turns; want between 1 and %d", len(reports), turns, turns/4)
	}
	if appendOnly < len(reqs)-1-len(reports) {
		t.Errorf("%d of %d requests only appended; %d compactions", appendOnly, len(reqs)-1, len(reports))
	}
	t.Logf("%d requests, %d append-only, compactions: %v", len(reqs), appendOnly, layersOf(reports))
}

// prefixKept reports whether cur starts with every message of prev, block
// for block.
func prefixKept(prev, cur []llm.Message) bool {
	if len(cur) < len(prev) {
		return false
	}
	for i := range prev {
		if len(prev[i].Content) != len(cur[i].Content) || len(prev[i].Content) > 0 && &prev[i].Content[0] != &cur[i].Content[0] {
			return false
		}
	}
	return true
}
