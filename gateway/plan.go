package gateway

import (
	"context"
	"fmt"
	"strings"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/permission"
)

// Plan mode in a chat (SPEC PERM-7): `/plan TEXT` sends TEXT as a run in
// plan mode — the model reads and plans, changes nothing, and presents the
// plan; the chat gets the plan with buttons (or reply commands): approve
// with edits confirmed (default mode), approve with edits accepted
// (accept-edits), or keep planning — the user's next message says what to
// change.

// maxPlanShown bounds the plan a chat message shows; the whole plan is in
// the session's plan file once approved.
const maxPlanShown = 3000

// planSentBack is what the model reads when a chat sends a plan back.
const planSentBack = "the user wants to keep planning and will say what to change in their next message: end your turn now"

// isPlanQuestion reports a permission question that is a plan to approve.
func isPlanQuestion(p *agent.PermissionEvent) bool { return p.Tool == permission.ExitPlanModeTool }

// planQuestion is the chat message of a plan to approve.
func planQuestion(a *approval, p *agent.PermissionEvent, buttons bool) Outgoing {
	text := "📋 Plan ready for your approval:\n\n" + clip(strings.TrimSpace(permission.PlanOf(p.Input)), maxPlanShown)
	m := Outgoing{Text: text}
	if buttons {
		m.Buttons = []Button{
			{Label: "Approve (confirm edits)", Data: actionPrefix + a.token + ":once"},
			{Label: "Approve, accept edits", Data: actionPrefix + a.token + ":always"},
			{Label: "Keep planning", Data: actionPrefix + a.token + ":deny"},
		}
	} else {
		m.Text += fmt.Sprintf("\n\nReply /approve %s (edits are confirmed), /approve %s always (edits run), or /deny %s and then say what to change.",
			a.token, a.token, a.token)
	}
	return m
}

// planCommand is /plan TEXT: TEXT becomes a run of the chat in plan mode.
// It reports whether the message was taken (false: not /plan).
func (g *Gateway) planCommand(ctx context.Context, r *route, m Inbound, text string) (bool, error) {
	cmd, arg, ok := command(text)
	if !ok || cmd != "plan" {
		return false, nil
	}
	if arg == "" {
		if fresh, err := g.cfg.State.take(ctx, r.name, m.ID, chatKey(r.name, m.ChatID), text, stateAnswered, g.cfg.Now()); err != nil || !fresh {
			return true, err
		}
		g.reply(r, m.ChatID, "Usage: /plan WHAT TO DO — I read and plan without changing anything, then show you the plan to approve.")
		return true, nil
	}
	c, err := g.chatFor(ctx, r, m.ChatID)
	if err != nil {
		return true, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	fresh, err := g.cfg.State.take(ctx, r.name, m.ID, c.key, text, stateReceived, g.cfg.Now())
	if err != nil || !fresh {
		return true, err
	}
	return true, g.submitMode(ctx, c, m.ID, arg, string(permission.ModePlan), nil)
}
