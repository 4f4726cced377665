package agent

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/reinhq/rein/permission"
)

// Gate is the [Permissions] of the permission package: a policy, an approver
// for the calls it asks about, an auditor (SPEC PERM-1 … PERM-4).
type Gate struct {
	// Policy decides; an *permission.Engine also keeps "always" answers as
	// rules when it is the RuleStore too.
	Policy permission.Policy
	// Approver answers questions; nil denies every question (headless runs).
	Approver permission.Approver
	// Rules keeps "always" answers; nil keeps none.
	Rules permission.RuleStore
	// Auditor records every call; nil records none.
	Auditor permission.Auditor
	// Timeout bounds an unanswered question (default 5 minutes).
	Timeout time.Duration
	// StopOnDeny ends the run with permission_denied when a question is
	// answered with deny (or not answered), instead of telling the model.
	StopOnDeny bool
	// Logger receives audit failures; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil uses time.Now.
	Now func() time.Time
	// Agent names the sub-agent whose calls the gate checks (AGENT-4): its
	// questions and audit records say who asks. Empty for a top run.
	Agent string
}

var _ Permissions = (*Gate)(nil)

func (g *Gate) request(c Check) permission.Request {
	return permission.Request{Tool: c.Call.Name, Origin: c.Origin, Input: c.Call.Input, Meta: c.Meta, WorkDir: c.Call.WorkDir,
		SessionDir: c.Call.SessionDir, SessionID: c.Call.SessionID, RunID: c.Call.RunID, CallID: c.Call.ID, Agent: g.Agent}
}

// Decide asks the policy.
func (g *Gate) Decide(ctx context.Context, c Check) (Verdict, error) {
	o, err := g.Policy.Decide(ctx, g.request(c))
	if err != nil {
		return Verdict{}, err
	}
	v := Verdict{Decision: Decision(o.Decision), Reason: o.Reason, UserOnly: o.UserOnly}
	if o.Rule != nil {
		v.Rule = o.Rule.String()
	}
	return v, nil
}

// Ask puts the question to the approver, waiting at most Timeout, and keeps
// an "always" answer as rules.
func (g *Gate) Ask(ctx context.Context, c Check, reason string) (Answer, error) {
	if isPlanCall(c) {
		return g.askPlan(ctx, c, reason)
	}
	if g.Approver == nil {
		return Answer{By: ByPolicy, Stop: g.StopOnDeny, Message: "no one can answer permission questions in this run; " +
			"allow the tool with --allowed-tools or a permission rule, or choose another permission mode"}, nil
	}
	req := g.request(c)
	o, err := g.Policy.Decide(ctx, req)
	if err != nil {
		return Answer{}, err
	}
	if o.Reason == "" {
		o.Reason = reason
	}
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = permission.DefaultAskTimeout
	}
	v, err := permission.Ask(ctx, g.Approver, permission.NewPrompt(req, o), timeout)
	if err != nil {
		return Answer{}, err
	}
	a := Answer{Allow: v.Answer == permission.AnswerOnce || v.Answer == permission.AnswerAlways,
		Always: v.Answer == permission.AnswerAlways, By: ByUser, Message: v.Message}
	if v.TimedOut {
		a.By = ByTimeout
	}
	if !a.Allow {
		a.Stop = g.StopOnDeny
	}
	if a.Always && g.Rules != nil {
		if err := permission.Remember(ctx, g.Rules, v); err != nil {
			g.logger().Warn("could not keep the permission rule", "tool", c.Call.Name, "err", err)
		}
	}
	return a, nil
}

