package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/permission"
)

// approval is a permission question put to a chat (SPEC PERM-3): its
// token names it in button data and in /approve and /deny.
type approval struct {
	token, runID, callID string
	c                    *chat
	ref                  MessageRef
	question             string
	settled              bool
	// sent: the question's send returned (ref is set when it went out).
	// A user can answer before — the platform shows the question before
	// its answer reaches the gateway —, and then owed is the outcome that
	// ask edits into the question once the send returns.
	sent bool
	owed string
}

// actionPrefix begins the data of an approval's buttons: "perm:TOKEN:once".
const actionPrefix = "perm:"

// ask puts a run's permission question to the chat: buttons where the
// platform has them, else the reply commands to type. Only the chat's
// allowed users can answer; without an answer the run's timeout denies.
func (g *Gateway) ask(ctx context.Context, c *chat, runID string, p *agent.PermissionEvent) {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	a := &approval{token: hex.EncodeToString(b), runID: runID, callID: p.CallID, c: c}
	a.question = "🔐 Allow " + toolHint(p.Tool, p.Input)[len("🔧 "):] + "?"
	if p.Reason != "" {
		a.question += "\n" + clip(p.Reason, 300)
	}
	if in := strings.TrimSpace(string(p.Input)); in != "" && in != "{}" {
		a.question += "\n" + clip(compactJSON(p.Input), 600)
	}
	m := Outgoing{ChatID: c.chatID, Text: a.question}
	if isPlanQuestion(p) {
		m = planQuestion(a, p, c.r.limits.Buttons)
		m.ChatID, a.question = c.chatID, m.Text
	} else if c.r.limits.Buttons {
		m.Buttons = []Button{
			{Label: "Allow once", Data: actionPrefix + a.token + ":once"},
			{Label: "Always allow", Data: actionPrefix + a.token + ":always"},
			{Label: "Deny", Data: actionPrefix + a.token + ":deny"},
		}
	} else {
		m.Text += fmt.Sprintf("\nReply /approve %s (or /approve %s always) or /deny %s.", a.token, a.token, a.token)
	}
	g.mu.Lock()
	g.approvals[a.token] = a
	g.mu.Unlock()
	ref, err := c.r.send(ctx, m)
	if err != nil {
		g.log.Warn("a permission question could not be sent; the run's timeout will deny it", "chat", c.key, "err", err)
	}
	g.mu.Lock()
	a.ref, a.sent = ref, true
	owed := a.owed
	g.mu.Unlock()
	if owed != "" {
		g.edited(a, ref, owed)
	}
}

// compactJSON is raw JSON on one line.
func compactJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// errNoQuestion: the token names no open question.
var errNoQuestion = errors.New("that question is already answered or has expired")

// answer settles a question for user: verdict once, always or deny.
func (g *Gateway) answer(ctx context.Context, r *route, chatID, user, token, verdict string) (string, error) {
	g.mu.Lock()
	a := g.approvals[token]
	if a == nil || a.settled || a.c.r != r || a.c.chatID != chatID {
		g.mu.Unlock()
		return "", errNoQuestion
	}
	a.settled = true
	g.mu.Unlock()
	v := permission.Verdict{Answer: permission.Answer(verdict)}
	plan := strings.HasPrefix(a.question, "📋")
	switch v.Answer {
	case permission.AnswerOnce, permission.AnswerAlways:
	case permission.AnswerDeny:
		v.Message = "the user denied it in the chat"
		if plan {
			v.Message = planSentBack
		}
	default:
		return "", fmt.Errorf("answer %q: want once, always or deny", verdict)
	}
	if err := g.cfg.Service.Answer(ctx, a.runID, a.callID, v); err != nil {
		return "", fmt.Errorf("%w (%v)", errNoQuestion, err)
	}
	outcome := map[permission.Answer]string{permission.AnswerOnce: "✅ Allowed once", permission.AnswerAlways: "✅ Always allowed",
		permission.AnswerDeny: "⛔ Denied"}[v.Answer] + " by " + user
	if plan {
		outcome = map[permission.Answer]string{permission.AnswerOnce: "✅ Plan approved (edits are confirmed)",
			permission.AnswerAlways: "✅ Plan approved (edits run)", permission.AnswerDeny: "↩️ Sent back: say what to change"}[v.Answer] + " by " + user
	}
	g.settle(ctx, a, outcome)
	return outcome, nil
}

// decided settles a question the run decided otherwise (its timeout, a
// hook): the buttons go.
func (g *Gateway) decided(ctx context.Context, runID string, p *agent.PermissionEvent) {
	if p.By == "user" {
		return // answered here; settled then
	}
	g.mu.Lock()
	var a *approval
	for _, x := range g.approvals {
		if x.runID == runID && x.callID == p.CallID && !x.settled {
			a, x.settled = x, true
		}
	}
	g.mu.Unlock()
	if a == nil {
		return
	}
	outcome := "⛔ Denied"
	if p.Decision == agent.Allow {
		outcome = "✅ Allowed"
	}
	if p.By != "" {
		outcome += " (" + string(p.By) + ")"
	}
	g.settle(ctx, a, outcome)
}

// settle edits the question into its outcome, without buttons (once
// its send returned: ask does it then).
func (g *Gateway) settle(ctx context.Context, a *approval, outcome string) {
	g.mu.Lock()
	delete(g.approvals, a.token)
	if !a.sent {
		a.owed = outcome
		g.mu.Unlock()
		return
	}
	ref := a.ref
	g.mu.Unlock()
	g.edited(a, ref, outcome)
}

// edited edits the question at ref into its outcome, in the background.
func (g *Gateway) edited(a *approval, ref MessageRef, outcome string) {
	if ref.ID == "" || !a.c.r.limits.CanEdit {
		return
	}
	g.spawn(func(ctx context.Context) {
		if err := a.c.r.edit(ctx, ref, Outgoing{ChatID: a.c.chatID, Text: a.question + "\n" + outcome}); err != nil {
			g.log.Warn("a permission question could not be updated", "chat", a.c.key, "err", err)
		}
	})
}

// dropApprovals forgets the questions of an ended run.
func (g *Gateway) dropApprovals(runID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k, a := range g.approvals {
		if a.runID == runID {
			delete(g.approvals, k)
		}
	}
}
