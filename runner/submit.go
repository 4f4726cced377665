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
	"github.com/reinhq/rein/tool/builtin"
	"github.com/reinhq/rein/workspace"
)

// Submit runs one prompt in the bound session (a new one is created on
// the first run) and yields the run's events (docs/events.md). Durable
// events are journaled before they are yielded, so a tool's start is
// stored before the tool runs (SPEC SESS-1); if the journal fails, the run
// is stopped and ends with an error. An empty prompt continues a pending
// conversation (SPEC LOOP-9). The approver answers the run's permission
// questions; when it can also ask questions (a builtin.Asker), it answers
// ask_user too. runID names the run ("" makes one).
func (e *Engine) Submit(ctx context.Context, runID, prompt string, approver permission.Approver) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		if e.model == nil {
			yield(e.failed(ErrNoModel))
			return
		}
		if e.Session() == nil {
			if err := e.Create(ctx, &session.Session{}); err != nil {
				yield(e.failed(err))
				return
			}
		}
		asker, _ := approver.(builtin.Asker)
		e.asker.set(asker)
		defer e.asker.set(nil)
		e.healHistory()
		if err := e.refreshMemory(); err != nil {
			yield(e.failed(err))
			return
		}
		e.rec.SetModelLabel(e.model.Label)
		if runID == "" {
			runID = session.NewID()
		}
		in := agent.Input{SessionID: e.SessionID(), RunID: runID, History: e.history,
			WorkDir: e.ws.Root, SessionDir: e.sessDir, Focus: e.focus, Healed: e.healed, Depth: e.depth}
		e.healed = ""
		if prompt != "" {
			p := llm.UserText(prompt)
			in.Prompt = &p
		}
		for ev, err := range e.Agent(approver).Run(ctx, in) {
			if rerr := e.rec.Record(ctx, ev); rerr != nil {
				yield(e.failed(rerr))
				return
			}
			e.track(ev)
			if !yield(ev, err) {
				return
			}
		}
	}
}

// track keeps the engine's copy of the conversation up to date. A
// sub-agent's events are not the conversation's.
func (e *Engine) track(ev agent.Event) {
	if ev.Subagent != nil {
		return
	}
	switch ev.Type {
	case agent.EventMessage:
		if ev.Message != nil {
			e.history = append(e.history, *ev.Message)
		}
	case agent.EventCompaction:
		if c := ev.Compaction; c != nil && c.History != nil {
			e.history = c.History
		}
	case agent.EventDone:
		if d := ev.Done; d != nil {
			e.mu.Lock()
			e.usage.Add(d.Usage)
			e.cost += d.CostUSD
			e.mu.Unlock()
			if d.Focus != nil {
				e.focus = *d.Focus
			}
		}
	}
}

// failed is the event pair that ends a run which failed outside the loop
// (the session could not be created or journaled): a done with reason
// error, and the error.
func (e *Engine) failed(err error) (agent.Event, error) {
	return failedEvent(e.cfg.Now(), e.SessionID(), "", err), err
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
func (e *Engine) Compact(ctx context.Context) (*agent.CompactionEvent, error) {
	s := e.Session()
	if s == nil || len(e.history) == 0 || e.model == nil {
		return nil, nil
	}
	e.Agent(nil) // builds the compactor
	req := &llm.Request{Model: e.model.Name, System: e.system, Messages: e.history, Tools: e.tools.Specs(),
		MaxTokens: e.ev.Int(workspace.MaxTokens), CacheKey: s.ID}
	e.FireHook(ctx, hook.PreCompact, hook.Input{Trigger: "manual"})
	hist, rep, err := e.compactor.Compact(ctx, req, &e.focus)
	if err != nil {
		return nil, err
	}
	if rep == nil {
		return nil, nil
	}
	defer e.FireHook(context.WithoutCancel(ctx), hook.PostCompact, hook.Input{Trigger: "manual"})
	rep.Trigger, rep.History = "manual", hist
	ev := agent.Event{Type: agent.EventCompaction, Time: time.Now(), SessionID: s.ID, Compaction: rep}
	if err := e.rec.Record(ctx, ev); err != nil {
		return nil, err
	}
	e.track(ev)
	return rep, nil
}