// Audit writes the call's audit record.
func (g *Gate) Audit(ctx context.Context, a Audit) {
	if g.Auditor == nil {
		return
	}
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	req := g.request(a.Check)
	d := a.Decision
	if d == "" { // a caller that did not say: judge by the outcome
		d = Deny
		if a.Outcome == OutcomeOK || a.Outcome == OutcomeError || a.Outcome == OutcomeInterrupted {
			d = Allow
		}
	}
	rec := permission.NewAuditRecord(now(), req, permission.Outcome{Decision: permission.Decision(d), Reason: a.Reason})
	rec.Rule = a.Rule
	rec.Duration = time.Duration(a.DurationMS) * time.Millisecond
	rec.Outcome = auditOutcome(a.Outcome)
	rec.DecidedBy = decidedBy(a.By)
	if rec.DecidedBy == permission.DecidedByUser {
		switch {
		case d != Allow:
			rec.Answer = permission.AnswerDeny
		case a.Always:
			rec.Answer = permission.AnswerAlways
		default:
			rec.Answer = permission.AnswerOnce
		}
	}
	if err := g.Auditor.Record(ctx, rec); err != nil {
		g.logger().Warn("audit record not written", "tool", a.Check.Call.Name, "err", err)
	}
}

// decidedBy maps an [Audit]'s By onto the audit record's vocabulary; what
// is not a user, a hook or a timeout is the policy.
func decidedBy(by Decider) permission.DecidedBy {
	switch by {
	case ByUser:
		return permission.DecidedByUser
	case ByHook:
		return permission.DecidedByHook
	case ByTimeout:
		return permission.DecidedByTimeout
	}
	return permission.DecidedByPolicy
}

func auditOutcome(o ToolOutcome) permission.CallOutcome {
	switch o {
	case OutcomeOK:
		return permission.OutcomeOK
	case OutcomeDenied, OutcomeBlocked, OutcomeUnknownTool, OutcomeInvalid: // refused before it ran
		return permission.OutcomeDenied
	case OutcomeInterrupted:
		return permission.OutcomeInterrupted
	}
	return permission.OutcomeError
}

func (g *Gate) logger() *slog.Logger {
	if g.Logger != nil {
		return g.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// PlanApprover is a policy with a plan mode: the user's answer to
// exit_plan_mode switches its mode ([permission.Engine.ApprovePlan]).
type PlanApprover interface {
	ApprovePlan(a permission.Answer) (permission.Mode, error)
}

// askPlan puts a plan to the approver (SPEC PERM-7): once approves it into
// default mode, always into accept-edits — keeping no rule, so the next
// plan asks again — and deny sends it back with the user's message. With
// no approver, or no answer in time, the run ends with [ReasonPlanReady].
func (g *Gate) askPlan(ctx context.Context, c Check, reason string) (Answer, error) {
	if g.Approver == nil {
		return Answer{By: ByPolicy, End: ReasonPlanReady,
			Message: "the plan waits for the user's approval: no one can approve it in this run, which ends here"}, nil
	}
	req := g.request(c)
	prompt := permission.Prompt{Request: req, Reason: reason}
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = permission.DefaultAskTimeout
	}
	v, err := permission.Ask(ctx, g.Approver, prompt, timeout)
	if err != nil {
		return Answer{}, err
	}
	a := Answer{By: ByUser}
	if v.TimedOut {
		a.By = ByTimeout
	}
	pa, ok := g.Policy.(PlanApprover)
	switch {
	case v.TimedOut:
		a.End, a.Message = ReasonPlanReady, "nobody answered about the plan in time: the run stops at its plan, which waits for approval"
	case v.Answer == permission.AnswerDeny:
		a.Message = "the user sent the plan back; you are still in plan mode: revise the plan and present it again with exit_plan_mode"
		if fb := strings.TrimSpace(v.Message); fb != "" {
			a.Message += ". The user's feedback: " + fb
		}
	case !ok:
		a.Message = "the policy has no plan mode to leave"
	default:
		mode, err := pa.ApprovePlan(v.Answer)
		if err != nil {
			a.Message = err.Error()
			break
		}
		a.Allow, a.Mode = true, string(mode)
	}
	return a, nil
}
