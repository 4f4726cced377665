package agent

import (
	"context"
	"fmt"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tool"
)

// Subagent marks an event of a sub-agent's run relayed in its parent's
// stream (SPEC AGENT-4): the agent that produced it, the parent's call that
// started that agent, and how deep it is (1 for a child of the top run).
// Events of a grandchild keep their own mark.
type Subagent struct {
	Agent        string `json:"agent"`
	ParentCallID string `json:"parent_call_id"`
	Depth        int    `json:"depth"`
}

// Spent is what a sub-run used, rolled up into its caller's totals.
type Spent struct {
	Usage   llm.Usage
	CostUSD float64
}

// Streamer is a tool whose work is a run of its own — a sub-agent — whose
// events belong in the calling run's stream. The loop calls RunStream
// instead of Run: every event given to emit is relayed (emit may be called
// from any goroutine, one event at a time, and returns once the event was
// delivered), and the usage and cost returned are added to the calling
// run's, so the top run's done counts the whole tree. Events a Streamer
// relays must carry a [Subagent] mark, and its sub-run's run_start and done
// become [EventSubagentStart] and [EventSubagentEnd]: [Nest] does both.
type Streamer interface {
	tool.Tool
	RunStream(ctx context.Context, call tool.Call, emit func(Event)) (tool.Result, Spent, error)
}

// addSpent adds a sub-run's usage and cost to the run's totals.
func (r *run) addSpent(s *Spent) {
	if s == nil {
		return
	}
	r.stats.Subagents++
	r.usage.Add(s.Usage)
	r.cost += s.CostUSD
}

// overBudget says how the run went over its token or cost budget, nil
// while it is within them.
func (r *run) overBudget() error {
	if b := r.cfg.TokenBudget; b > 0 {
		if used := r.usage.PromptTokens() + r.usage.OutputTokens; used >= b {
			return fmt.Errorf("stopped: the run used %d tokens of its budget of %d", used, b)
		}
	}
	if b := r.cfg.CostBudget; b > 0 && r.cost >= b {
		return fmt.Errorf("stopped: the run cost $%.4f of its budget of $%.4f", r.cost, b)
	}
	return nil
}

// Nest marks e as an event of sub-agent sub and returns it: the sub-run's
// run_start and done are renamed subagent_start and subagent_end. An event
// already marked (a grandchild's) is returned as it is.
func Nest(e Event, sub Subagent) Event {
	if e.Subagent != nil {
		return e
	}
	e.Subagent = &sub
	switch e.Type {
	case EventRunStart:
		e.Type = EventSubagentStart
	case EventDone:
		e.Type = EventSubagentEnd
	}
	return e
}
