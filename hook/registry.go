package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// FailurePolicy says what a failing hook means.
type FailurePolicy string

// The failure policies.
const (
	// FailSkip logs and skips a hook that crashes, hangs or answers nonsense.
	FailSkip FailurePolicy = "skip"
	// FailBlock turns such a failure into a block: for guards that must
	// fail closed.
	FailBlock FailurePolicy = "block"
)

// Registration is a hook bound to an event.
type Registration struct {
	// Name identifies the hook in logs and audit; empty gets a generated one.
	Name  string
	Event Event
	// Matcher selects by tool name on tool events (by source on
	// session_start, trigger on compaction, agent type on sub-agent
	// events): "" or "*" for all, an exact name, or a regular expression
	// matched against the whole name. Claude Code's tool names (Bash, Read)
	// match rein's tools too. Events without a subject ignore it.
	Matcher string
	// Priority orders the hooks of an event, lower first; ties keep the
	// registration order.
	Priority int
	// Timeout bounds one run; zero means the registry's default.
	Timeout time.Duration
	// OnFailure is FailSkip (the default) or FailBlock.
	OnFailure FailurePolicy
	Hook      Hook
}

// Record is one audited hook run (SPEC HOOK-3).
type Record struct {
	Time      time.Time     `json:"time"`
	Hook      string        `json:"hook"`
	Event     Event         `json:"event"`
	Tool      string        `json:"tool,omitempty"`
	SessionID string        `json:"session_id,omitempty"`
	RunID     string        `json:"run_id,omitempty"`
	Duration  time.Duration `json:"duration_ns"`
	// Outcome says how the run ended.
	Outcome RunOutcome `json:"outcome"`
	Error   string     `json:"error,omitempty"`
}

// RunOutcome says how one hook run ended, in its [Record] (SPEC HOOK-3).
type RunOutcome string

// The hook run outcomes.
const (
	RunContinue      RunOutcome = "continue"       // the hook let things go on
	RunBlock         RunOutcome = "block"          // the hook blocked what was about to happen
	RunForceContinue RunOutcome = "force_continue" // the hook kept a stopping run going
	RunStop          RunOutcome = "stop"           // the hook ended the run
	RunError         RunOutcome = "error"          // the hook failed
	RunTimeout       RunOutcome = "timeout"        // the hook ran out of time
	RunInterrupted   RunOutcome = "interrupted"    // the caller's context ended while the hook ran
)

// Auditor keeps hook run records. Record must be safe for concurrent use.
type Auditor interface {
	Record(ctx context.Context, r Record) error
}

// AuditFunc adapts a function to [Auditor].
type AuditFunc func(ctx context.Context, r Record) error

// Record calls f.
func (f AuditFunc) Record(ctx context.Context, r Record) error { return f(ctx, r) }

