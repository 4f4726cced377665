package permission

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinhq/rein/tool"
)

// Mode is how much a run may do without asking (SPEC PERM-1).
type Mode string

// The permission modes.
const (
	// ModeStrict asks before every tool call, reads included. Allow rules do
	// not lift it; deny rules still deny.
	ModeStrict Mode = "strict"
	// ModeDefault runs read tools inside the workspace and asks for
	// everything else.
	ModeDefault Mode = "default"
	// ModeAcceptEdits also runs file edits inside the workspace; commands,
	// network and other tools ask.
	ModeAcceptEdits Mode = "accept-edits"
	// ModeReadOnly runs only read-only tools inside the workspace and denies
	// everything else.
	ModeReadOnly Mode = "read-only"
	// ModePlan is read-only exploration before a change (SPEC PERM-7): read
	// tools inside the workspace, read-only shell commands, writes to the
	// session's plan file only; the model ends it with exit_plan_mode,
	// which the user approves into default or accept-edits mode (see
	// [Engine.ApprovePlan]) or sends back with feedback.
	ModePlan Mode = "plan"
	// ModeBypass runs everything except what deny rules and the sensitive-file
	// protection deny, and what ask rules ask about.
	ModeBypass Mode = "bypass"
)

// Modes lists the valid modes, most restrictive first.
var Modes = []Mode{ModeStrict, ModeReadOnly, ModePlan, ModeDefault, ModeAcceptEdits, ModeBypass}

// ParseMode reads a mode name. The empty string is [ModeDefault]; a few
// spellings from other tools (acceptEdits, bypassPermissions) are
// accepted too.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "default":
		return ModeDefault, nil
	case "strict":
		return ModeStrict, nil
	case "accept-edits", "accept_edits", "acceptedits":
		return ModeAcceptEdits, nil
	case "read-only", "read_only", "readonly":
		return ModeReadOnly, nil
	case "plan":
		return ModePlan, nil
	case "bypass", "bypasspermissions", "bypass-permissions":
		return ModeBypass, nil
	}
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("permission: unknown mode %q (valid modes: %s)", s, strings.Join(names, ", "))
}

// Decision is what a policy says about a call; it is also a rule's action.
type Decision string

// The decisions.
const (
	DecisionAllow Decision = "allow" // run without asking
	DecisionAsk   Decision = "ask"   // ask whoever drives the run
	DecisionDeny  Decision = "deny"  // refuse; the model is told why
)

// parseDecision reads a rule action.
func parseDecision(s string) (Decision, error) {
	switch d := Decision(strings.ToLower(strings.TrimSpace(s))); d {
	case DecisionAllow, DecisionAsk, DecisionDeny:
		return d, nil
	}
	return "", fmt.Errorf("permission: unknown action %q (valid: allow, ask, deny)", s)
}

// Request is one tool call to decide on.
type Request struct {
	// Tool is the tool's name.
	Tool string
	// Origin is where the tool comes from (built-in, action, MCP, …); rules
	// written `Action(name)` match only calls whose Origin is
	// [tool.OriginAction]. Empty is treated like a built-in.
	Origin tool.Origin
	// Input is the call's JSON input object.
	Input json.RawMessage
	// Meta is the tool's declared behaviour; its Category and ReadOnly flag
	// drive the mode defaults.
	Meta tool.Meta
	// WorkDir is the workspace root; paths outside it ask or deny. Empty
	// means the process's working directory.
	WorkDir string
	// SessionDir is the session's private directory, where its plan file
	// lives ([PlanFile]); empty when there is none.
	SessionDir string
	// SessionID, RunID and CallID identify the call for prompts and audit.
	SessionID, RunID, CallID string
	// Agent names the sub-agent making the call (SPEC AGENT-4), so a
	// question says who asks; empty for the session's own agent.
	Agent string
}

// Outcome is a policy's answer about one request.
type Outcome struct {
	// Decision is allow, ask or deny.
	Decision Decision
	// Reason says why, in words fit for the user and the model ("deny rule
	// bash(rm:*) (workspace)", "read-only mode: …").
	Reason string
	// Rule is the rule that decided, nil when a mode default or a built-in
	// protection did.
	Rule *Rule
	// UserOnly marks an ask only the user may answer: no hook's allow
	// lifts it (a shell command asking to run outside the sandbox).
	UserOnly bool `json:"user_only,omitempty"`
}

// Policy decides on tool calls. Decide must be safe for concurrent use; an
// error means the policy itself failed (the caller should deny), never that
// the call is refused.
type Policy interface {
	Decide(ctx context.Context, r Request) (Outcome, error)
}

// PolicyFunc adapts a function to [Policy].
type PolicyFunc func(ctx context.Context, r Request) (Outcome, error)

// Decide calls f.
func (f PolicyFunc) Decide(ctx context.Context, r Request) (Outcome, error) { return f(ctx, r) }
