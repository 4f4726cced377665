package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
)

// runTools runs the calls of one reply and returns their results in
// declaration order (LOOP-5, LOOP-6). Consecutive concurrency-safe calls run
// in parallel, bounded by MaxParallel; any other call runs alone. A failing
// call never stops its siblings. When ctx ends, calls not yet finished get a
// result saying they were interrupted. stop is non-empty when a permission
// answer ended the run.
func (r *run) runTools(ctx context.Context, uses []*llm.ToolUse, cut bool) (results []llm.Block, stop string) {
	results = make([]llm.Block, len(uses))
	if cut {
		for i, u := range uses {
			results[i] = errorResult(u.ID, "not run: the reply was cut at the output token limit before this call was complete; make smaller calls")
		}
		return results, ""
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, batch := range r.batches(uses) {
		if ctx.Err() != nil || stop != "" || r.stopped {
			break
		}
		for i, o := range r.runBatch(ctx, cancel, uses, batch) {
			results[batch[i]] = o.result
			r.stats.countTool(uses[batch[i]].Name, o.outcome)
			r.addSpent(o.spent)
			r.focus.observe(uses[batch[i]].Name, o.metadata, o.result.IsError)
			if o.stop != "" && stop == "" {
				stop, r.end = o.stop, o.end
			}
			if o.plan != "" {
				r.focus.Plan = o.plan
			}
		}
	}
	for i, u := range uses {
		if results[i] == nil {
			why := "not run: the run was cancelled before this call started"
			if stop != "" {
				why = "not run: " + stop
			}
			results[i] = errorResult(u.ID, why)
		}
	}
	return results, stop
}

// batches groups call indexes: a run of concurrency-safe calls forms one
// batch, every other call a batch of its own.
func (r *run) batches(uses []*llm.ToolUse) [][]int {
	var out [][]int
	for i, u := range uses {
		safe := false
		if e, ok := r.cfg.Tools.Get(u.Name); ok {
			safe = e.Meta.ConcurrencySafe
		}
		if safe && len(out) > 0 {
			if last := out[len(out)-1]; r.safe(uses[last[0]]) {
				out[len(out)-1] = append(last, i)
				continue
			}
		}
		out = append(out, []int{i})
	}
	return out
}

func (r *run) safe(u *llm.ToolUse) bool {
	e, ok := r.cfg.Tools.Get(u.Name)
	return ok && e.Meta.ConcurrencySafe
}

// outcome is what one call ended with.
type outcome struct {
	result   *llm.ToolResult
	outcome  ToolOutcome
	stop     string
	end      Reason // the run's end a permission answer asked for
	plan     string // the plan an exit_plan_mode call presented
	metadata map[string]any
	spent    *Spent // a sub-agent's usage, nil for other tools
}

// note is an event sent from a tool goroutine to the run's goroutine, which
// alone yields; done is closed once it was yielded, so a tool_start is
// delivered (and journaled) before the tool runs.
type note struct {
	ev   Event
	done chan struct{}
}

// runBatch runs the calls of one batch, in parallel when there are several,
// relaying their events through the run's goroutine.
func (r *run) runBatch(ctx context.Context, cancel context.CancelFunc, uses []*llm.ToolUse, batch []int) []outcome {
	out := make([]outcome, len(batch))
	if len(batch) == 1 {
		out[0] = r.execute(ctx, uses[batch[0]], func(e Event) {
			if !r.emit(e) {
				cancel()
			}
		})
		return out
	}
	notes := make(chan note)
	sem := make(chan struct{}, r.cfg.MaxParallel)
	var wg sync.WaitGroup
	for i, idx := range batch {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				out[i] = cancelledBeforeStart(uses[idx])
				return
			}
			defer func() { <-sem }()
			out[i] = r.execute(ctx, uses[idx], func(e Event) {
				n := note{ev: e, done: make(chan struct{})}
				notes <- n
				<-n.done
			})
		})
	}
	go func() { wg.Wait(); close(notes) }()
	for n := range notes {
		if !r.emit(n.ev) {
			cancel()
		}
		close(n.done)
	}
	return out
}

