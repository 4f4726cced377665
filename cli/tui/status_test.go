package tui

import (
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
)

// ctxBackend is a fakeBackend that reports its context.
type ctxBackend struct {
	fakeBackend
	used, window int64
}

// Context implements ContextReporter.
func (c *ctxBackend) Context() (int64, int64) { return c.used, c.window }

// CLI-6: the status line shows the mode as a badge, the model, the share
// of the context window (the backend's estimate, then the usage events'
// exact figure) and the cost.
func TestStatusLineModeAndContext_CLI6(t *testing.T) {
	feed := make(chan agent.Event, 4)
	b := &ctxBackend{fakeBackend: fakeBackend{script: feedScript(feed), info: Info{Model: "m1", PermissionMode: "plan"}}, used: 5000, window: 200000}
	h := newHarness(t, b)
	h.viewHas("⏸ plan mode · m1 · 2% context")
	h.submit("go")
	feed <- agent.Event{Type: agent.EventUsage, Usage: &agent.UsageEvent{Turn: llm.Usage{InputTokens: 90000, OutputTokens: 10000}, Run: llm.Usage{InputTokens: 90000, OutputTokens: 10000}, CostUSD: 0.5}}
	h.viewHas("⏸ plan mode · m1 · 50% context · 100.0k tokens · $0.5000")
	feed <- doneEvent(agent.ReasonCompleted)
	h.idle()
}

func TestContextText_CLI6(t *testing.T) {
	for _, tc := range []struct {
		used, window int64
		want         string
	}{
		{0, 100, ""}, {10, 0, ""}, {-5, 100, ""}, {1, 1000, "<1% context"}, {50, 100, "50% context"},
		{150, 100, "150% context"}, {1 << 40, 1, ">999% context"},
	} {
		if got := contextText(tc.used, tc.window); got != tc.want {
			t.Errorf("contextText(%d, %d) = %q, want %q", tc.used, tc.window, got, tc.want)
		}
	}
}
