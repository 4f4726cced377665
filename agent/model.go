package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/llm"
)

// request builds the model request for the current history, transformed
// for what the model accepts.
func (r *run) request() *llm.Request {
	req := r.rawRequest()
	msgs := req.Messages
	if r.cfg.Caps.NoToolResultImages {
		msgs = llm.MoveToolResultImages(msgs)
	}
	if r.cfg.Caps.NoVision {
		msgs = llm.ReplaceImages(msgs)
	}
	req.Messages = msgs
	return req
}

// rawRequest is the request over the history as stored: what the compactor
// sees, so a compaction never bakes a model's transformation into the session.
func (r *run) rawRequest() *llm.Request {
	return &llm.Request{
		Model:     r.cfg.Model,
		System:    r.cfg.System,
		Messages:  r.history,
		Tools:     r.cfg.Tools.Specs(),
		MaxTokens: r.cfg.MaxTokens,
		Thinking:  r.cfg.Thinking,
		CacheKey:  r.in.SessionID,
	}
}

// callModel asks the model for the next reply: it fits the history into the
// window, checks the pairing invariant, streams the reply, and handles an
// empty reply (LOOP-10) and a context overflow (PROV-7). A non-empty ending
// reason means the run is over.
func (r *run) callModel(ctx context.Context) (*llm.Response, ending) {
	for {
		if end := r.fit(ctx); end.reason != "" {
			return nil, end
		}
		if err := r.checkPairing(); err != nil {
			return nil, ending{reason: ReasonError, err: fmt.Errorf("agent: refusing to send a broken history: %w", err), fatal: true}
		}
		req := r.request()
		if blocked := r.modelHook(ctx, req); blocked != "" {
			return nil, ending{reason: ReasonError, err: fmt.Errorf("model request blocked by a hook: %s", blocked)}
		}
		r.stats.ModelCalls++
		resp, shown, err := r.stream(ctx, req)
		if err != nil {
			if end, again := r.modelFailed(ctx, req, shown, err); !again {
				return nil, end
			}
			continue
		}
		r.countUsage(resp.Usage)
		if o, ok := r.cfg.Compactor.(UsageObserver); ok {
			o.ObserveUsage(r.history, resp.Usage)
		}
		r.responseHook(ctx, resp)
		if resp.Message.Empty() {
			if r.emptyRetried {
				return nil, ending{reason: ReasonError, err: errors.New("the model returned an empty reply twice")}
			}
			r.emptyRetried = true
			r.cfg.Logger.Warn("empty model reply; asking again", "session_id", r.in.SessionID, "run_id", r.in.RunID, "turn", r.turn)
			continue
		}
		return resp, ending{}
	}
}

// fit compacts the history when the compactor says it does not fit.
func (r *run) fit(ctx context.Context) ending {
	if r.cfg.Compactor == nil {
		return ending{}
	}
	hist, report, err := r.cfg.Compactor.Fit(ctx, r.rawRequest(), &r.focus)
	if err != nil {
		if llm.KindOf(err) == llm.KindContextOverflow {
			return ending{reason: ReasonContextOverflow, err: err}
		}
		if ctx.Err() != nil {
			return ending{reason: ReasonCancelled}
		}
		return ending{reason: ReasonError, err: fmt.Errorf("compaction: %w", err)}
	}
	r.compacted(ctx, hist, report, TriggerBudget)
	return ending{}
}

// checkPairing checks the pairing invariant (LOOP-5) over what the history
// gained since the last check: it is append-only between compactions, so
// the check costs the new messages only.
func (r *run) checkPairing() error {
	from := min(r.paired, len(r.history))
	for from > 0 && (from == len(r.history) || r.history[from].Role != llm.RoleAssistant) {
		from--
	}
	if err := llm.CheckPairing(r.history[from:]); err != nil {
		if pe, ok := err.(*llm.PairingError); ok {
			pe.Index += from
		}
		return err
	}
	r.paired = len(r.history)
	return nil
}

// compacted replaces the history with a compacted one and reports it. The
// compaction hooks run on the run's context without its cancellation: the
// history is replaced either way, and the hooks keep the run's trace and
// values.
func (r *run) compacted(ctx context.Context, hist []llm.Message, report *CompactionEvent, trigger CompactionTrigger) {
	if report == nil {
		return
	}
	hctx := context.WithoutCancel(ctx)
	if trigger == TriggerBudget {
		// The compactor decided and did the work inside Fit; the hook still
		// hears of it before the history is replaced.
		r.fire(hctx, hook.PreCompact, hook.Input{Trigger: hook.TriggerAuto})
	}
	r.history = hist
	r.paired = 0
	if report.ModelCalls > 0 {
		r.stats.ModelCalls += report.ModelCalls
		r.countUsage(report.Usage)
	}
	report.Trigger = trigger
	report.History = hist
	r.stats.Compactions++
	r.emit(Event{Type: EventCompaction, Compaction: report})
	r.fire(hctx, hook.PostCompact, hook.Input{Trigger: hookTrigger(trigger)})
}