// execute passes one call through the pipeline: lookup, validation,
// pre_tool_use hooks, permission, execution, post hooks, audit. It runs on a
// tool goroutine and touches no run state except through emit.
func (r *run) execute(ctx context.Context, u *llm.ToolUse, emit func(Event)) outcome {
	call := tool.Call{ID: u.ID, Name: u.Name, Input: u.Input, SessionID: r.in.SessionID, RunID: r.in.RunID,
		WorkDir: r.in.WorkDir, SessionDir: r.in.SessionDir, Depth: r.in.Depth}
	o, res, check, v := r.gate(ctx, call, emit)
	started := r.cfg.Now() // the call's duration excludes waiting for permission
	if o == "" && ctx.Err() != nil {
		o, res = OutcomeInterrupted, tool.Errorf("not run: the run was cancelled before this call started")
	}
	var spent *Spent
	if o == "" {
		emit(Event{Type: EventToolStart, Tool: &ToolEvent{ID: u.ID, Name: u.Name, Origin: check.Origin, Input: check.Call.Input}})
		res, o, spent = r.invoke(ctx, check, emit)
		var hookStop string
		res, hookStop = r.postToolHook(ctx, check, res, o)
		if hookStop != "" && v.stop == "" {
			v.stop = hookStop
		}
		if v.context != "" {
			res.Content = append(append([]llm.Block(nil), res.Content...), &llm.Text{Text: hookContext(v.context)})
		}
	}
	dur := r.cfg.Now().Sub(started)
	if r.cfg.Permissions != nil {
		r.cfg.Permissions.Audit(context.WithoutCancel(ctx), Audit{Check: check, Decision: v.Decision, Reason: v.Reason,
			Rule: v.Rule, By: v.by, Always: v.always, Outcome: o, DurationMS: dur.Milliseconds()})
	}
	block := toResultBlock(u.ID, res)
	emit(Event{Type: EventToolEnd, Tool: &ToolEvent{ID: u.ID, Name: u.Name, Origin: check.Origin, IsError: res.IsError, Output: res.TextOf(),
		Images: countImages(res.Content), DurationMS: dur.Milliseconds(), Metadata: res.Metadata, Outcome: o}})
	return outcome{result: block, outcome: o, stop: v.stop, end: v.end, plan: v.plan, metadata: res.Metadata, spent: spent}
}

// verdict is the gate's decision on a call.
type verdict struct {
	Verdict
	by      Decider // who decided (SPEC PERM-4)
	always  bool    // the user's allow was kept as a rule
	stop    string
	end     Reason          // the run's end the answer asked for (with stop)
	plan    string          // the plan put to the user (exit_plan_mode)
	context string          // added to the result by a pre_tool_use or permission_request hook
	input   json.RawMessage // the input a permission_request hook's allow rewrote, or nil
}

// refused is the verdict on a call the harness or a hook refuses before any
// permission check.
func refused(by Decider, reason string) verdict {
	return verdict{Verdict: Verdict{Decision: Deny, Reason: reason}, by: by}
}

// deniedMessage is what the model reads about a denied call: who denied it
// (SPEC PERM-4) and why.
func deniedMessage(by Decider, reason string) string {
	msg := "permission denied"
	switch by {
	case ByUser:
		msg += " by the user"
	case ByHook:
		msg += " by a hook"
	case ByTimeout:
		msg += " because nobody answered the permission request in time"
	default:
		msg += " by the permission policy"
	}
	if reason != "" {
		msg += ": " + reason
	}
	return msg
}

// gate checks a call before it may run. A non-empty outcome means it must
// not run, and res says why.
func (r *run) gate(ctx context.Context, call tool.Call, emit func(Event)) (ToolOutcome, tool.Result, Check, verdict) {
	entry, ok := r.cfg.Tools.Get(call.Name)
	if !ok {
		msg := fmt.Sprintf("unknown tool %q", call.Name)
		if hint, deferred := r.cfg.Tools.Unloaded(call.Name); deferred {
			msg = fmt.Sprintf("the tool %q is not loaded: %s", call.Name, hint)
		} else if near := r.cfg.Tools.Closest(call.Name, 3); len(near) > 0 {
			msg += "; did you mean " + strings.Join(near, ", ") + "?"
		}
		return OutcomeUnknownTool, tool.Errorf("%s", msg), Check{Call: call}, refused(ByPolicy, msg)
	}
	check := Check{Call: call, Meta: entry.Meta, Origin: entry.Origin}
	if err := entry.Schema.Validate(call.Input); err != nil {
		msg := fmt.Sprintf("invalid input for %s: %v", call.Name, err)
		return OutcomeInvalid, tool.Errorf("%s. Fix the input and call again.", msg), check, refused(ByPolicy, msg)
	}
	th := r.preToolHook(ctx, check)
	if th.blocked != "" {
		v := refused(ByHook, "blocked by a pre_tool_use hook: "+th.blocked)
		v.stop = th.stop
		return OutcomeBlocked, tool.Errorf("blocked by a hook: %s", th.blocked), check, v
	}
	if th.input != nil {
		if err := entry.Schema.Validate(th.input); err != nil {
			msg := fmt.Sprintf("a hook rewrote the input of %s into an invalid one: %v", call.Name, err)
			return OutcomeInvalid, tool.Errorf("%s", msg), check, refused(ByHook, msg)
		}
		check.Call.Input = th.input
	}
	v := r.authorize(ctx, check, th.permission, emit)
	if v.Decision == Deny {
		msg := deniedMessage(v.by, v.Reason)
		if v.context != "" {
			msg += "\n" + hookContext(v.context)
		}
		return OutcomeDenied, tool.Errorf("%s", msg), check, v
	}
	if v.input != nil {
		if err := entry.Schema.Validate(v.input); err != nil {
			msg := fmt.Sprintf("a permission_request hook rewrote the input of %s into an invalid one: %v", call.Name, err)
			return OutcomeInvalid, tool.Errorf("%s", msg), check, refused(ByHook, msg)
		}
		check.Call.Input = v.input
	}
	v.context = joinContext(th.context, v.context)
	return "", tool.Result{}, check, v
}

