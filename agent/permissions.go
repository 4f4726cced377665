package agent

import (
	"context"

	"github.com/reinhq/rein/tool"
)

// Permissions decides whether a tool call may run (SPEC PERM-1 … PERM-4).
// It must be safe for concurrent use: read-only tools are checked in parallel.
// The loop serialises the Ask calls of a run, so one question per run is
// open at a time; runs of different sessions may ask at once.
type Permissions interface {
	// Decide returns the policy's verdict on a call, without asking anyone.
	Decide(ctx context.Context, c Check) (Verdict, error)
	// Ask puts the question to whoever drives the run and waits for the
	// answer; an unanswered question (its timeout passed) is a deny.
	Ask(ctx context.Context, c Check, reason string) (Answer, error)
	// Audit records what happened to a call (SPEC PERM-4).
	Audit(ctx context.Context, a Audit)
}

// Check is a tool call awaiting permission.
type Check struct {
	Call   tool.Call
	Meta   tool.Meta
	Origin tool.Origin
}

// Decision is a policy's verdict.
type Decision string

// The verdicts of a policy.
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// Decider says who made a permission decision (SPEC PERM-4). Its values
// are the "by" of a permission_decision event and match the audit record's
// decided_by ([permission.DecidedBy]).
type Decider string

// Who decides.
const (
	ByPolicy  Decider = "policy"  // modes, rules, built-in protections, the harness's own checks
	ByUser    Decider = "user"    // whoever drives the run answered a question
	ByHook    Decider = "hook"    // a pre_tool_use or permission_request hook
	ByTimeout Decider = "timeout" // nobody answered a question in time: deny
)

// Verdict is a policy's decision with its reason (shown to the model on a
// deny, to the user on an ask).
type Verdict struct {
	Decision Decision
	Reason   string
	// Rule is the rule that decided, if one did ("bash(git diff:*)").
	Rule string
	// UserOnly marks an ask only whoever drives the run may answer: no
	// hook's allow lifts it (a command asking to leave the sandbox).
	UserOnly bool
}

// Answer is what whoever drives the run answered.
type Answer struct {
	Allow bool
	// Always: the answer was persisted as a rule.
	Always bool
	// Stop: deny and end the run (ReasonPermissionDenied).
	Stop bool
	// By says who answered: [ByUser], [ByTimeout] (nobody answered in
	// time) or [ByPolicy] (no one can answer in this run, or asking
	// failed). Empty means [ByUser].
	By Decider
	// Message is passed to the model with a deny.
	Message string
	// End: deny and end the run with this reason (ReasonPlanReady: a plan
	// nobody can approve in this run).
	End Reason
	// Mode is the permission mode an approved plan switched to (PERM-7).
	Mode string
}

// Audit is the record of one tool call (SPEC PERM-4).
type Audit struct {
	Check    Check
	Decision Decision
	Reason   string
	Rule     string
	// By says who decided: [ByPolicy], [ByUser], [ByTimeout], [ByHook].
	// Calls the harness refuses before any check (an unknown tool, an
	// invalid input) are denied by the policy; calls a pre_tool_use hook
	// blocks, by the hook.
	By Decider
	// Always is set when the user's allow was kept as a rule.
	Always bool
	// Outcome is the tool_end outcome.
	Outcome    ToolOutcome
	DurationMS int64
}