// hookTrigger is what the compaction hooks hear of a trigger: manual, or
// auto for what the harness set off itself.
func hookTrigger(t CompactionTrigger) hook.Trigger {
	if t == TriggerManual {
		return hook.TriggerManual
	}
	return hook.TriggerAuto
}

// modelFailed decides what a failed model call means: a context overflow is
// compacted and retried once; anything else ends the run. Text the user
// already saw is kept as a text-only assistant message when the run is
// cancelled; tool calls of the failed reply are discarded (LOOP-5).
func (r *run) modelFailed(ctx context.Context, req *llm.Request, shown string, err error) (ending, bool) {
	kind := llm.KindOf(err)
	switch {
	case ctx.Err() != nil || kind == llm.KindCancelled:
		if strings.TrimSpace(shown) != "" {
			r.appendMessage(llm.Message{Role: llm.RoleAssistant, Provider: r.cfg.ProviderName, Model: r.cfg.Model,
				Content: []llm.Block{&llm.Text{Text: shown}}})
		}
		return ending{reason: ReasonCancelled, err: err}, false
	case kind == llm.KindContextOverflow && r.cfg.Compactor != nil && !r.compactedOnOverflow:
		return r.overflowed(ctx, err)
	case kind == llm.KindContextOverflow && r.compactedOnOverflow:
		return ending{reason: ReasonContextOverflow,
			err: fmt.Errorf("the request was still too long after compacting the conversation once: %w", err)}, false
	case kind == llm.KindContextOverflow:
		return ending{reason: ReasonContextOverflow,
			err: fmt.Errorf("the request is too long and no compactor is configured: %w", err)}, false
	}
	return ending{reason: ReasonError, err: err}, false
}

// overflowed compacts once after the provider rejected the request as too
// long (PROV-7): the compactor first hears the provider's count, then
// compacts; the caller retries the model call. When compaction cannot make
// the history fit, its error says why, and the run ends with
// context_overflow.
func (r *run) overflowed(ctx context.Context, err error) (ending, bool) {
	r.compactedOnOverflow = true
	if o, ok := r.cfg.Compactor.(OverflowObserver); ok {
		o.ObserveOverflow(r.history, err)
	}
	r.fire(ctx, hook.PreCompact, hook.Input{Trigger: hook.TriggerAuto})
	hist, report, cerr := r.cfg.Compactor.Overflow(ctx, r.rawRequest(), &r.focus)
	switch {
	case cerr != nil && ctx.Err() != nil:
		return ending{reason: ReasonCancelled, err: cerr}, false
	case cerr != nil && llm.KindOf(cerr) == llm.KindContextOverflow:
		return ending{reason: ReasonContextOverflow, err: cerr}, false
	case cerr != nil:
		return ending{reason: ReasonContextOverflow, err: fmt.Errorf("the request is too long and compacting it failed: %w (provider: %v)", cerr, err)}, false
	case report == nil:
		return ending{reason: ReasonContextOverflow, err: fmt.Errorf("the request is too long and the compactor found nothing to compact: %w", err)}, false
	}
	r.cfg.Logger.Info("context overflow: compacted, retrying the model call once", "session_id", r.in.SessionID, "run_id", r.in.RunID,
		"turn", r.turn, "layers", report.Layers, "tokens_before", report.TokensBefore, "tokens_after", report.TokensAfter)
	r.compacted(ctx, hist, report, TriggerOverflow)
	return ending{}, true
}

// stream sends req and relays the reply's deltas as events. It returns the
// complete response, or the text shown before the stream failed.
func (r *run) stream(ctx context.Context, req *llm.Request) (*llm.Response, string, error) {
	var shown strings.Builder
	for d, err := range r.cfg.Provider.Stream(ctx, req) {
		if err != nil {
			return nil, shown.String(), err
		}
		switch d.Kind {
		case llm.DeltaText:
			shown.WriteString(d.Text)
			r.emit(Event{Type: EventTextDelta, Text: d.Text})
		case llm.DeltaThinking:
			r.emit(Event{Type: EventThinkingDelta, Text: d.Text})
		case llm.DeltaRetry:
			r.stats.Retries++
			r.emit(Event{Type: EventRetry, Retry: retryEvent(d.Retry)})
		case llm.DeltaDone:
			if d.Response == nil {
				return nil, shown.String(), llm.ErrNoResponse
			}
			return d.Response, shown.String(), nil
		}
		if r.stopped {
			return nil, shown.String(), context.Canceled
		}
	}
	return nil, shown.String(), llm.ErrNoResponse
}

func retryEvent(ri *llm.RetryInfo) *RetryEvent {
	e := &RetryEvent{Attempt: ri.Attempt, DelayMS: ri.Delay.Milliseconds()}
	if ri.Err != nil {
		e.Kind, e.Status, e.Message = ri.Err.Kind.String(), ri.Err.Status, ri.Err.Error()
	}
	return e
}

func (r *run) countUsage(u llm.Usage) {
	r.usage.Add(u)
	ev := &UsageEvent{Turn: u, Run: r.usage}
	if r.cfg.Price != nil {
		r.cost += r.cfg.Price(u)
		ev.CostUSD = r.cost
	}
	r.emit(Event{Type: EventUsage, Usage: ev})
}
