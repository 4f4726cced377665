package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein/llm"
)

// Run starts a run and returns its event stream. Every run ends with exactly
// one [EventDone]; the error of the pair is non-nil only on that last event,
// when the run ended with [ReasonError] because of a failure that is not the
// model's (a broken invariant, no provider). A tool's Go error is not one:
// it reaches the model as an error result and the run goes on (SPEC LOOP-7).
// Stopping the iteration cancels the run; pending tool calls still get their
// results, but the events saying so are not delivered.
func (a *Agent) Run(ctx context.Context, in Input) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		r := &run{cfg: &a.cfg, asking: make(chan struct{}, 1), in: in, yield: yield, history: in.History, started: a.cfg.Now(), focus: in.Focus}
		r.run(ctx)
	}
}

// run is the state of one run; one goroutine owns it.
type run struct {
	cfg     *Config
	asking  chan struct{} // one permission question open at a time
	in      Input
	yield   func(Event, error) bool
	stopped bool // the consumer stopped reading

	history []llm.Message
	focus   Focus
	turn    int
	usage   llm.Usage
	cost    float64
	stats   Stats
	started time.Time
	// emptyRetried is set once an empty reply was retried (LOOP-10).
	emptyRetried bool
	// compactedOnOverflow is set once a context overflow was compacted (PROV-7).
	compactedOnOverflow bool
	// paired is how much of the history passed the pairing check.
	paired int
	// stopForced counts how often stop hooks kept the run going.
	stopForced int
	// end is the reason a permission answer ended the run with, when it
	// is not permission_denied (a plan waiting for approval).
	end Reason
}

// ending is how a run ends.
type ending struct {
	reason Reason
	err    error // shown in done.error; returned with done for internal failures
	fatal  bool  // the error is the harness's, not the model's
}

func (r *run) emit(e Event) bool {
	if r.stopped {
		return false
	}
	e.Time = r.cfg.Now()
	e.SessionID, e.RunID = r.in.SessionID, r.in.RunID
	if e.Turn == 0 && e.Subagent == nil {
		e.Turn = r.turn
	}
	if !r.yield(e, nil) {
		r.stopped = true
	}
	return !r.stopped
}

// appendMessage adds m to the history and reports it as a durable event.
func (r *run) appendMessage(m llm.Message) {
	r.history = append(r.history, m)
	mc := m
	r.emit(Event{Type: EventMessage, Message: &mc})
}

func (r *run) run(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	if r.cfg.Timeout > 0 {
		var c context.CancelFunc
		ctx, c = context.WithTimeoutCause(ctx, r.cfg.Timeout, errRunTimeout)
		defer c()
	}
	r.emit(Event{Type: EventRunStart, RunStart: &RunStart{Model: r.cfg.Model, Provider: r.cfg.ProviderName,
		Continued: r.in.Prompt == nil, MaxTurns: r.cfg.MaxTurns, Healed: r.in.Healed, Warnings: r.warnings()}})
	end := r.start(ctx)
	if end.reason == "" {
		end = r.loop(ctx)
	}
	end = r.classifyCancel(parent, ctx, end)
	r.finish(parent, end)
}

var errRunTimeout = errors.New("the run's time budget ran out")

// warnings are the run_start warnings: the caller's, and a note when the
// history holds vendor content (llm.Opaque: a server tool's search results,
// code execution) that another provider produced, which this model will not
// see (PROV-5).
func (r *run) warnings() []string {
	w := r.cfg.Warnings
	if n := promptImages(r.in.Prompt); n > 0 && r.cfg.Caps.NoVision {
		w = append(slices.Clip(w), fmt.Sprintf("the model cannot see images: the %d image(s) of this message reach it as a note (LOOP-8); a model with vision sees them", n))
	}
	if r.cfg.ProviderName == "" {
		return w
	}
	n, types := llm.OpaqueLeftOut(r.history, r.cfg.ProviderName)
	if n == 0 {
		return w
	}
	w = slices.Clip(w)
	return append(w, fmt.Sprintf("%d block(s) of vendor content in the history are not sent to %s: only the provider that produced them can read them: %s",
		n, r.cfg.ProviderName, strings.Join(types, ", ")))
}

// promptImages counts the images of the user's message.
func promptImages(p *llm.Message) int {
	n := 0
	if p != nil {
		for _, b := range p.Content {
			if _, ok := b.(*llm.Image); ok {
				n++
			}
		}
	}
	return n
}

