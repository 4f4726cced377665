package runner

import (
	"context"
	"iter"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/workspace"
)

// Submit runs a text prompt: [Conversation.SubmitMessage] with the user
// message of prompt alone ("" continues a pending conversation).
func (c *Conversation) Submit(ctx context.Context, runID, prompt string, approver permission.Approver) iter.Seq2[agent.Event, error] {
	var p *llm.Message
	if prompt != "" {
		m := llm.UserText(prompt)
		p = &m
	}
	return c.SubmitMessage(ctx, runID, p, approver)
}

// SubmitMessage runs one user message — text and images (SPEC LOOP-2) —
// in the bound session (a new one is created on the first run) and yields
// the run's events (docs/events.md). Its images are stored in the session
// log as the message's blocks and replayed like any other; a model without
// vision sees a note in their place (LOOP-8). Durable
// events are journaled before they are yielded, so a tool's start is
// stored before the tool runs (SPEC SESS-1); if the journal fails, the run
// is stopped and ends with an error. A nil prompt continues a pending
// conversation (SPEC LOOP-9). The approver answers the run's permission
// questions; when it can also ask questions (a builtin.Asker), it answers
// ask_user too. runID names the run ("" makes one).
func (c *Conversation) SubmitMessage(ctx context.Context, runID string, prompt *llm.Message, approver permission.Approver) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		if c.s.model == nil {
			yield(c.failed(ErrNoModel))
			return
		}
		if c.Session() == nil {
			if err := c.Create(ctx, &session.Session{}); err != nil {
				yield(c.failed(err))
				return
			}
		}
		c.healHistory()
		c.refreshMemory()
		c.rec.SetModelLabel(c.s.model.Label)
		if runID == "" {
			runID = session.NewID()
		}
		in := agent.Input{SessionID: c.SessionID(), RunID: runID, History: c.history,
			WorkDir: c.s.ws.Root, SessionDir: c.sessDir, Focus: c.focus, Healed: c.healed, Depth: c.s.depth}
		c.healed = ""
		if prompt != nil {
			in.HookContext, c.startContext = c.startContext, ""
		}
		if prompt != nil {
			p := *prompt
			p.Role = llm.RoleUser
			in.Prompt = &p
		}
		for ev, err := range c.Agent(approver).Run(ctx, in) {
			if rerr := c.rec.Record(ctx, ev); rerr != nil {
				yield(c.failed(rerr))
				return
			}
			c.track(ev)
			if !yield(ev, err) {
				return
			}
		}
	}
}

// track keeps the conversation's copy of the conversation up to date. A
// sub-agent's events are not the conversation's.
func (c *Conversation) track(ev agent.Event) {
	if ev.Subagent != nil {
		return
	}
	switch ev.Type {
	case agent.EventMessage:
		if ev.Message != nil {
			c.history = append(c.history, *ev.Message)
		}
	case agent.EventCompaction:
		if cp := ev.Compaction; cp != nil && cp.History != nil {
			c.history = cp.History
		}
	case agent.EventDone:
		if d := ev.Done; d != nil {
			c.mu.Lock()
			c.usage.Add(d.Usage)
			c.cost += d.CostUSD
			c.mu.Unlock()
			if d.Focus != nil {
				c.focus = *d.Focus
			}
		}
	}
}

// failed is the event pair that ends a run which failed outside the loop
// (the session could not be created or journaled): a done with reason
// error, and the error.
func (c *Conversation) failed(err error) (agent.Event, error) {
	return failedEvent(c.s.cfg.Now(), c.SessionID(), "", err), err
}

// failedEvent is the done event of a run that failed outside the loop.
func failedEvent(now time.Time, sessionID, runID string, err error) agent.Event {
	return agent.Event{Type: agent.EventDone, Time: now, SessionID: sessionID, RunID: runID,
		Done: &agent.DoneEvent{Reason: agent.ReasonError, Error: err.Error()}}
}

// Compact summarises the bound session's conversation now (SPEC CTX-5,
// manual): pre_compact and post_compact fire as for an automatic one
// (HOOK-1), the compaction is journaled, and its report returned (nil when
// the conversation is too short to compact).
func (c *Conversation) Compact(ctx context.Context) (*agent.CompactionEvent, error) {
	s := c.Session()
	if s == nil || len(c.history) == 0 || c.s.model == nil {
		return nil, nil
	}
	c.refreshMemory()
	c.Agent(nil) // builds the compactor
	req := &llm.Request{Model: c.s.model.Name, System: c.system, Messages: c.history, Tools: c.tools.Specs(),
		MaxTokens: c.s.ev.Int(workspace.MaxTokens), CacheKey: s.ID}
	c.FireHook(ctx, hook.PreCompact, hook.Input{Trigger: hook.TriggerManual})
	hist, rep, err := c.compactor.Compact(ctx, req, &c.focus)
	if err != nil {
		return nil, err
	}
	if rep == nil {
		return nil, nil
	}
	defer c.FireHook(context.WithoutCancel(ctx), hook.PostCompact, hook.Input{Trigger: hook.TriggerManual})
	rep.Trigger, rep.History = agent.TriggerManual, hist
	ev := agent.Event{Type: agent.EventCompaction, Time: time.Now(), SessionID: s.ID, Compaction: rep}
	if err := c.rec.Record(ctx, ev); err != nil {
		return nil, err
	}
	c.track(ev)
	return rep, nil
}