// Options configure a registry. The zero value is usable.
type Options struct {
	// Logger receives failures; nil discards them.
	Logger *slog.Logger
	// Auditor receives a record of every hook run; nil keeps none.
	Auditor Auditor
	// DefaultTimeout bounds hooks without their own; zero means
	// [DefaultTimeout].
	DefaultTimeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Registry holds the hooks of every event and fires them. It is safe for
// concurrent use.
type Registry struct {
	opts  Options
	mu    sync.RWMutex
	hooks map[Event][]*entry
	n     int
}

type entry struct {
	Registration
	seq int
	re  *regexp.Regexp // nil: exact or all
}

// NewRegistry returns an empty registry.
func NewRegistry(opts Options) *Registry {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = DefaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Registry{opts: opts, hooks: map[Event][]*entry{}}
}

// Register adds hooks. An unknown event, a bad matcher or a missing hook is
// an error and nothing is added.
func (r *Registry) Register(regs ...Registration) error {
	add := make([]*entry, 0, len(regs))
	for _, reg := range regs {
		if !slices.Contains(Events, reg.Event) {
			return fmt.Errorf("hook: register: unknown event %q", reg.Event)
		}
		if reg.Hook == nil {
			return fmt.Errorf("hook: register %s: no hook", reg.Event)
		}
		switch reg.OnFailure {
		case "":
			reg.OnFailure = FailSkip
		case FailSkip, FailBlock:
		default:
			return fmt.Errorf("hook: register %s: on_failure %q (want skip or block)", reg.Event, reg.OnFailure)
		}
		e := &entry{Registration: reg}
		m := strings.TrimSpace(reg.Matcher)
		if m != "" && m != "*" && regexp.QuoteMeta(m) != m {
			re, err := regexp.Compile("^(?:" + m + ")$")
			if err != nil {
				return fmt.Errorf("hook: register %s: matcher %q: %v", reg.Event, m, err)
			}
			e.re = re
		}
		e.Matcher = m
		add = append(add, e)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range add {
		r.n++
		e.seq = r.n
		if e.Name == "" {
			e.Name = fmt.Sprintf("%s#%d", e.Event, e.seq)
		}
		list := append(r.hooks[e.Event], e)
		slices.SortStableFunc(list, func(a, b *entry) int {
			if a.Priority != b.Priority {
				return a.Priority - b.Priority
			}
			return a.seq - b.seq
		})
		r.hooks[e.Event] = list
	}
	return nil
}

// Has reports whether any hook is registered for the event, so the caller
// can skip building an input nobody reads.
func (r *Registry) Has(ev Event) bool {
	if r == nil {
		return false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.hooks[ev]) > 0
}

// matches reports whether the entry's matcher selects the input.
func (e *entry) matches(in Input) bool {
	subject, has := in.subject()
	if !has || e.Matcher == "" || e.Matcher == "*" {
		return true
	}
	names := []string{subject}
	if alias, ok := claudeToolOf[subject]; ok {
		names = append(names, alias)
	}
	for _, n := range names {
		if e.re != nil && e.re.MatchString(n) {
			return true
		}
		if e.re == nil && (n == e.Matcher || claudeTools[e.Matcher] == n) {
			return true
		}
	}
	return false
}

// Fire runs the hooks of an event that match the input, in priority order,
// and merges their outcomes: the first block (or stop) wins and ends the
// chain; an updated input is what the next hook sees; contexts and system
// messages add up. A hook that fails is logged and skipped, unless it was
// registered with FailBlock. The error is non-nil only when ctx ends.
func (r *Registry) Fire(ctx context.Context, ev Event, in Input) (Outcome, error) {
	if r == nil {
		return Outcome{}, nil
	}
	in.Event = ev
	r.mu.RLock()
	list := r.hooks[ev]
	r.mu.RUnlock()
	var out Outcome
	for _, e := range list {
		if !e.matches(in) {
			continue
		}
		o, err := r.runOne(ctx, e, in)
		if err != nil {
			return out, err
		}
		if !ev.CanBlock() && o.Blocked() {
			// Observers cannot block: the reason is a note for the user.
			o.SystemMessage = joinLines(o.SystemMessage, o.Reason)
			o.Decision, o.Reason = "", ""
		}
		out = merge(out, o)
		in = applyUpdate(in, o.UpdatedInput)
		if out.Blocked() || out.Stop {
			break
		}
	}
	return out, nil
}

// runOne runs a hook with its timeout, recovers a panic, logs and audits.
func (r *Registry) runOne(ctx context.Context, e *entry, in Input) (Outcome, error) {
	timeout := e.Timeout
	if timeout <= 0 {
		timeout = r.opts.DefaultTimeout
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	start := r.opts.Now()
	o, err := safeRun(hctx, e.Hook, in)
	timedOut := err != nil && errors.Is(hctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()
	rec := Record{Time: start, Hook: e.Name, Event: in.Event, Tool: in.ToolName, SessionID: in.SessionID,
		RunID: in.RunID, Duration: r.opts.Now().Sub(start), Outcome: outcomeLabel(o)}
	if ctx.Err() != nil {
		rec.Outcome, rec.Error = RunInterrupted, ctx.Err().Error()
		r.audit(ctx, rec)
		return Outcome{}, ctx.Err()
	}
	if timedOut && !errors.Is(err, ErrTimeout) {
		err = fmt.Errorf("%w after %s", ErrTimeout, timeout)
	}
	if err == nil {
		r.audit(ctx, rec)
		return o, nil
	}
	rec.Outcome, rec.Error = RunError, err.Error()
	if timedOut || errors.Is(err, ErrTimeout) {
		rec.Outcome = RunTimeout
	}
	r.audit(ctx, rec)
	log := r.opts.Logger.With("hook", e.Name, "event", string(in.Event), "tool", in.ToolName,
		"session_id", in.SessionID, "run_id", in.RunID, "error", err.Error())
	if e.OnFailure != FailBlock {
		log.WarnContext(ctx, "hook failed; skipped")
		return Outcome{}, nil
	}
	log.ErrorContext(ctx, "hook failed; blocking (on_failure: block)")
	reason := fmt.Sprintf("hook %s failed (%v); it is a guard that blocks when it fails", e.Name, err)
	return block(in.Event, Outcome{}, reason), nil
}

// safeRun runs a hook, turning a panic into an error, and gives up on a
// hook that ignores its context: the registry never waits past the timeout.
func safeRun(ctx context.Context, h Hook, in Input) (Outcome, error) {
	type result struct {
		o   Outcome
		err error
	}
	ch := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- result{err: fmt.Errorf("hook panicked: %v", p)}
			}
		}()
		o, err := h.Run(ctx, in)
		ch <- result{o, err}
	}()
	select {
	case r := <-ch:
		return r.o, r.err
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
}

func (r *Registry) audit(ctx context.Context, rec Record) {
	if r.opts.Auditor == nil {
		return
	}
	if err := r.opts.Auditor.Record(context.WithoutCancel(ctx), rec); err != nil {
		r.opts.Logger.WarnContext(ctx, "hook audit failed", "hook", rec.Hook, "error", err.Error())
	}
}

func outcomeLabel(o Outcome) RunOutcome {
	switch {
	case o.Stop:
		return RunStop
	case o.Blocked():
		return RunBlock
	case o.ForceContinue:
		return RunForceContinue
	}
	return RunContinue
}

// merge folds the next hook's outcome into the merged one.
func merge(acc, o Outcome) Outcome {
	if o.Blocked() {
		acc.Decision, acc.Reason = DecisionBlock, o.Reason
	} else if o.Reason != "" && !acc.Blocked() {
		acc.Reason = joinLines(acc.Reason, o.Reason)
	}
	if len(o.UpdatedInput) > 0 {
		acc.UpdatedInput = o.UpdatedInput
	}
	acc.AdditionalContext = joinLines(acc.AdditionalContext, o.AdditionalContext)
	acc.SystemMessage = joinLines(acc.SystemMessage, o.SystemMessage)
	acc.ForceContinue = acc.ForceContinue || o.ForceContinue
	acc.SuppressOutput = acc.SuppressOutput || o.SuppressOutput
	if o.Permission == PermissionAsk || (o.Permission == PermissionAllow && acc.Permission == "") {
		acc.Permission = o.Permission
	}
	if o.Stop && !acc.Stop {
		acc.Stop, acc.StopReason = true, o.StopReason
	}
	return acc
}

// applyUpdate gives the next hook the input the previous one rewrote.
func applyUpdate(in Input, upd json.RawMessage) Input {
	if len(upd) == 0 {
		return in
	}
	switch in.Event {
	case PreToolUse, PermissionRequest, PostToolUse, PostToolError:
		in.ToolInput = upd
	case UserPromptSubmit:
		var s string
		if json.Unmarshal(upd, &s) == nil {
			in.Prompt = s
		}
	case PreModelRequest:
		in.Request = upd
	}
	return in
}

func joinLines(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}