// start appends the user prompt, or checks there is something to continue.
func (r *run) start(ctx context.Context) ending {
	if r.cfg.Provider == nil {
		return ending{reason: ReasonError, err: errors.New("agent: no provider configured"), fatal: true}
	}
	if r.in.Prompt == nil {
		if n := len(r.history); n == 0 || len(r.history[n-1].ToolResults()) == 0 {
			return ending{reason: ReasonError, err: errors.New("nothing to continue: the session's last message holds no tool results; send a prompt")}
		}
		return ending{}
	}
	p, blocked := r.submitPrompt(ctx, *r.in.Prompt)
	if blocked != "" {
		return ending{reason: ReasonPermissionDenied, err: fmt.Errorf("prompt blocked by a hook: %s", blocked)}
	}
	r.focus.setGoal(p)
	r.appendMessage(r.withNotices(p))
	return ending{}
}

// loop runs turns until the model stops asking for tools or a limit is hit.
func (r *run) loop(ctx context.Context) ending {
	for {
		if r.stopped {
			return ending{reason: ReasonCancelled}
		}
		if r.turn >= r.cfg.MaxTurns {
			return ending{reason: ReasonMaxTurns, err: fmt.Errorf("stopped after %d turns (max turns); continue the session to go on", r.turn)}
		}
		if over := r.overBudget(); over != nil {
			return ending{reason: ReasonBudget, err: over}
		}
		if end, more := r.step(ctx); !more {
			return end
		}
	}
}

// step is one turn: a model call, then the tools it asked for.
func (r *run) step(ctx context.Context) (ending, bool) {
	r.turn++
	resp, end := r.callModel(ctx)
	if end.reason != "" {
		return end, false
	}
	r.appendMessage(resp.Message)
	calls := resp.Message.ToolUses()
	if len(calls) > 0 {
		cut := resp.StopReason == llm.StopMaxTokens
		results, stop := r.runTools(ctx, calls, cut)
		r.appendMessage(r.withNotices(llm.Message{Role: llm.RoleUser, Content: results}))
		if ctx.Err() != nil {
			return ending{reason: ReasonCancelled}, false
		}
		switch {
		case stop != "" && r.end == ReasonPlanReady:
			return ending{reason: ReasonPlanReady}, false
		case stop != "":
			return ending{reason: ReasonPermissionDenied, err: errors.New(stop)}, false
		}
		return ending{}, true
	}
	switch resp.StopReason {
	case llm.StopMaxTokens:
		return ending{reason: ReasonMaxTokens, err: errors.New("the reply hit the output token limit")}, false
	case llm.StopRefusal:
		return ending{reason: ReasonRefusal, err: errors.New("the model refused to answer")}, false
	case llm.StopPauseTurn:
		return ending{}, true
	}
	if cont := r.stopHook(ctx, resp.Message); cont != "" {
		r.appendMessage(llm.UserText(cont))
		return ending{}, true
	}
	return ending{reason: ReasonCompleted}, false
}

// classifyCancel turns a context ending into the right reason: the caller's
// cancel, or the run's own time budget.
func (r *run) classifyCancel(parent, ctx context.Context, end ending) ending {
	if ctx.Err() == nil && !r.stopped {
		return end
	}
	switch {
	case parent.Err() != nil || r.stopped:
		return ending{reason: ReasonCancelled, err: context.Cause(parent)}
	case errors.Is(context.Cause(ctx), errRunTimeout):
		return ending{reason: ReasonTimeout, err: fmt.Errorf("%w (%v)", errRunTimeout, r.cfg.Timeout)}
	}
	return end
}

// finish reports the end of the run. The notification hook runs on the
// caller's context without its cancellation, so it keeps the run's trace
// and values even when the run was cancelled.
func (r *run) finish(parent context.Context, end ending) {
	done := &DoneEvent{Reason: end.reason, Turns: r.turn, Usage: r.usage, CostUSD: r.cost, Stats: r.stats,
		DurationMS: r.cfg.Now().Sub(r.started).Milliseconds(), Text: r.finalText(), Focus: &r.focus}
	if end.reason == ReasonPlanReady {
		done.Plan = r.focus.Plan
	}
	if end.err != nil && end.reason != ReasonCompleted && end.reason != ReasonCancelled {
		done.Error = end.err.Error()
		r.emit(Event{Type: EventError, Error: &ErrorEvent{Kind: errorKind(end), Message: end.err.Error(), Fatal: true}})
	}
	r.sessionHook(context.WithoutCancel(parent), end)
	if r.stopped {
		return
	}
	var err error
	if end.fatal {
		err = end.err
	}
	r.yield(Event{Type: EventDone, Time: r.cfg.Now(), SessionID: r.in.SessionID, RunID: r.in.RunID, Turn: r.turn, Done: done}, err)
}

func errorKind(end ending) string {
	if k := llm.KindOf(end.err); k != llm.KindUnknown {
		return k.String()
	}
	return string(end.reason)
}

// finalText is the text of the newest assistant message of this run.
func (r *run) finalText() string {
	for i := len(r.history) - 1; i >= len(r.in.History); i-- {
		if m := r.history[i]; m.Role == llm.RoleAssistant {
			return m.TextOf()
		}
	}
	return ""
}
