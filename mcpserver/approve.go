package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/permission"
)

// elicitApprover answers a run's permission questions (SPEC PERM-3) and
// ask_user questions by asking the MCP client (elicitation/create), for a
// client that declared the elicitation capability.
type elicitApprover struct {
	f *flight
}

// approverFor returns the approver of a tool call's run: elicitation when
// the client supports it, nil otherwise — with no approver the configured
// mode decides and a call that would ask is denied, as in `rein run`
// without a terminal.
func approverFor(ss *mcp.ServerSession, f *flight) permission.Approver {
	if ss == nil {
		return nil
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return nil
	}
	return &elicitApprover{f: f}
}

// maxShown bounds the tool input shown in a question.
const maxShown = 2000

// Approve implements permission.Approver: accept runs the call (always,
// when the form's "always" box is ticked and there is a rule to keep),
// decline and cancel deny it.
func (a *elicitApprover) Approve(ctx context.Context, p permission.Prompt) (permission.Verdict, error) {
	who := p.Request.Tool
	if p.Request.Agent != "" {
		who = "agent " + p.Request.Agent + ": " + who
	}
	var msg strings.Builder
	fmt.Fprintf(&msg, "rein wants to run %s", who)
	if in := strings.TrimSpace(string(p.Request.Input)); in != "" && in != "{}" {
		fmt.Fprintf(&msg, ": %s", clip(in, maxShown))
	}
	if p.Reason != "" {
		fmt.Fprintf(&msg, "\n(%s)", p.Reason)
	}
	msg.WriteString("\nAccept to allow it, decline to refuse it.")
	props := map[string]any{}
	if len(p.Suggested) > 0 {
		rules := make([]string, 0, len(p.Suggested))
		for _, r := range p.Suggested {
			rules = append(rules, r.String())
		}
		props["always"] = map[string]any{"type": "boolean", "default": false,
			"title":       "Always allow " + strings.Join(rules, ", "),
			"description": "Keep the rule, so calls like this one run without asking from now on."}
	}
	res, err := a.f.elicit(ctx, &mcp.ElicitParams{Message: msg.String(),
		RequestedSchema: map[string]any{"type": "object", "properties": props}})
	if err != nil {
		return permission.Verdict{Answer: permission.AnswerDeny, Message: "the MCP client did not answer the permission question"}, fmt.Errorf("asking the MCP client: %w", err)
	}
	if res.Action != "accept" {
		return permission.Verdict{Answer: permission.AnswerDeny, Message: "the user declined"}, nil
	}
	if always, _ := res.Content["always"].(bool); always && len(p.Suggested) > 0 {
		return permission.Verdict{Answer: permission.AnswerAlways}, nil
	}
	return permission.Verdict{Answer: permission.AnswerOnce}, nil
}

// Ask implements builtin.Asker for ask_user: the question as a form with
// one field, a choice among the options when there are some.
func (a *elicitApprover) Ask(ctx context.Context, question string, options []string) (string, error) {
	field := map[string]any{"type": "string", "title": "Answer"}
	if len(options) > 0 {
		field["enum"] = options
	}
	res, err := a.f.elicit(ctx, &mcp.ElicitParams{Message: question,
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"answer": field}, "required": []string{"answer"}}})
	if err != nil {
		return "", fmt.Errorf("asking the MCP client: %w", err)
	}
	if res.Action != "accept" {
		return "", fmt.Errorf("the user did not answer (%s)", res.Action)
	}
	s, _ := res.Content["answer"].(string)
	return s, nil
}

// clip cuts s to at most n bytes, dropping a rune cut in two.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