// joinContext joins the context several hooks added.
func joinContext(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "\n\n")
}

// invoke runs the tool itself, turning a cancellation, a panic or a Go error
// into a result the model can read. A [Streamer] relays its events through
// emit and reports what it spent.
func (r *run) invoke(ctx context.Context, c Check, emit func(Event)) (res tool.Result, o ToolOutcome, spent *Spent) {
	entry, _ := r.cfg.Tools.Get(c.Call.Name)
	defer func() {
		if p := recover(); p != nil {
			r.cfg.Logger.Error("tool panicked", "tool", c.Call.Name, "panic", p, "stack", string(debug.Stack()))
			res, o = tool.Errorf("the tool %s crashed: %v", c.Call.Name, p), OutcomeError
		}
	}()
	var err error
	parent, limit := ctx, r.toolTimeout(c)
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, limit, errToolTimeout)
		defer cancel()
	}
	if s, ok := entry.Tool.(Streamer); ok {
		var sp Spent
		res, sp, err = s.RunStream(ctx, c.Call, emit)
		spent = &sp
	} else {
		res, err = entry.Tool.Run(ctx, c.Call)
	}
	if ctx.Err() != nil && parent.Err() == nil && errors.Is(context.Cause(ctx), errToolTimeout) {
		res, o = tool.Errorf("the call to %s timed out after %v (its per-call timeout, tools.timeouts); it may have had side effects", c.Call.Name, limit), OutcomeError
		return res, o, spent
	}
	res, o = settle(ctx, c, res, err)
	return res, o, spent
}

// errToolTimeout is the cause of a call's context when its per-call
// timeout ran out.
var errToolTimeout = errors.New("the call's time limit ran out")

// toolTimeout is the per-call timeout of c (Config.ToolTimeout), 0 for none.
func (r *run) toolTimeout(c Check) time.Duration {
	if r.cfg.ToolTimeout == nil {
		return 0
	}
	return r.cfg.ToolTimeout(c.Call.Name, c.Origin)
}

// settle turns what a tool returned into the result the model reads and
// its outcome.
func settle(ctx context.Context, c Check, res tool.Result, err error) (tool.Result, ToolOutcome) {
	switch {
	case ctx.Err() != nil:
		text := res.TextOf()
		msg := "interrupted: the call was cancelled before it finished; it may have had side effects"
		if text != "" {
			msg += "\npartial output:\n" + text
		}
		return tool.Errorf("%s", msg), OutcomeInterrupted
	case err != nil:
		return tool.Errorf("the tool %s failed: %v", c.Call.Name, err), OutcomeError
	case res.IsError:
		return res, OutcomeError
	}
	return res, OutcomeOK
}

