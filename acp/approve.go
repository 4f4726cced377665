package acp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinhq/rein/permission"
)

// The permission options rein offers (SPEC PERM-3). Their ids are rein's
// answers, so a client's selection maps back without a table.
const (
	optOnce   = sdk.PermissionOptionId(permission.AnswerOnce)
	optAlways = sdk.PermissionOptionId(permission.AnswerAlways)
	optDeny   = sdk.PermissionOptionId(permission.AnswerDeny)
)

// approver puts a run's permission questions to the client as
// session/request_permission. An "always" answer keeps the suggested
// rules through the agent's gate, as the CLI's does; a plan's approval
// (exit_plan_mode) offers "approve, confirm each edit" (default mode) and
// "approve, accept edits".
type approver struct {
	conn      *sdk.AgentSideConnection
	sessionID string
	// stop cancels the prompt: a question answered cancelled means the
	// turn was (its session/cancel may not have been handled yet).
	stop func()
}

// Approve implements permission.Approver.
func (a approver) Approve(ctx context.Context, p permission.Prompt) (permission.Verdict, error) {
	req := sdk.RequestPermissionRequest{SessionId: sdk.SessionId(a.sessionID), ToolCall: permissionCall(p), Options: options(p)}
	resp, err := a.conn.RequestPermission(ctx, req)
	if err != nil {
		return permission.Verdict{Answer: permission.AnswerDeny, Message: "no answer"}, err
	}
	if resp.Outcome.Selected == nil {
		// The client answers cancelled when the prompt was cancelled.
		a.stop()
		return permission.Verdict{Answer: permission.AnswerDeny, Message: "the user cancelled the prompt"}, nil
	}
	switch id := resp.Outcome.Selected.OptionId; id {
	case optOnce:
		return permission.Verdict{Answer: permission.AnswerOnce}, nil
	case optAlways:
		if len(p.Suggested) == 0 && !permission.IsPlanApproval(p.Request) {
			return permission.Verdict{Answer: permission.AnswerDeny}, fmt.Errorf("the client chose %q, which was not offered", id)
		}
		return permission.Verdict{Answer: permission.AnswerAlways}, nil
	case optDeny:
		return permission.Verdict{Answer: permission.AnswerDeny, Message: "the user declined"}, nil
	default:
		return permission.Verdict{Answer: permission.AnswerDeny}, fmt.Errorf("the client chose option %q, which was not offered", id)
	}
}

// options are the answers offered for p: once, always (when the policy
// suggests rules to keep), reject.
func options(p permission.Prompt) []sdk.PermissionOption {
	if permission.IsPlanApproval(p.Request) {
		return []sdk.PermissionOption{
			{OptionId: optOnce, Kind: sdk.PermissionOptionKindAllowOnce, Name: "Approve the plan, confirm each edit"},
			{OptionId: optAlways, Kind: sdk.PermissionOptionKindAllowAlways, Name: "Approve the plan, accept edits"},
			{OptionId: optDeny, Kind: sdk.PermissionOptionKindRejectOnce, Name: "Keep planning"},
		}
	}
	opts := []sdk.PermissionOption{{OptionId: optOnce, Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow once"}}
	if len(p.Suggested) > 0 {
		rules := make([]string, len(p.Suggested))
		for i, r := range p.Suggested {
			rules[i] = r.String()
		}
		opts = append(opts, sdk.PermissionOption{OptionId: optAlways, Kind: sdk.PermissionOptionKindAllowAlways,
			Name: "Always allow " + strings.Join(rules, ", ")})
	}
	return append(opts, sdk.PermissionOption{OptionId: optDeny, Kind: sdk.PermissionOptionKindRejectOnce, Name: "Reject"})
}

// permissionCall is the tool call a question is about, as the client
// already knows it from its tool_call update, with the reason in its title.
func permissionCall(p permission.Prompt) sdk.ToolCallUpdate {
	r := p.Request
	title := callTitle(r.Tool, r.Input)
	if permission.IsPlanApproval(r) {
		title = "Approve the plan?\n\n" + strings.TrimSpace(permission.PlanOf(r.Input))
	} else if p.Reason != "" {
		title += " (" + p.Reason + ")"
	}
	kind := toolKind(r.Tool, r.Meta.Category)
	return sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(r.CallID), Title: &title, Kind: &kind, RawInput: rawJSON(r.Input)}
}