// authorize asks the permission layer about a call.
// A pre_tool_use hook's say ("allow" or "ask") overrides the policy's allow
// or its default ask, never its deny; as in Claude Code, an allow does not
// lift an ask rule either, and no hook's allow (pre_tool_use or
// permission_request) lifts an ask only the user may answer (a command
// leaving the sandbox) or approves a plan.
func (r *run) authorize(ctx context.Context, c Check, say hook.Permission, emit func(Event)) verdict {
	p := r.cfg.Permissions
	if p == nil {
		return verdict{Verdict: Verdict{Decision: Allow}, by: ByPolicy}
	}
	v, err := p.Decide(ctx, c)
	if err != nil {
		return verdict{Verdict: Verdict{Decision: Deny, Reason: "the permission check failed: " + err.Error()}, by: ByPolicy}
	}
	plan := v.Decision == Ask && isPlanCall(c)
	switch {
	case v.Decision == Deny:
		return verdict{Verdict: v, by: ByPolicy}
	case say == hook.PermissionAllow && !plan && !v.UserOnly && (v.Decision == Allow || v.Rule == ""):
		return verdict{Verdict: Verdict{Decision: Allow, Reason: "allowed by a pre_tool_use hook"}, by: ByHook}
	case say == hook.PermissionAsk && v.Decision == Allow:
		v = Verdict{Decision: Ask, Reason: "a pre_tool_use hook asks for confirmation"}
	}
	if v.Decision != Ask {
		return verdict{Verdict: v, by: ByPolicy}
	}
	ph := r.permissionHook(ctx, c, v.Reason)
	if (plan || v.UserOnly) && ph.denied == "" {
		ph.allowed = false // a hook may refuse a plan or a sandbox exit, never approve it
	}
	if ph.denied != "" || ph.allowed {
		d, reason := Allow, firstNonEmpty(ph.reason, "allowed by a permission_request hook")
		if ph.denied != "" {
			d, reason = Deny, ph.denied
		}
		emit(Event{Type: EventPermissionDecision, Permission: &PermissionEvent{CallID: c.Call.ID, Tool: c.Call.Name, Decision: d, By: ByHook, Reason: reason}})
		return verdict{Verdict: Verdict{Decision: d, Reason: reason, Rule: v.Rule}, by: ByHook, context: ph.context, input: ph.input}
	}
	// One question at a time per run; waiting for the turn honours ctx.
	select {
	case r.asking <- struct{}{}:
	case <-ctx.Done():
		return refused(ByPolicy, "the run was cancelled before the question was asked")
	}
	var planText string
	if plan {
		planText = permission.PlanOf(c.Call.Input)
		emit(Event{Type: EventPlan, Plan: &PlanEvent{CallID: c.Call.ID, Status: PlanProposed, Plan: planText}})
	}
	emit(Event{Type: EventPermissionRequest, Permission: &PermissionEvent{CallID: c.Call.ID, Tool: c.Call.Name, Input: c.Call.Input, Reason: v.Reason,
		Suggested: suggested(c)}})
	r.notify(ctx, "rein needs your permission to run "+c.Call.Name)
	a, err := p.Ask(ctx, c, v.Reason)
	<-r.asking
	if err != nil {
		a = Answer{By: ByPolicy, Message: "could not ask for permission: " + err.Error()}
	}
	if a.By == "" {
		a.By = ByUser
	}
	out := verdict{Verdict: Verdict{Decision: Allow, Rule: v.Rule, Reason: v.Reason}, by: a.By, always: a.Allow && a.Always && !plan,
		context: ph.context, plan: planText}
	if !a.Allow {
		out.Decision, out.Reason = Deny, a.Message
		if out.Reason == "" {
			out.Reason = map[Decider]string{ByUser: "the user answered deny", ByTimeout: "no answer in time"}[a.By]
		}
		if a.Stop {
			out.stop = deniedMessage(a.By, "") + " (" + c.Call.Name + "), which stops the run"
		}
		if a.End != "" {
			out.stop, out.end = firstNonEmpty(a.Message, "the run stops here"), a.End
		}
	}
	if plan {
		emit(Event{Type: EventPlan, Plan: planAnswered(c, planText, a)})
	}
	emit(Event{Type: EventPermissionDecision, Permission: &PermissionEvent{CallID: c.Call.ID, Tool: c.Call.Name,
		Decision: out.Decision, By: a.By, Always: a.Always, Reason: out.Reason}})
	return out
}

// cancelledBeforeStart is the outcome of a call the run's end overtook
// while it waited for its turn.
func cancelledBeforeStart(u *llm.ToolUse) outcome {
	return outcome{result: errorResult(u.ID, "not run: the run was cancelled before this call started"), outcome: OutcomeInterrupted}
}

func toResultBlock(id string, res tool.Result) *llm.ToolResult {
	content := res.Content
	if len(content) == 0 {
		content = []llm.Block{&llm.Text{Text: "(no output)"}}
	}
	return &llm.ToolResult{ToolUseID: id, Content: content, IsError: res.IsError}
}

func errorResult(id, text string) *llm.ToolResult {
	return &llm.ToolResult{ToolUseID: id, Content: []llm.Block{&llm.Text{Text: text}}, IsError: true}
}

func countImages(blocks []llm.Block) int {
	n := 0
	for _, b := range blocks {
		if _, ok := b.(*llm.Image); ok {
			n++
		}
	}
	return n
}

// suggested returns the rules an "always" answer to c would keep, written
// as rules are, for the clients that show the question (SPEC PERM-3).
func suggested(c Check) []string {
	rules := permission.Suggest(permission.Request{Tool: c.Call.Name, Origin: c.Origin, Input: c.Call.Input})
	if len(rules) == 0 {
		return nil
	}
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = r.String()
	}
	return out
}
